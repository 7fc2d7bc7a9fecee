//go:build xla

package gpu

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// The layers of the exact round program: every model's forward but for
// GEMM convolutions and training's dropout (exactForward), and a step of
// gradients of a model of Flatten, Linear and ReLU layers (mlp, logreg),
// as the CPU engine computes them, every sum in its order. The backward of
// convolutions and pooling and dropout's masks are not built yet
// (docs/gpu.md).

// exactLinear is a linear layer's y = x Wᵀ + bias as the CPU engine's
// gemm computes it: each output starts at its bias and adds x·w over the
// inputs in order, one fused multiply-add each. x is [b, in], w [out, in]
// (PyTorch's layout), bias [out].
func exactLinear(x, w, bias *Node) *Node {
	b, out := x.Shape().Dimensions[0], w.Shape().Dimensions[0]
	return orderedProduct(x, w, BroadcastToDims(Reshape(bias, 1, out), b, out))
}

// exactLinearBackward is the CPU engine's linear backward for the output
// gradient dy [b, out]: the weight gradient dyᵀ x [out, in] (a sum over
// the batch's samples in order, from +0), the bias gradient [out] (the
// samples' dy added in float64 in order, from +0, rounded once) and, when
// wantDx, the input gradient dy W [b, in] (a sum over the outputs in
// order, from +0).
func exactLinearBackward(x, w, dy *Node, wantDx bool) (gw, gb, dx *Node) {
	g := x.Graph()
	b, in, out := x.Shape().Dimensions[0], x.Shape().Dimensions[1], w.Shape().Dimensions[0]
	gw = orderedProduct(Transpose(dy, 0, 1), Transpose(x, 0, 1), Zeros(g, shapes.Make(dtypes.Float32, out, in)))
	acc := Zeros(g, shapes.Make(dtypes.Float64, out))
	for s := range b {
		acc = Add(acc, ConvertDType(Reshape(Slice(dy, AxisElem(s), AxisRange()), out), dtypes.Float64))
	}
	gb = ConvertDType(acc, dtypes.Float32)
	if wantDx {
		dx = orderedProduct(dy, Transpose(w, 0, 1), Zeros(g, shapes.Make(dtypes.Float32, b, in)))
	}
	return gw, gb, dx
}

// exactReLU is the CPU engine's ReLU, Go's max(x, 0): +0 for either
// zero, a NaN kept.
func exactReLU(x *Node) *Node {
	return Where(LogicalOr(GreaterThan(x, ZerosLike(x)), IsNaN(x)), x, ZerosLike(x))
}

// exactReLUBackward passes dy where the CPU engine's mask of the output y
// is on: where -bits(y), as an int32, is negative (y > 0, or a NaN of
// positive sign); elsewhere +0.
func exactReLUBackward(y, dy *Node) *Node {
	bits := Bitcast(y, dtypes.Int32)
	on := LessThan(Neg(bits), ZerosLike(bits))
	return Where(on, dy, ZerosLike(dy))
}

// exactForward runs the model's layers on x ([b, C, H, W] for images,
// [b, features] else) as the CPU engine's forward computes them, and
// returns every layer's input and, last, the logits [b, classes]. In
// training (train) a Dropout layer is refused: its masks are not built
// yet; in evaluation it passes its input, as the CPU's.
func exactForward(model *nn.Model, p, x *Node, train bool) ([]*Node, error) {
	b := x.Shape().Dimensions[0]
	acts := []*Node{x}
	for i, l := range model.Layers {
		in, at := acts[i], model.Offsets[i]
		switch l := l.(type) {
		case nn.Conv2d:
			shape := model.Shapes[i]
			taps, order := shape.C*l.K*l.K, l.Order(shape)
			if order == nn.ConvGEMM {
				return nil, fmt.Errorf("gpu engine: the exact program has no convolution of %d taps as a GEMM yet (docs/gpu.md)", taps)
			}
			w := Reshape(Slice(p, AxisRange(at, at+l.OutC*taps)), l.OutC, shape.C, l.K, l.K)
			bias := Slice(p, AxisRange(at+l.OutC*taps, at+l.OutC*taps+l.OutC))
			acts = append(acts, exactConv(in, w, bias, l.Pad, order == nn.ConvPlanes))
		case nn.MaxPool2:
			acts = append(acts, exactMaxPool2(in))
		case nn.Flatten:
			acts = append(acts, Reshape(in, b, -1))
		case nn.Linear:
			w, bias := linearParams(model, p, i)
			acts = append(acts, exactLinear(in, w, bias))
		case nn.ReLU:
			acts = append(acts, exactReLU(in))
		case nn.Dropout:
			if train {
				return nil, fmt.Errorf("gpu engine: the exact program has no dropout masks yet (docs/gpu.md)")
			}
			acts = append(acts, in)
		default:
			return nil, fmt.Errorf("gpu engine: the exact program has no %T layer yet (docs/gpu.md)", l)
		}
	}
	return acts, nil
}

// linearParams are linear layer i's weights [out, in] and biases [out],
// in that order in p.
func linearParams(model *nn.Model, p *Node, i int) (w, bias *Node) {
	in, out, at := model.Shapes[i].Size(), model.Shapes[i+1].Size(), model.Offsets[i]
	return Reshape(Slice(p, AxisRange(at, at+out*in)), out, in), Slice(p, AxisRange(at+out*in, at+out*in+out))
}

// exactDenseGradient is the CPU engine's step of gradients of a model of
// Flatten, Linear and ReLU layers on a batch: the mean softmax
// cross-entropy loss (float64) and the gradient of the flat parameter
// vector p [model.Params] (float32), for the inputs x [b, features]
// (flattened) and labels [b] (int32). The layers run forward keeping
// their outputs, then backward from crossEntropy64's gradient.
func exactDenseGradient(model *nn.Model, p, x, labels *Node) (loss, grad *Node, err error) {
	for _, l := range model.Layers {
		switch l.(type) {
		case nn.Flatten, nn.Linear, nn.ReLU:
		default:
			return nil, nil, fmt.Errorf("gpu engine: the exact program has no backward of a %T layer yet (docs/gpu.md)", l)
		}
	}
	acts, err := exactForward(model, p, x, true)
	if err != nil {
		return nil, nil, err
	}
	loss, _, dy := crossEntropy64(acts[len(acts)-1], labels)
	grads := make([]*Node, len(model.Layers))
	for i := len(model.Layers) - 1; i >= 0 && dy != nil; i-- {
		switch model.Layers[i].(type) {
		case nn.Linear:
			w, _ := linearParams(model, p, i)
			gw, gb, dx := exactLinearBackward(acts[i], w, dy, model.Offsets[i] > 0)
			grads[i], dy = Concatenate([]*Node{Reshape(gw, -1), gb}, 0), dx
		case nn.ReLU:
			dy = exactReLUBackward(acts[i+1], dy)
		case nn.Flatten:
			dy = Reshape(dy, acts[i].Shape().Dimensions...)
		}
	}
	var parts []*Node
	for _, g := range grads {
		if g != nil {
			parts = append(parts, g)
		}
	}
	return loss, Concatenate(parts, 0), nil
}

// denseStep is a step of gradients of a dense model at parameters one
// step of SGD away from Init (so that no weight is where Init put it), on
// a batch whose inputs x are as the engine sees them (flattened), with the
// CPU engine's loss and gradient there.
type denseStep struct {
	model     *nn.Model
	p, x      []float32
	labels    []int32
	loss      float64
	gradients []float32
}

// newDenseStep computes the CPU engine's side of a denseStep of the model
// name on data's training samples batch, whose inputs are x, with the
// engine reference makes.
func newDenseStep(reference Reference, name string, data *datasets.Dataset, batch []int, x []float32) (denseStep, error) {
	e, err := reference(name, data, 7)
	if err != nil {
		return denseStep{}, err
	}
	model, err := nn.NewModel(name, nn.Input{Shape: data.Shape, Classes: data.Classes})
	if err != nil {
		return denseStep{}, err
	}
	c := denseStep{model: model, p: make([]float32, e.Params()), x: x, gradients: make([]float32, e.Params())}
	for _, i := range batch {
		c.labels = append(c.labels, data.Train.Labels[i])
	}
	e.Init(c.p)
	losses := make([]float64, 1)
	gradients := func() error {
		return e.Gradients(nn.Step{}, [][]float32{c.p}, [][]float32{c.gradients}, [][]int{batch}, losses)
	}
	if err := gradients(); err != nil {
		return denseStep{}, err
	}
	for i := range c.p {
		c.p[i] -= 0.5 * c.gradients[i]
	}
	if err := gradients(); err != nil {
		return denseStep{}, err
	}
	c.loss = losses[0]
	return c, nil
}

// The dense step CheckExactOrder computes: an mlp of denseFeatures inputs
// (few, so that XLA compiles its unrolled sums in seconds) on a batch of
// denseBatch (no power of two: the mean's division is then no
// multiplication by the reciprocal).
const denseFeatures, denseClasses, denseBatch = 24, 10, 7

// denseStepCase is that step, on random features and labels.
func denseStepCase(reference Reference) (denseStep, error) {
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
	return newDenseStep(reference, "mlp", data, batch, data.Train.Features)
}

// args are the step's inputs to exactDenseGradient: p, x and labels.
func (c denseStep) args() []any {
	return []any{tensors.FromFlatDataAndDimensions(c.p, len(c.p)), tensors.FromFlatDataAndDimensions(c.x, len(c.labels), len(c.x)/len(c.labels)),
		tensors.FromFlatDataAndDimensions(c.labels, len(c.labels))}
}

// differ counts the figures of the step the device computed (its loss and
// gradient) whose bits differ from the CPU engine's.
func (c denseStep) differ(loss float64, gradients []float32) int {
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
