//go:build xla

package gpu

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// The step of gradients the exact program's check and tests compute
// (exact.Gradients), with the CPU engine's loss and gradient beside it.

// gradientStep is a step of gradients of a model at parameters one step
// of SGD away from Init (so that no weight is where Init put it), on a
// batch whose inputs x (of dimensions xDims) are as the engine sees them,
// with the dropout masks of worker 0's first local step, and the CPU
// engine's loss and gradient there.
type gradientStep struct {
	model     *nn.Model
	p, x      []float32
	xDims     []int
	labels    []int32
	masks     [][]float32
	loss      float64
	gradients []float32
}

// stepSeed is the seed of a gradientStep's engine, and so of its masks.
const stepSeed = 7

// newGradientStep computes the CPU engine's side of a gradientStep of the
// model name on data's training samples batch, whose inputs are x, with
// the engine reference makes.
func newGradientStep(
	reference Reference,
	name string,
	data *datasets.Dataset,
	batch []int,
	x []float32,
) (gradientStep, error) {
	e, err := reference(name, data, stepSeed)
	if err != nil {
		return gradientStep{}, err
	}
	model, err := nn.NewModel(name, nn.Input{Shape: data.Shape, Classes: data.Classes})
	if err != nil {
		return gradientStep{}, err
	}
	c := gradientStep{
		model:     model,
		p:         make([]float32, e.Params()),
		x:         x,
		xDims:     append([]int{len(batch)}, data.Shape...),
		gradients: make([]float32, e.Params()),
	}
	for _, i := range batch {
		c.labels = append(c.labels, data.Train.Labels[i])
	}
	draws := rng.New(stepSeed, "dropout", 0, 0, 0) // the engine's stream for worker 0, round 0, local step 0
	for i, l := range model.Layers {
		if d, ok := l.(nn.Dropout); ok {
			threshold, scale := d.MaskParams()
			mask := make([]float32, model.Shapes[i].Size()*len(batch))
			nn.DropoutMask(draws, threshold, scale, mask)
			c.masks = append(c.masks, mask)
		}
	}
	e.Init(c.p)
	losses := make([]float64, 1)
	gradients := func() error {
		return e.Gradients(nn.Step{}, [][]float32{c.p}, [][]float32{c.gradients}, [][]int{batch}, losses)
	}
	if err := gradients(); err != nil {
		return gradientStep{}, err
	}
	for i := range c.p {
		c.p[i] -= 0.1 * c.gradients[i]
	}
	if err := gradients(); err != nil {
		return gradientStep{}, err
	}
	c.loss = losses[0]
	return c, nil
}

// The dense step CheckExactOrder computes: an mlp of denseFeatures inputs
// (few: a check of a moment) on a batch of denseBatch (no power of two:
// the mean's division is then no multiplication by the reciprocal).
const denseFeatures, denseClasses, denseBatch = 24, 10, 7

// denseStepCase is that step, on random features and labels.
func denseStepCase(reference Reference) (gradientStep, error) {
	r := rng.New(86, "dense-step")
	data := &datasets.Dataset{Classes: denseClasses, Shape: []int{denseFeatures}}
	batch := make([]int, denseBatch)
	for i := range batch {
		for range denseFeatures {
			data.Train.Features = append(data.Train.Features, float32(r.NormFloat64()))
		}
		data.Train.Labels = append(data.Train.Labels, int32(r.IntN(denseClasses)))
		batch[i] = i
	}
	return newGradientStep(reference, "mlp", data, batch, data.Train.Features)
}

// args are the step's inputs to exact.Gradient: p, x, labels, then the
// masks.
func (c gradientStep) args() []any {
	args := []any{tensors.FromFlatDataAndDimensions(c.p, len(c.p)), tensors.FromFlatDataAndDimensions(c.x, c.xDims...),
		tensors.FromFlatDataAndDimensions(c.labels, len(c.labels))}
	for _, m := range c.masks {
		args = append(args, tensors.FromFlatDataAndDimensions(m, len(m)))
	}
	return args
}

// differ counts the figures of the step the device computed (its loss and
// gradient) whose bits differ from the CPU engine's.
func (c gradientStep) differ(loss float64, gradients []float32) int {
	n := 0
	if math.Float64bits(loss) != math.Float64bits(c.loss) {
		n++
	}
	for i, want := range c.gradients {
		if !sameBits(gradients[i], want) {
			n++
		}
	}
	return n
}
