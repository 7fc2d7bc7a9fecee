package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/record"
)

// Step is one step of a cell with its params type P: the struct of
// exactly what it reads of the cell configuration.
//
// Contract: Run is deterministic in (params, Inputs): it receives the
// value Params returned, which its cache key hashes, and the outputs
// Inputs declares (Env.Upstream), and returns outputs that Outputs
// declares. The pipeline calls it from one goroutine at a time per cell.
// Bump Version whenever a change alters the outputs, so old cache entries
// stop matching.
type Step[P any] interface {
	Name() string
	Version() int
	// Params returns what of the cell configuration the step reads.
	Params(cfg *manifests.Manifest) P
	// Inputs are the upstream outputs Run reads.
	Inputs() []Output
	// Outputs are the outputs Run may return.
	Outputs() []Output
	Run(ctx context.Context, params P, env *Env) (*Result, error)
}

// FormerlyKeyed is a Step whose cache key hashed other params in an
// earlier ump, at the same Version. The results recorded under that key
// are the same bits. So the runner uses them, and records them under
// today's key.
type FormerlyKeyed interface {
	// FormerParams are the params the key hashed then, as canonical JSON.
	FormerParams(cfg *manifests.Manifest) json.RawMessage
}

// Stage is a Step as the runner drives it, its params as the canonical
// JSON its key hashes (Of makes one).
type Stage interface {
	Name() string
	Version() int
	Inputs() []Output
	Outputs() []Output
	// Params is the canonical JSON of the Step's params for a cell.
	Params(cfg *manifests.Manifest) json.RawMessage
	// FormerParams is FormerlyKeyed's for a FormerlyKeyed Step, else nil.
	FormerParams(cfg *manifests.Manifest) json.RawMessage
	// Run runs the Step on the cell's params.
	Run(ctx context.Context, cfg *manifests.Manifest, env *Env) (*Result, error)
}

// Of is the Stage of a Step.
func Of[P any](s Step[P]) Stage { return stage[P]{s} }

type stage[P any] struct{ step Step[P] }

func (s stage[P]) Name() string      { return s.step.Name() }
func (s stage[P]) Version() int      { return s.step.Version() }
func (s stage[P]) Inputs() []Output  { return s.step.Inputs() }
func (s stage[P]) Outputs() []Output { return s.step.Outputs() }
func (s stage[P]) Params(cfg *manifests.Manifest) json.RawMessage {
	return manifests.CanonicalJSON(s.step.Params(cfg))
}
func (s stage[P]) FormerParams(cfg *manifests.Manifest) json.RawMessage {
	if r, ok := s.step.(FormerlyKeyed); ok {
		return r.FormerParams(cfg)
	}
	return nil
}
func (s stage[P]) Run(ctx context.Context, cfg *manifests.Manifest, env *Env) (*Result, error) {
	return s.step.Run(ctx, s.step.Params(cfg), env)
}

// Output names an output of a stage; its string form is "stage/name".
type Output struct {
	Stage, Name string
}

func (o Output) String() string { return o.Stage + "/" + o.Name }

// Env is what the pipeline gives a running stage.
type Env struct {
	Store artifacts.Store
	Data  *datasets.Library
	// Upstream holds, by stage name, the results of the stages the
	// declared Inputs come from, with those outputs only; read only.
	Upstream map[string]*Result
	// Resume is the last verified checkpoint of an interrupted run of this
	// very stage (same cache key), or nil to start from scratch.
	Resume *Checkpoint
	// Report records a finished round; the pipeline appends it to the event
	// log before Run continues. Only rounded stages (train) call it.
	Report func(record.RoundReport) error
	// Tick tells the pipeline that round of rounds finished, every round
	// (for progress lines; nothing is recorded); nil for none.
	Tick func(round, rounds int)
	// Step tells the pipeline that local step step of steps of round
	// (from 1) begins, for progress within a long round; nil for none.
	Step func(round, step, steps int)
	// Procs is how many goroutines a CPU engine may use: its share of the
	// cores when cells run side by side; 0 for all of them.
	Procs int
	// Seat is the cell's place in a cohort of cells that train together on
	// a device (Cohort), or nil for a cell that trains on its own.
	Seat Seat
	// Every says how often a rounded stage (train) evaluates and saves a
	// checkpoint. It is not in the params: it changes what is recorded, never
	// the trained model's bits, so it stays out of the cache key; a result
	// that evaluated too few rounds for it does not serve (EvaluatedRoundsInclude).
	Every Every
}

// Cohort holds cells that train together, in one device program: the
// runner reserves each cell's Seat before its stages run.
type Cohort interface {
	// Reserve announces a cell that will run, and returns its seat (nil
	// for a cell that trains on its own).
	Reserve(cfg *manifests.Manifest) Seat
}

// Seat is a cell's reserved place in a Cohort, which the train stage
// takes and the runner releases once the cell's stages are done.
type Seat interface {
	Release()
}

// Every is how often, in rounds, a rounded stage evaluates and saves a
// checkpoint (and always at the last round).
type Every struct {
	Evaluate, Checkpoint int
}

// EvaluatedRoundsInclude reports whether the rounds a run evaluated
// every have rounds include those a run evaluating every want rounds
// needs. Both evaluate the last round, so they do when want is a multiple
// of have. have is 0 for a run recorded before ump recorded it; such a run
// counts as including them, as it did then.
func EvaluatedRoundsInclude(have, want int) bool { return have == 0 || want%have == 0 }

// EveryOf is a cell's Every.
func EveryOf(cfg *manifests.Manifest) Every {
	return Every{Evaluate: cfg.Evaluate.Every, Checkpoint: cfg.Checkpoint.Every}
}

// Result is what a completed stage produced.
type Result struct {
	Outputs  map[string]artifacts.Ref `json:"outputs"`
	Summary  json.RawMessage          `json:"summary,omitempty"`
	Diverged bool                     `json:"diverged,omitempty"`
}

// RunSettings are the settings of a rounded stage's run that its summary
// records, because a recomputation (ump verify) must repeat them to give
// the same bits. Cohort is the size of the device cohort it trained in,
// 0 or 1 for none: a GPU's float rounding depends on the program's shape.
// EvaluateEvery is how often it evaluated: its rounds table holds those
// rounds. Neither is in the cache key, so a manifest asking for other
// settings reuses the cell.
type RunSettings struct {
	Cohort        int `json:"cohort,omitempty"`
	EvaluateEvery int `json:"evaluate_every,omitempty"`
}

// Checkpoint points at a saved training state after Round completed rounds.
type Checkpoint struct {
	Round int           `json:"round"`
	Ref   artifacts.Ref `json:"ref"`
}

// ErrInterrupted is returned by a stage that stopped at a safe point
// because its context was cancelled; its last report holds a checkpoint.
var ErrInterrupted = errors.New("interrupted")

// ErrBadInput is returned (wrapped) by a stage whose parameters cannot run
// on the data, which only the data shows (validation that holds out no
// sample): the run stops, as for a bad manifest, and nothing is recorded.
var ErrBadInput = errors.New("bad input")

// LoadData loads the data set of a task (not the quadratic one).
func LoadData(task manifests.Task, lib *datasets.Library) (*datasets.Dataset, error) {
	var synth datasets.Synthetic
	if s := task.Synthetic; s != nil {
		synth = datasets.Synthetic{
			Dims:       s.Dims,
			Classes:    s.Classes,
			Train:      s.Train,
			Test:       s.Test,
			Separation: s.Separation,
		}
	}
	return lib.Load(task.Dataset, synth)
}

// ReadTable loads an Arrow table the stage declared as an input.
func ReadTable(ctx context.Context, env *Env, out Output) (*artifacts.Table, error) {
	up, ok := env.Upstream[out.Stage]
	if !ok {
		return nil, fmt.Errorf(
			"input %s: stage %s has not run, or the stage does not declare the input",
			out,
			out.Stage,
		)
	}
	ref, ok := up.Outputs[out.Name]
	if !ok {
		return nil, fmt.Errorf("input %s: no such output", out)
	}
	data, err := env.Store.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	return artifacts.ReadArrow(data)
}

// PutTable stores a table as Arrow IPC.
func PutTable(ctx context.Context, store artifacts.Store, t *artifacts.Table) (artifacts.Ref, error) {
	data, err := artifacts.WriteArrow(t)
	if err != nil {
		return artifacts.Ref{}, err
	}
	return store.Put(ctx, data)
}
