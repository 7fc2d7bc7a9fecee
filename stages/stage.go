package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
)

// Stage is one step of a cell.
//
// Contract: Run is deterministic in (Params, upstream outputs); the pipeline
// calls it from one goroutine at a time per cell. Bump Version whenever a
// change alters the outputs, so old cache entries stop matching.
type Stage interface {
	Name() string
	Version() int
	// Params returns what of the cell configuration this stage depends on.
	Params(cfg *manifests.Manifest) any
	Run(ctx context.Context, env *Env) (*Result, error)
}

// Env is what the pipeline gives a running stage.
type Env struct {
	Cell     *manifests.Cell
	Store    artifacts.Store
	Data     *datasets.Library
	Upstream map[string]*Result // completed earlier stages, by name; read only
	// Resume is the last verified checkpoint of an interrupted run of this
	// very stage (same cache key), or nil to start from scratch.
	Resume *Checkpoint
	// Report records a finished round; the pipeline appends it to the event
	// log before Run continues. Only rounded stages (train) call it.
	Report func(RoundReport) error
	// Seat is the cell's place in a GPU cohort (Lockstep.Reserve), or nil:
	// a GPU cell then trains in a cohort of its own.
	Seat *Seat
	// Device is where GPU cells train (nil where none is configured).
	Device *nn.Device
}

// Result is what a completed stage produced.
type Result struct {
	Outputs  map[string]artifacts.Ref `json:"outputs"`
	Summary  json.RawMessage          `json:"summary,omitempty"`
	Diverged bool                     `json:"diverged,omitempty"`
}

// Checkpoint points at a saved training state after Round completed rounds.
type Checkpoint struct {
	Round int           `json:"round"`
	Ref   artifacts.Ref `json:"ref"`
}

// RoundReport is one finished round of a rounded stage.
type RoundReport struct {
	Round      int               `json:"round"` // completed rounds, from 1
	Rounds     int               `json:"rounds"`
	Metrics    map[string]Metric `json:"metrics,omitempty"`
	Checkpoint *artifacts.Ref    `json:"checkpoint,omitempty"`
	Seconds    float64           `json:"seconds"` // compute time since the previous report
}

// ErrInterrupted is returned by a stage that stopped at a safe point
// because its context was cancelled; its last report holds a checkpoint.
var ErrInterrupted = errors.New("interrupted")

// Metric is a float64 whose JSON form also carries NaN and ±Inf (as the
// strings "NaN", "+Inf", "-Inf").
type Metric float64

func (m Metric) MarshalJSON() ([]byte, error) {
	f := float64(m)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return json.Marshal(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return json.Marshal(f)
}

func (m *Metric) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		*m = Metric(f)
		return err
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*m = Metric(f)
	return err
}

// Engine identifies the code that computes a cell's numbers; it enters the
// cell key. Data sets train on the nn CPU engine, whose name includes the
// BLAS in use, or with engine: gpu on the GoMLX engine, whose name
// includes the backend and device; the quadratic task is plain float32 Go.
func Engine(cfg *manifests.Manifest, device *nn.Device) (string, error) {
	switch {
	case cfg.Task.Dataset == "quadratic":
		return "go-cpu-float32/v1", nil
	case cfg.Engine == "gpu":
		return device.Name()
	}
	return nn.CPUName(), nil
}

// NewEngine builds the training engine of a data-set cell.
func NewEngine(cfg *manifests.Manifest, data *datasets.Dataset, device *nn.Device) (nn.Engine, error) {
	if cfg.Engine == "gpu" {
		e, err := nn.NewGPU(cfg.Task.Model, data, uint64(cfg.Seed), device)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return nn.NewCPU(cfg.Task.Model, data, uint64(cfg.Seed))
}

// NewQuadratic builds the quadratic task of a cell.
func NewQuadratic(cfg *manifests.Manifest) *datasets.Quadratic {
	q := cfg.Task.Quadratic
	return datasets.NewQuadratic(cfg.Workers, q.Dim, q.Zeta, q.Kappa, q.Sigma, uint64(cfg.Seed))
}

// DatasetDigest identifies the content of a cell's data; it enters the cell
// key.
func DatasetDigest(cfg *manifests.Manifest, lib *datasets.Library) (string, error) {
	if q := cfg.Task.Quadratic; cfg.Task.Dataset == "quadratic" {
		return datasets.QuadraticDigest(cfg.Workers, q.Dim, q.Zeta, q.Kappa), nil
	}
	d, err := LoadData(cfg, lib)
	if err != nil {
		return "", err
	}
	return d.Digest, nil
}

// LoadData loads the data set of a cell (not the quadratic task).
func LoadData(cfg *manifests.Manifest, lib *datasets.Library) (*datasets.Dataset, error) {
	var synth datasets.Synthetic
	if s := cfg.Task.Synthetic; s != nil {
		synth = datasets.Synthetic{Dims: s.Dims, Classes: s.Classes, Train: s.Train, Test: s.Test, Separation: s.Separation}
	}
	return lib.Load(cfg.Task.Dataset, synth)
}

// ReadTable loads an Arrow table output of an upstream stage.
func ReadTable(ctx context.Context, env *Env, stage, output string) (*artifacts.Table, error) {
	up, ok := env.Upstream[stage]
	if !ok {
		return nil, fmt.Errorf("stage %s has not run", stage)
	}
	ref, ok := up.Outputs[output]
	if !ok {
		return nil, fmt.Errorf("stage %s has no output %q", stage, output)
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
