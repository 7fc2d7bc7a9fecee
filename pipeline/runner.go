package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"syscall"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
)

// DefaultStages are the stages every cell runs, in order.
func DefaultStages() []stages.Stage {
	return []stages.Stage{partition.Stage{}, topology.Stage{}, train.Stage{}, evaluate.Stage{}}
}

// Runner runs plans against a store.
type Runner struct {
	Log      eventlog.Log    // where the run records its events
	Blobs    artifacts.Store // where its outputs and checkpoints go
	Dir      string          // where it publishes its progress (eventlog.Snapshot); "" for nowhere
	Stages   []stages.Stage
	Data     *datasets.Library
	Device   *gpu.Device // where GPU cells train; nil where none is configured
	Progress io.Writer   // human progress lines (stderr); nil for none
	// Until, when set, names the last stage to run in each cell; the cell
	// stays incomplete and a later run without Until finishes it.
	Until string
	// Cohort is how many GPU cells that share their shapes train at once,
	// in one device program (train.Lockstep); 0 sizes cohorts to the
	// device's memory (nn.CohortSize).
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
func cellInputs(cfg *manifests.Manifest, data *datasets.Library, device *gpu.Device) (string, error) {
	digest, err := datasetDigest(cfg, data)
	if err != nil {
		return "", err
	}
	engine, err := engineName(cfg, device)
	if err != nil {
		return "", err
	}
	return digest + "\n" + engine, nil
}

// engineName identifies the code that computes a cell's numbers; it
// enters the cell key. Data sets train on the nn CPU engine, whose name
// is its numerics' version (the same on every machine), or with engine:
// gpu on the GoMLX engine, whose name includes the backend and device; a
// task without samples names its own plain-Go code (tasks.Kind.GoEngine).
func engineName(cfg *manifests.Manifest, device *gpu.Device) (string, error) {
	switch {
	case !cfg.Task.Kind().Samples:
		return cfg.Task.Kind().GoEngine, nil
	case cfg.OnGPU():
		return device.Name()
	}
	return cpu.Name(), nil
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

// stageKey hashes a stage's identity, its params, the cell's inputs and
// every upstream output (a superset of the ones it reads).
func stageKey(st stages.Stage, params any, inputs string, upstream map[string]*stages.Result) string {
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
			out[in.Stage] = &stages.Result{Outputs: map[string]artifacts.Ref{}, Summary: up.Summary, Diverged: up.Diverged}
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
			return fmt.Errorf("stage %s returned output %q, which it does not declare (it declares %v)", st.Name(), name, st.Outputs())
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
	for i := range plan.Cells { // what the GPU cohort cannot run, before any cell's data loads
		if err := train.CheckDevice(&plan.Cells[i].Config); err != nil {
			return nil, fmt.Errorf("cell %d (%s): %w", i+1, plan.Cells[i].LabelString(), err)
		}
	}
	memory := machineMemory()
	var all []string // each cell's inputs
	for i := range plan.Cells {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		cfg := &plan.Cells[i].Config
		in, err := cellInputs(cfg, r.Data, r.Device)
		if err == nil {
			err = checkMemory(cfg, r.Data, memory)
		}
		if err != nil {
			return nil, fmt.Errorf("cell %d (%s): %w", i+1, plan.Cells[i].LabelString(), err)
		}
		reg.CellKeys = append(reg.CellKeys, cellKey(&plan.Cells[i], in))
		all = append(all, in)
	}
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
			engine, _ := engineName(&plan.Cells[slices.Sorted(maps.Keys(other))[0]].Config, r.Device)
			return nil, fmt.Errorf("%w: %d of the manifest's %d cells have results recorded under engine %s, and this machine computes with %s "+
				"(or with other data: a cell's key holds the engine and the data it ran on). Rerun with --other-engine use to keep those results (cells without one then run here), "+
				"or --other-engine recompute to compute them again here (the recorded results stay in the store)",
				ErrOtherEngine, len(other), len(plan.Cells), strings.Join(quoted(engines), " and "), strconv.Quote(engine))
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
	p := newProgress(r.Progress, r.Dir, plan)
	defer p.finish()
	todo := r.Cells
	if todo == nil {
		todo = make([]int, len(plan.Cells))
		for i := range todo {
			todo[i] = i
		}
	}
	out := Outcome{Cells: len(todo)}
	groups := map[string][]int{} // cohort key -> its cells, in plan order
	var alone []int              // cells that train on their own (not in a GPU cohort)
	for _, i := range todo {
		if key := train.CohortKey(&plan.Cells[i].Config); key != "" {
			groups[key] = append(groups[key], i)
		} else {
			alone = append(alone, i)
		}
	}
	for _, i := range todo {
		key := train.CohortKey(&plan.Cells[i].Config)
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
				size = train.CohortSize(&plan.Cells[i].Config, r.Data)
			}
			size = min(size, len(cells))
			p.printf("%d cells (%s): cohorts of %d on the GPU\n", len(cells), key, size)
		}
		if err := r.runCells(ctx, plan, reg, cells, size, p, &out); err != nil {
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
func (r *Runner) runCells(ctx context.Context, plan *manifests.Plan, reg *state.Registration, cells []int, size int, p *progress, out *Outcome) error {
	var lock *train.Lockstep // a GPU cohort's; cells that train alone need none
	if train.CohortKey(&plan.Cells[cells[0]].Config) != "" {
		lock = train.NewLockstep(size, r.Device)
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
				var seat *train.Seat
				if lock != nil {
					seat = lock.Reserve(&cell.Config)
				}
				status, cached, err := r.runCell(ctx, plan, cell, reg.CellKeys[i], p, seat, procs)
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

// runCell runs one cell's stages; err is only for interruption or a broken
// store, a failing stage gives status Failed.
func (r *Runner) runCell(ctx context.Context, plan *manifests.Plan, cell *manifests.Cell, key string, p *progress, seat *train.Seat, procs int) (status string, cached bool, err error) {
	p.cellStart(cell)
	hooks := r.hooks(plan, cell, key, p)
	if err := hooks.Start(ctx); err != nil {
		return "", false, fmt.Errorf("cell %d (%s): %w", cell.Index+1, cell.LabelString(), err)
	}
	view, err := r.source().Cell(plan.Hash, key)
	if err != nil {
		return "", false, err
	}
	inputs, err := cellInputs(&cell.Config, r.Data, r.Device)
	if err != nil {
		return "", false, err
	}
	// A result recorded under another engine (OtherEngine "use"): its
	// stages are cache hits under the inputs it recorded, and none may
	// run here under its key.
	foreign := ""
	if cellKey(cell, inputs) != key {
		if foreign = view.Fingerprint()["inputs"]; foreign == "" {
			return "", false, fmt.Errorf("cell %d (%s): its key %.12s does not follow from this machine's inputs and its events do not record theirs", cell.Index+1, cell.LabelString(), key)
		}
		inputs = foreign
	}
	appended := false
	appendCell := func(ev *eventlog.Event) error {
		if !appended {
			appended = true
			start := eventlog.New(eventlog.CellStarted, Fingerprint(&cell.Config, r.Device, inputs))
			start.Manifest, start.Cell = plan.Hash, key
			if err := r.Log.Append(start); err != nil {
				return err
			}
		}
		ev.Manifest, ev.Cell = plan.Hash, key
		if err := r.Log.Append(ev); err != nil {
			return err
		}
		return hooks.Recorded(ctx, ev)
	}
	results := map[string]*stages.Result{}
	status, diverged := eventlog.Completed, false
	var failure string
	for _, st := range r.Stages {
		params := st.Params(&cell.Config)
		skey := stageKey(st, params, inputs, results)
		res, own, err := r.cached(ctx, skey, plan.Hash, key, p, cell, st.Name())
		if err != nil {
			return "", false, err
		}
		if res != nil {
			if !own {
				if err := appendCell(completedEvent(st.Name(), skey, res, true)); err != nil {
					return "", false, err
				}
			}
			p.stageCached(cell, st.Name())
		} else if foreign != "" {
			return "", false, fmt.Errorf("%w: cell %d (%s) was recorded under other inputs (%q) and its stage %s is not in the store whole: "+
				"rerun with --other-engine recompute to compute it on this engine", ErrOtherEngine, cell.Index+1, cell.LabelString(), foreign, st.Name())
		} else {
			res, err = r.runStage(ctx, plan.Hash, st, cell, params, skey, results, appendCell, p, seat, procs)
			if errors.Is(err, stages.ErrInterrupted) || (err != nil && ctx.Err() != nil) {
				return "", false, &interruptedCell{cell: cell.Index + 1, label: cell.LabelString(), stage: st.Name()}
			}
			if errors.Is(err, stages.ErrBadInput) { // the manifest, not the cell: stop; the manifest must change
				return "", false, fmt.Errorf("cell %d (%s), stage %s: %w", cell.Index+1, cell.LabelString(), st.Name(), err)
			}
			if storeFailure(err) { // the store failed, not the cell: stop, and the rerun resumes
				return "", false, fmt.Errorf("cell %d (%s), stage %s: %w", cell.Index+1, cell.LabelString(), st.Name(), err)
			}
			if err != nil {
				failed := eventlog.New(eventlog.StageFailed, err.Error())
				failed.Stage, failed.StageKey = st.Name(), skey
				if aerr := appendCell(failed); aerr != nil {
					return "", false, aerr
				}
				status, failure = eventlog.Failed, fmt.Sprintf("stage %s: %v", st.Name(), err)
				p.stageFailed(cell, st.Name(), err)
				break
			}
		}
		results[st.Name()] = res
		diverged = diverged || res.Diverged
		if st.Name() == r.Until {
			status = eventlog.Incomplete
			break
		}
	}
	if status == eventlog.Incomplete {
		return status, !appended, nil
	}
	if status == eventlog.Completed && diverged {
		status = eventlog.Diverged
	}
	if appended || view.Status != status {
		if err := appendCell(eventlog.New(eventlog.CellCompleted, eventlog.CellOutcome{Status: status, Error: failure})); err != nil {
			return "", false, err
		}
	}
	if err := hooks.Finish(ctx, status); err != nil {
		return "", false, fmt.Errorf("cell %d (%s): %w", cell.Index+1, cell.LabelString(), err)
	}
	return status, !appended, nil
}

// storeFailure reports whether a stage failed because the store could not
// take its outputs (a full disk, an unreachable S3 store): a failure of
// the machine, not of the cell, which a rerun resumes.
func storeFailure(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, artifacts.ErrUnavailable)
}

// cached returns the result of a completed run of stage key skey whose
// outputs all verify, or nil. own reports whether cell key already
// recorded it. Only results that count for manifest hash (countFor) serve.
func (r *Runner) cached(ctx context.Context, skey, hash, cellKey string, p *progress, cell *manifests.Cell, name string) (res *stages.Result, own bool, err error) {
	evs, err := r.source().StageEvents(hash, skey)
	if err != nil {
		return nil, false, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Kind != eventlog.StageCompleted {
			continue
		}
		if err := r.verifyOutputs(ctx, ev.Outputs); err != nil {
			p.cellf(cell, "%s: cached output unusable (%v); recomputing\n", name, err)
			return nil, false, nil
		}
		pl, err := eventlog.PayloadOf[eventlog.StageOutcome](&ev)
		if err != nil {
			return nil, false, err
		}
		for _, e := range evs {
			own = own || (e.Kind == eventlog.StageCompleted && e.Cell == cellKey)
		}
		return &stages.Result{Outputs: ev.Outputs, Summary: pl.Summary, Diverged: pl.Diverged}, own, nil
	}
	return nil, false, nil
}

func (r *Runner) verifyOutputs(ctx context.Context, outs map[string]artifacts.Ref) error {
	for name, ref := range outs {
		if _, err := r.Blobs.Get(ctx, ref); err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
	}
	return nil
}

func completedEvent(stage, skey string, res *stages.Result, cached bool) *eventlog.Event {
	ev := eventlog.New(eventlog.StageCompleted, eventlog.StageOutcome{Summary: res.Summary, Diverged: res.Diverged, Cached: cached})
	ev.Stage, ev.StageKey, ev.Outputs = stage, skey, res.Outputs
	return ev
}

// runStage executes a stage of a cell of manifest hash, resuming from its
// last verified checkpoint.
func (r *Runner) runStage(ctx context.Context, hash string, st stages.Stage, cell *manifests.Cell, params any, skey string,
	upstream map[string]*stages.Result, appendCell func(*eventlog.Event) error, p *progress, seat *train.Seat, procs int) (*stages.Result, error) {
	resume, err := r.lastCheckpoint(ctx, hash, skey)
	if err != nil {
		return nil, err
	}
	started := eventlog.New(eventlog.StageStarted, struct{}{})
	started.Stage, started.StageKey, started.Inputs = st.Name(), skey, inputs(upstream)
	if err := appendCell(started); err != nil {
		return nil, err
	}
	p.stageStart(cell, st.Name(), resume)
	env := &stages.Env{Params: params, Store: r.Blobs, Data: r.Data, Upstream: declared(st, upstream), Resume: resume, Procs: procs,
		Every: stages.EveryOf(&cell.Config),
		Tick:  func(round, rounds int) { p.tick(cell, round, rounds) },
		Step:  func(round, step, steps int) { p.step(cell, round, step, steps) },
		Report: func(rep record.RoundReport) error {
			ev := eventlog.New(eventlog.RoundCompleted, rep)
			ev.Stage, ev.StageKey, ev.Round = st.Name(), skey, rep.Round
			if rep.Checkpoint != nil {
				ev.Outputs = map[string]artifacts.Ref{eventlog.RoundCheckpoint: *rep.Checkpoint}
			}
			if err := appendCell(ev); err != nil {
				return err
			}
			if rep.Checkpoint != nil {
				if err := r.dropSuperseded(hash, skey); err != nil {
					return err
				}
			}
			p.round(cell, rep)
			return nil
		}}
	res, err := st.Run(train.WithDevice(ctx, r.Device, seat), env)
	if err == nil {
		err = checkOutputs(st, res)
	}
	if err != nil {
		return nil, err
	}
	if err := appendCell(completedEvent(st.Name(), skey, res, false)); err != nil {
		return nil, err
	}
	p.stageDone(cell, st.Name(), res)
	return res, nil
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

// lastCheckpoint returns the furthest checkpoint recorded for a stage key
// that counts for manifest hash (countFor) and whose blob verifies, or nil.
func (r *Runner) lastCheckpoint(ctx context.Context, hash, skey string) (*stages.Checkpoint, error) {
	evs, err := r.source().StageEvents(hash, skey)
	if err != nil {
		return nil, err
	}
	var found []stages.Checkpoint
	for _, ev := range evs {
		if ref, ok := ev.Outputs[eventlog.RoundCheckpoint]; ok && ev.Kind == eventlog.RoundCompleted {
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
func Fingerprint(cfg *manifests.Manifest, device *gpu.Device, inputs string) map[string]string {
	processor := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				processor = strings.TrimSpace(v)
				break
			}
		}
	}
	engine, err := engineName(cfg, device)
	if err != nil {
		engine = err.Error()
	}
	return map[string]string{"go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH,
		"engine": engine, "ump": state.Version(), "kernels": cpu.Kernels(), "cpu": processor,
		"cpus": fmt.Sprint(runtime.NumCPU()), "time": time.Now().UTC().Format(time.RFC3339), "inputs": inputs}
}
