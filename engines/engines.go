package engines

import (
	"fmt"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
	"github.com/ump-lab/ump/tasks"
)

// Set is this machine's engines: the CPU engine, and the GPU engine on
// Device. The runner asks it what it must know before and around the
// stages (pipeline.Engines); the train stage trains with what Train hands
// it.
type Set struct {
	Device *gpu.Device // where GPU cells train; nil where none is configured
	// Exact: the CPU engine's data-set cells train on Device too, in the
	// GPU engine's exact program, which gives the CPU engine's bits: under
	// its name, so under the keys they have on a CPU (docs/gpu.md).
	Exact bool
}

// Host is the train stage's engine of kind (train.Engines): the CPU
// engine on the cell's share of the cores, or the GPU engine on Device.
func (e Set) Host(kind string) (train.NewEngine, error) {
	switch kind {
	case "":
		return func(model string, data *datasets.Dataset, seed uint64, procs int) (nn.Engine, error) {
			c, err := cpu.New(model, data, seed)
			if err != nil {
				return nil, err
			}
			if procs > 0 {
				c.UseProcs(procs)
			}
			return c, nil
		}, nil
	case tasks.GPU:
		return func(model string, data *datasets.Dataset, seed uint64, _ int) (nn.Engine, error) {
			return gpu.New(model, data, seed, e.Device)
		}, nil
	}
	return nil, fmt.Errorf("train: no engine of kind %q", kind)
}

// Cohort is the train stage's device program of kind (train.Engines): the
// GPU engine's cohort program on Device, and, where Exact, the exact
// program for the CPU engine's cells (their shape says Exact).
func (e Set) Cohort(kind string) train.NewCohort {
	if kind == tasks.GPU || kind == "" && e.Exact {
		return e.newCohort
	}
	return nil
}

func (e Set) newCohort(data *datasets.Dataset, shape nn.CohortShape) (nn.Cohort, error) {
	return gpu.NewCohort(e.Device, data, shape)
}

// Name identifies the code that computes a cell's numbers; it enters the
// cell key. Data sets train on the CPU engine, whose name is its
// numerics' version (the same on every machine), or with engine: gpu on
// the GoMLX engine, whose name includes the backend and device; a task
// without samples names its own plain-Go code (tasks.Kind.GoEngine).
func (e Set) Name(cfg *manifests.Manifest) (string, error) {
	switch {
	case !cfg.Task.Kind().Samples:
		return cfg.Task.Kind().GoEngine, nil
	case cfg.OnGPU():
		return e.Device.Name()
	}
	return cpu.Name(), nil
}

// CPUReference is the CPU engine as the GPU engine's exact-order check
// takes it (gpu.Reference): the engine whose bits the check's dense step
// must have.
func CPUReference(model string, data *datasets.Dataset, seed uint64) (nn.Engine, error) {
	return cpu.New(model, data, seed)
}

// Kernels names the CPU engine's kernels on this machine, for a cell's
// fingerprint (every kernel path gives the same bits), and where Exact
// the device its cohorts run on.
func (e Set) Kernels() string {
	if !e.Exact {
		return cpu.Kernels()
	}
	device, err := e.Device.Name()
	if err != nil {
		device = err.Error()
	}
	return cpu.Kernels() + "; cohorts in the exact program on " + device
}

// Check refuses, before anything runs, a cell that a GPU cohort would
// train (CohortKey) with an algorithm its round program cannot run
// (algorithms.OnDevice); nil for any other cell.
func (e Set) Check(cfg *manifests.Manifest) error {
	if e.CohortKey(cfg) == "" {
		return nil
	}
	if err := algorithms.OnDevice(algorithms.Config{Name: cfg.Algorithm.Name, Params: cfg.Algorithm.Params},
		cfg.LocalSteps); err != nil {
		return &manifests.Error{Problems: []string{fmt.Sprintf("field \"algorithm\": %v", err)}}
	}
	return nil
}

// stateVectors is about how many model-sized float32 vectors a worker
// keeps (parameters, gradient, momentum, the algorithms' buffers, a
// codec's memory, the exchange's copies). The estimate only has to tell
// the impossible from the possible.
const stateVectors = 8

// MemoryNeed estimates the bytes a cell needs at its peak: every worker's
// state vectors, and one batch's activations forward and backward. It
// names the manifest field that drives the estimate.
func (Set) MemoryNeed(cfg *manifests.Manifest, data *datasets.Library) (need float64, field string, err error) {
	workers := float64(cfg.Workers)
	if !cfg.Task.Kind().Samples {
		return workers * float64(cfg.Task.Quadratic.Dim) * stateVectors * 4, "task.quadratic.dim", nil
	}
	m, err := model(cfg, data)
	if err != nil {
		return 0, "", err
	}
	state := float64(workers * float64(m.Params) * stateVectors * 4)
	batch := float64(cfg.BatchSize * m.Activations() * 4 * 2)
	if batch > state {
		return state + batch, "batch_size", nil
	}
	return state + batch, "workers", nil
}

// CohortKey is what cells must share to train in one cohort, or "" for a
// cell that trains otherwise (train.CohortKey).
func (e Set) CohortKey(cfg *manifests.Manifest) string { return train.CohortKey(e, cfg) }

// CohortSize is how many cells of cfg's shape one device cohort holds:
// half the device's memory (gpu.DeviceMemory) over a cell's estimated
// footprint (gpu.CellBytes), at least 1.
func (Set) CohortSize(cfg *manifests.Manifest, lib *datasets.Library) int {
	m, err := model(cfg, lib)
	if err != nil {
		return 1 // the cells will fail with this error
	}
	memory, _ := gpu.DeviceMemory()
	return int(max(1, memory/2/gpu.CellBytes(m, cfg.Algorithm.Name, cfg.Workers, cfg.BatchSize)))
}

// model is a data-set cell's model, built for its data set's inputs.
func model(cfg *manifests.Manifest, lib *datasets.Library) (*nn.Model, error) {
	d, err := stages.LoadData(cfg.Task, lib)
	if err != nil {
		return nil, err
	}
	return nn.NewModel(cfg.Task.Model, nn.Input{Shape: d.Shape, Classes: d.Classes, Vocab: len(d.Vocab)})
}

// NewCohort returns cohorts of size cells on the device (train.Lockstep).
func (e Set) NewCohort(size int) stages.Cohort {
	return cohorts{train.NewLockstep(size, e.newCohort), e}
}

// cohorts is a Lockstep as the runner sees it.
type cohorts struct {
	l   *train.Lockstep
	set Set
}

// Reserve is Lockstep.Reserve of the cell's cohort key, with no seat (a
// nil Seat, not a nil *Seat) for a cell that trains outside cohorts.
func (c cohorts) Reserve(cfg *manifests.Manifest) stages.Seat {
	if s := c.l.Reserve(c.set.CohortKey(cfg)); s != nil {
		return s
	}
	return nil
}
