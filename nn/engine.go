package nn

import (
	"math"

	"github.com/ump-lab/ump/datasets"
)

// Engine computes the workers' gradients and evaluates parameters. Each
// worker's parameters are one flat float32 vector (Params long). Results
// depend only on the parameters, the samples and (seed, worker, round,
// local step) — never on how the work is spread over threads. Calls must
// not overlap; an engine parallelises inside each call.
type Engine interface {
	// Name identifies the engine and its numerics; it enters the cell key.
	Name() string
	// Params is the length of a parameter vector.
	Params() int
	// Init writes the common initial parameters.
	Init(p []float32)
	// Gradients computes, for every worker i, the mean loss of params[i]
	// on the training samples batches[i] and its gradient into grads[i].
	// An error is the device's (the CPU engine returns none).
	Gradients(at Step, params, grads [][]float32, batches [][]int, losses []float64) error
	// Evaluate scores each parameter vector on a whole split.
	Evaluate(params [][]float32, split *datasets.Split) ([]Score, error)
}

// Step names a local step: dropout masks of worker i come from the stream
// (seed, "dropout", i, Round, Local).
type Step struct{ Round, Local int }

// Score is a model's mean loss and accuracy on a split.
type Score struct{ Loss, Accuracy float64 }

// EvalBatch is the batch size of evaluation in both engines: the unit of
// its loss arithmetic.
const EvalBatch = 256

// Standardise returns, per channel, the map from a pixel byte to
// (v/255 - mean) / std over the training split.
func Standardise(s *datasets.Split, channels int) [][256]float32 {
	plane := len(s.Pixels) / max(1, s.Len()) / channels
	lut := make([][256]float32, channels)
	for c := range lut {
		var hist [256]int64
		for i := 0; i < s.Len(); i++ {
			for _, v := range s.Pixels[(i*channels+c)*plane:][:plane] {
				hist[v]++
			}
		}
		n, sum, sq := 0.0, 0.0, 0.0
		for v, k := range hist {
			x := float64(v) / 255
			n += float64(k)
			sum += float64(float64(k) * x)
			sq += float64(float64(k) * x * x)
		}
		mean := sum / n
		std := max(1e-6, math.Sqrt(max(0, sq/n-float64(mean*mean))))
		for v := range lut[c] {
			lut[c][v] = float32((float64(v)/255 - mean) / std)
		}
	}
	return lut
}
