package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// Runner runs plans against a store.
type Runner struct {
	Log      eventlog.Log    // where the run records its events
	Blobs    artifacts.Store // where its outputs and checkpoints go
	Dir      string          // where it publishes its progress (eventlog.Snapshot); "" for nowhere
	Stages   []stages.Stage  // the stages every cell runs, in order
	Engines  Engines         // what computes the cells' numbers, built with Stages
	Data     *datasets.Library
	Progress io.Writer // human progress lines (stderr); nil for none
	// Until, when set, names the last stage to run in each cell; the cell
	// stays incomplete and a later run without Until finishes it.
	Until string
	// Cohort is how many GPU cells that share their shapes train at once,
	// in one device program (Engines.NewCohort); 0 sizes cohorts to the
	// device's memory (Engines.CohortSize).
	Cohort int
	// Jobs is how many cells that train on their own (not in a GPU
	// cohort) run at once, each engine on its share of the cores; results
	// do not depend on it. 0 or 1: one after another.
	Jobs int
	// Cells, when set, are the plan's cells to run (indices), in plan
	// order; the others are left alone.
	Cells []int
	// OtherEngine says what Register does with cells that have results
	// recorded under other cell inputs than this machine's (another
	// engine or data; state.Source.OtherResults): "" refuses (ErrOtherEngine),
	// "use" keeps those results, "recompute" computes the cells again.
	OtherEngine string
	// Overrides are what the run changed from the manifest file, recorded
	// with its registration to show (Registration.Overrides).
	Overrides []string
	// Fleet, when set, shares the run with other machines (package
	// fleet, through S3): the registration is pinned there, and each cell
	// runs between its hooks.
	Fleet Fleet
	// RecomputeImported computes again the cells imported from results
	// directories (ump import), as ump reproduce does; without it such a
	// cell, finished, is taken as it is.
	RecomputeImported bool
	// Counted, when set, is told each time rounds of a cell are accounted
	// for: rounds more of cell c, computed here or found done (cached, or
	// resumed from a checkpoint). It is called from the running cells'
	// goroutines, one call at a time.
	Counted func(c *manifests.Cell, rounds int, computed bool)
}

// Engines is what the runner asks of the engines that compute cells'
// numbers, beside the stages that run on them: the composition root
// (cmd/ump) builds both (engines.Set), so that the runner links no
// engine.
type Engines interface {
	// Name identifies the code that computes a cell's numbers; it enters
	// the cell key.
	Name(cfg *manifests.Manifest) (string, error)
	// Kernels names the kernels this machine runs, for a cell's
	// fingerprint (never its key).
	Kernels() string
	// Check refuses, before any cell's data loads, a cell the engines
	// cannot run.
	Check(cfg *manifests.Manifest) error
	// MemoryNeed estimates a cell's peak memory in bytes and names the
	// manifest field that drives the estimate.
	MemoryNeed(cfg *manifests.Manifest, data *datasets.Library) (need float64, field string, err error)
	// CohortKey is what cells must share to train in one device cohort,
	// or "" for a cell that trains on its own.
	CohortKey(cfg *manifests.Manifest) string
	// CohortSize is how many cells of cfg's shape one cohort holds.
	CohortSize(cfg *manifests.Manifest, data *datasets.Library) int
	// NewCohort returns cohorts of size cells.
	NewCohort(size int) stages.Cohort
}

// Fleet is how a run is shared with other machines: Pin records a
// registration (its event and every cell's inputs) where they see it,
// before the store does; Cell gives the hooks of one cell.
type Fleet interface {
	Pin(ctx context.Context, ev *eventlog.Event, reg *state.Registration, inputs []string) error
	Cell(c *CellRun) CellHooks
}

// CellRun is one cell of a run, as its hooks see it.
type CellRun struct {
	Plan *manifests.Plan
	Cell *manifests.Cell
	Key  string
	Log  eventlog.Log // the run's store
	// Check checks events of the cell from elsewhere against its key and
	// its stages (CheckCell).
	Check func(evs []eventlog.Event) error
	// Say prints a progress line of the cell.
	Say func(format string, args ...any)
}

// CellHooks are what happens beside a cell's stage loop: nothing when the
// run is its store's alone (noHooks), else its Fleet's. Start runs before
// the first stage, Recorded after each event the cell records, Finish
// once the cell has its status.
type CellHooks interface {
	Start(ctx context.Context) error
	Recorded(ctx context.Context, ev *eventlog.Event) error
	Finish(ctx context.Context, status string) error
}

type noHooks struct{}

func (noHooks) Start(context.Context) error                     { return nil }
func (noHooks) Recorded(context.Context, *eventlog.Event) error { return nil }
func (noHooks) Finish(context.Context, string) error            { return nil }

// hooks are a cell's: its Fleet's when the run has one.
func (r *Runner) hooks(plan *manifests.Plan, cell *manifests.Cell, key string, p *progress) CellHooks {
	if r.Fleet == nil {
		return noHooks{}
	}
	return r.Fleet.Cell(&CellRun{Plan: plan, Cell: cell, Key: key, Log: r.Log,
		Check: func(evs []eventlog.Event) error { return CheckCell(key, cell, evs, r.Stages, r.Data) },
		Say:   func(format string, args ...any) { p.cellf(cell, format, args...) }})
}

// source is what the runner reads back: its log and blobs.
func (r *Runner) source() state.Source {
	return state.Source{Dir: r.Dir, Events: r.Log, Blobs: r.Blobs}
}

// Outcome counts the cells of a run by final status.
type Outcome struct {
	Cells, Completed, Diverged, Failed, Cached int
	Stopped                                    int // cells that ran up to Until
}

// ErrOtherEngine is returned (wrapped) by Register when cells of the
// manifest have results under another engine and Runner.OtherEngine does
// not say what to do with them.
var ErrOtherEngine = errors.New("results recorded under another engine")

// quoted quotes each string.
func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// ErrInterrupted is returned by Run when its context was cancelled; the
// store is consistent and the same command resumes.
var ErrInterrupted = errors.New("interrupted")

// cellKey is the hash of the cell's spec and its inputs (cellInputs).
func cellKey(c *manifests.Cell, inputs string) string {
	sum := sha256.Sum256([]byte(string(c.Spec()) + "\n" + inputs))
	return hex.EncodeToString(sum[:])
}

// cellInputs is what a cell's results depend on beyond its spec: the
// content digest of its data and the engine that computes it.
func cellInputs(cfg *manifests.Manifest, data *datasets.Library, engines Engines) (string, error) {
	digest, err := datasetDigest(cfg, data)
	if err != nil {
		return "", err
	}
	engine, err := engines.Name(cfg)
	if err != nil {
		return "", err
	}
	return digest + "\n" + engine, nil
}

// datasetDigest identifies the content of a cell's data; it enters the
// cell key.
func datasetDigest(cfg *manifests.Manifest, lib *datasets.Library) (string, error) {
	if q := cfg.Task.Quadratic; !cfg.Task.Kind().Samples {
		return datasets.QuadraticDigest(cfg.Workers, q.Dim, q.Zeta, q.Kappa), nil
	}
	d, err := stages.LoadData(cfg.Task, lib)
	if err != nil {
		return "", err
	}
	return d.Digest, nil
}

// stageKeys are a stage's cache key for a cell (stageKey of its params)
// and its former key (of its stages.FormerlyKeyed params; "" for none), under
// which an earlier ump recorded the same bits.
func stageKeys(
	st stages.Stage,
	cfg *manifests.Manifest,
	inputs string,
	upstream map[string]*stages.Result,
) (key, former string) {
	key = stageKey(st, st.Params(cfg), inputs, upstream)
	if params := st.FormerParams(cfg); params != nil {
		former = stageKey(st, params, inputs, upstream)
	}
	return key, former
}

// stageKey hashes a stage's identity, its params (canonical JSON), the
// cell's inputs and every upstream output (a superset of the ones it
// reads).
func stageKey(st stages.Stage, params json.RawMessage, inputs string, upstream map[string]*stages.Result) string {
	ups := map[string]map[string]string{}
	for name, r := range upstream {
		ups[name] = map[string]string{}
		for out, ref := range r.Outputs {
			ups[name][out] = ref.Digest
		}
	}
	sum := sha256.Sum256(manifests.CanonicalJSON(map[string]any{
		"stage": st.Name(), "version": st.Version(), "params": params, "inputs": inputs, "upstream": ups}))
	return hex.EncodeToString(sum[:])
}

// declared returns the upstream results a stage declares it reads, each
// with those outputs only.
func declared(st stages.Stage, upstream map[string]*stages.Result) map[string]*stages.Result {
	out := map[string]*stages.Result{}
	for _, in := range st.Inputs() {
		up, ok := upstream[in.Stage]
		if !ok {
			continue // ReadTable says the stage has not run
		}
		if out[in.Stage] == nil {
			out[in.Stage] = &stages.Result{
				Outputs:  map[string]artifacts.Ref{},
				Summary:  up.Summary,
				Diverged: up.Diverged,
			}
		}
		if ref, ok := up.Outputs[in.Name]; ok {
			out[in.Stage].Outputs[in.Name] = ref
		}
	}
	return out
}

// checkOutputs refuses a result with an output the stage does not
// declare.
func checkOutputs(st stages.Stage, res *stages.Result) error {
	for name := range res.Outputs {
		if !slices.Contains(st.Outputs(), stages.Output{Stage: st.Name(), Name: name}) {
			return fmt.Errorf(
				"stage %s returned output %q, which it does not declare (it declares %v)",
				st.Name(),
				name,
				st.Outputs(),
			)
		}
	}
	return nil
}

// inputs lists upstream outputs as "stage/output=digest", sorted.
func inputs(upstream map[string]*stages.Result) []string {
	var in []string
	for name, r := range upstream {
		for out, ref := range r.Outputs {
			in = append(in, name+"/"+out+"="+ref.Digest)
		}
	}
	sort.Strings(in)
	return in
}

// Register records the plan (once per hash and set of cell keys) and
// returns its cell keys.
func (r *Runner) Register(ctx context.Context, plan *manifests.Plan) (*state.Registration, error) {
	reg := &state.Registration{Plan: *plan, Overrides: r.Overrides}
	keys, all, err := r.keys(ctx, plan, true)
	if err != nil {
		return nil, err
	}
	reg.CellKeys = keys
	other, engines, err := r.source().OtherResults(plan.Hash, reg.CellKeys)
	if err != nil {
		return nil, err
	}
	if len(other) > 0 {
		switch r.OtherEngine {
		case "use":
			for i, key := range other {
				reg.CellKeys[i] = key
			}
		case "recompute":
		default:
			engine, _ := r.Engines.Name(&plan.Cells[slices.Sorted(maps.Keys(other))[0]].Config)
			return nil, fmt.Errorf(
				"%w: %d of the manifest's %d cells have results recorded under engine %s, and this machine computes "+
					"with %s "+
					"(or with other data: a cell's key holds the engine and the data it ran on). Rerun with "+
					"--other-engine use to keep those results (cells without one then run here), "+
					"or --other-engine recompute to compute them again here (the recorded results stay in the store)",
				ErrOtherEngine,
				len(other),
				len(plan.Cells),
				strings.Join(quoted(engines), " and "),
				strconv.Quote(engine),
			)
		}
	}
	ev := reg.Event()
	if r.Fleet != nil {
		ev.Time = time.Now().UTC()
		if err := r.Fleet.Pin(ctx, ev, reg, all); err != nil {
			return nil, err
		}
	}
	evs, err := r.Log.ByManifest(plan.Hash)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == eventlog.ManifestForgotten { // registered again, it is listed again
			break
		}
		if evs[i].Kind == eventlog.ManifestRegistered {
			if string(evs[i].Payload) == string(ev.Payload) {
				return reg, nil
			}
			break
		}
	}
	return reg, r.Log.Append(ev)
}

// Keys are the plan's cell keys on this machine: each cell's spec with the
// digest of its data and the engine that would compute it here. Where
// they are the keys a store or a results directory records, this machine
// computes those cells under the same inputs.
func (r *Runner) Keys(ctx context.Context, plan *manifests.Plan) ([]string, error) {
	keys, _, err := r.keys(ctx, plan, false)
	return keys, err
}

// keys are the plan's cell keys and each cell's inputs (cellInputs),
// after checking that the engines can run each cell and, with fits, that
// it fits in the machine's memory.
func (r *Runner) keys(ctx context.Context, plan *manifests.Plan, fits bool) (keys, inputs []string, err error) {
	var memory int64
	if fits {
		memory = machineMemory()
	}
	for i := range plan.Cells { // what the engines cannot run, before any cell's data loads
		if err := r.Engines.Check(&plan.Cells[i].Config); err != nil {
			return nil, nil, fmt.Errorf("cell %d (%s): %w", i+1, plan.Cells[i].LabelString(), err)
		}
	}
	for i := range plan.Cells {
		if ctx.Err() != nil {
			return nil, nil, ErrInterrupted
		}
		cfg := &plan.Cells[i].Config
		var in string
		if fits {
			err = checkGeneratedData(cfg, memory) // before the data are generated for the cell's key
		}
		if err == nil {
			in, err = cellInputs(cfg, r.Data, r.Engines)
		}
		if err == nil && fits {
			err = checkMemory(cfg, r.Data, r.Engines, memory)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("cell %d (%s): %w", i+1, plan.Cells[i].LabelString(), err)
		}
		keys = append(keys, cellKey(&plan.Cells[i], in))
		inputs = append(inputs, in)
	}
	return keys, inputs, nil
}

// Run runs every cell of the plan in plan order, except GPU cells that
// share their shapes: at the first of them, all of them run, Cohort at a
// time, with their training in one device program. It returns
// ErrInterrupted (wrapped) when ctx is cancelled, after the running stages
// reached a safe point.
func (r *Runner) Run(ctx context.Context, plan *manifests.Plan) (Outcome, error) {
	if err := CheckUntil(r.Stages, r.Until); err != nil {
		return Outcome{}, err
	}
	reg, err := r.Register(ctx, plan)
	if err != nil {
		return Outcome{}, err
	}
	todo := r.Cells
	if todo == nil {
		todo = make([]int, len(plan.Cells))
		for i := range todo {
			todo[i] = i
		}
	}
	p := newProgress(r.Progress, r.Dir, plan, todo, r.Counted)
	defer p.finish()
	out := Outcome{Cells: len(todo)}
	groups := map[string][]int{} // cohort key -> its cells, in plan order
	var alone []int              // cells that train on their own (not in a GPU cohort)
	for _, i := range todo {
		if key := r.Engines.CohortKey(&plan.Cells[i].Config); key != "" {
			groups[key] = append(groups[key], i)
		} else {
			alone = append(alone, i)
		}
	}
	for _, i := range todo {
		key := r.Engines.CohortKey(&plan.Cells[i].Config)
		cells, size := []int{i}, 1
		switch {
		case key == "" && r.Jobs > 1:
			if alone[0] != i {
				continue // ran with the first of them
			}
			cells, size = alone, min(r.Jobs, len(alone))
			p.printf("%d cells, %d at a time\n", len(cells), size)
		case key != "":
			if cells = groups[key]; cells[0] != i {
				continue // ran with the first of its group
			}
			size = r.Cohort
			if size <= 0 {
				size = r.Engines.CohortSize(&plan.Cells[i].Config, r.Data)
			}
			size = min(size, len(cells))
			p.printf("%d cells (%s): cohorts of %d on the GPU\n", len(cells), key, size)
		}
		if err := r.runCells(ctx, reg, cells, size, p, &out); err != nil {
			if errors.Is(err, ErrInterrupted) {
				p.state("interrupted")
			} else {
				p.state("failed")
			}
			return out, err
		}
	}
	p.state("finished")
	return out, nil
}

// runCells runs the plan's cells (indices: all of one GPU cohort shape,
// or all training alone), size at a time (in one cohort when they share
// its shape), counting them into out. It stops taking cells at the
// first error and returns it once the running cells have stopped.
func (r *Runner) runCells(
	ctx context.Context,
	reg *state.Registration,
	cells []int,
	size int,
	p *progress,
	out *Outcome,
) error {
	plan := &reg.Plan
	var cohort stages.Cohort // a GPU cohort's; cells that train alone need none
	if r.Engines.CohortKey(&plan.Cells[cells[0]].Config) != "" {
		cohort = r.Engines.NewCohort(size)
	}
	p.setConcurrent(size > 1)
	procs := 0 // a CPU engine's goroutines: all cores, or its share of them
	if size > 1 {
		procs = max(1, runtime.GOMAXPROCS(0)/size)
	}
	var mu sync.Mutex
	next := 0
	var first error
	var stopped []*interruptedCell // every cell an interrupt stopped (several with -j)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(cells) || first != nil || ctx.Err() != nil {
			return 0, false
		}
		next++
		return cells[next-1], true
	}
	var wg sync.WaitGroup
	for range size {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				cell := &plan.Cells[i]
				var seat stages.Seat
				if cohort != nil {
					seat = cohort.Reserve(&cell.Config)
				}
				c := &cellRun{r: r, plan: &reg.Plan, cell: cell, key: reg.CellKeys[i], p: p, seat: seat, procs: procs}
				status, cached, err := c.run(ctx)
				if seat != nil {
					seat.Release()
				}
				mu.Lock()
				var ic *interruptedCell
				if errors.As(err, &ic) {
					stopped = append(stopped, ic)
				}
				if err != nil {
					if first == nil || errors.Is(first, ErrInterrupted) && !errors.Is(err, ErrInterrupted) {
						first = err
					}
				} else {
					out.count(status, cached)
					p.cellDone(cell, status, cached)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil && next < len(cells) {
		first = fmt.Errorf("%w before cell %d", ErrInterrupted, cells[next]+1)
	}
	if len(stopped) > 1 && errors.Is(first, ErrInterrupted) {
		slices.SortFunc(stopped, func(a, b *interruptedCell) int { return a.cell - b.cell })
		where := make([]string, len(stopped))
		for i, ic := range stopped {
			where[i] = ic.where()
		}
		first = fmt.Errorf("%w in cells %s", ErrInterrupted, strings.Join(where, "; "))
	}
	return first
}

// interruptedCell is ErrInterrupted in a cell: where it stopped.
type interruptedCell struct {
	cell         int // from 1
	label, stage string
}

func (e *interruptedCell) where() string {
	return fmt.Sprintf("%d (%s), stage %s", e.cell, e.label, e.stage)
}
func (e *interruptedCell) Error() string {
	return fmt.Sprintf("%v in cell %s", ErrInterrupted, e.where())
}
func (e *interruptedCell) Unwrap() error { return ErrInterrupted }

// count adds a finished cell.
func (o *Outcome) count(status string, cached bool) {
	switch status {
	case eventlog.Completed:
		o.Completed++
	case eventlog.Diverged:
		o.Diverged++
	case eventlog.Failed:
		o.Failed++
	case eventlog.Incomplete:
		o.Stopped++
	}
	if cached {
		o.Cached++
	}
}

// dropSuperseded removes the local blobs of the checkpoints of stage key
// skey that later ones supersede (superseded); S3 stores keep theirs
// (their writes are create-only).
func (r *Runner) dropSuperseded(hash, skey string) error {
	local, ok := r.Blobs.(*artifacts.Local)
	if !ok {
		return nil
	}
	evs, err := r.source().StageEvents(hash, skey)
	if err != nil {
		return err
	}
	for _, digest := range slices.Sorted(maps.Keys(superseded(evs))) {
		if err := local.Remove(artifacts.Ref{Digest: digest}); err != nil {
			return err
		}
	}
	return nil
}

// lastCheckpoint returns the furthest checkpoint recorded under stage key
// skey or its former key ("" for none) that counts for manifest hash
// (countFor), whose run evaluated every round a run evaluating every
// evaluate rounds does (stages.EvaluatedRoundsInclude), and whose blob verifies, or nil.
func (r *Runner) lastCheckpoint(
	ctx context.Context,
	hash, skey, former string,
	evaluate int,
) (*stages.Checkpoint, error) {
	evs, err := r.source().StageEvents(hash, skey)
	if err != nil {
		return nil, err
	}
	if former != "" {
		earlier, err := r.source().StageEvents(hash, former)
		if err != nil {
			return nil, err
		}
		evs = append(earlier, evs...)
	}
	var found []stages.Checkpoint
	for _, ev := range evs {
		if ref, ok := ev.Outputs[eventlog.RoundCheckpoint]; ok && ev.Kind == eventlog.RoundCompleted &&
			stages.EvaluatedRoundsInclude(evaluateEvery(&ev), evaluate) {
			found = append(found, stages.Checkpoint{Round: ev.Round, Ref: ref})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Round > found[j].Round })
	for _, c := range found {
		if _, err := r.Blobs.Get(ctx, c.Ref); err == nil {
			return &c, nil
		}
	}
	return nil, nil
}

// CheckUntil accepts "" or the name of one of the stages.
func CheckUntil(stgs []stages.Stage, until string) error {
	names := make([]string, len(stgs))
	for i, st := range stgs {
		names[i] = st.Name()
	}
	if until != "" && !slices.Contains(names, until) {
		return fmt.Errorf("--until %q: use one of %s", until, strings.Join(names, ", "))
	}
	return nil
}

// Fingerprint describes the environment a cell runs in (with the build of
// ump that computes it), and its inputs (cellInputs), from which a pull
// recomputes its key.
func Fingerprint(cfg *manifests.Manifest, engines Engines, inputs string) map[string]string {
	processor := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				processor = strings.TrimSpace(v)
				break
			}
		}
	}
	engine, err := engines.Name(cfg)
	if err != nil {
		engine = err.Error()
	}
	return map[string]string{"go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH,
		"engine": engine, "ump": state.Version(), "kernels": engines.Kernels(), "cpu": processor,
		"cpus": fmt.Sprint(runtime.NumCPU()), "time": time.Now().UTC().Format(time.RFC3339), "inputs": inputs}
}
