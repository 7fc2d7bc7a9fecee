package train

import (
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/stages"
)

// stateVectors is about how many model-sized float32 vectors a worker
// keeps (parameters, gradient, momentum, the algorithms' buffers, a
// codec's memory, the exchange's copies). The estimate only has to tell
// the impossible from the possible.
const stateVectors = 8

// MemoryNeed estimates the bytes a cell needs at its peak: every worker's
// state vectors, and one batch's activations forward and backward. It
// names the manifest field that drives the estimate.
func MemoryNeed(cfg *manifests.Manifest, data *datasets.Library) (need float64, field string, err error) {
	workers := float64(cfg.Workers)
	if !cfg.Task.Kind().Samples {
		return workers * float64(cfg.Task.Quadratic.Dim) * stateVectors * 4, "task.quadratic.dim", nil
	}
	d, err := stages.LoadData(cfg.Task, data)
	if err != nil {
		return 0, "", err
	}
	m, err := nn.NewModel(cfg.Task.Model, nn.Input{Shape: d.Shape, Classes: d.Classes, Vocab: len(d.Vocab)})
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
