//go:build xla

package exact

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/ump-lab/ump/nn"
)

// linear is a linear layer's y = x Wᵀ + bias of every model as the CPU
// engine's gemm computes it: each output starts at its bias and adds x·w
// over the inputs in order, one fused multiply-add each. x is [M, b, in],
// w [M, out, in] (PyTorch's layout), bias [M, out].
func linear(x, w, bias *Node) *Node {
	models, b, out := x.Shape().Dimensions[0], x.Shape().Dimensions[1], w.Shape().Dimensions[1]
	return Product(x, w, BroadcastToDims(Reshape(bias, models, 1, out), models, b, out))
}

// linearBackward is the CPU engine's linear backward for the output
// gradient dy [M, b, out]: the weight gradient dyᵀ x [M, out, in] (a sum
// over the batch's samples in order, from +0), the bias gradient [M, out]
// (the samples' dy added in float64 in order, from +0, rounded once) and,
// when wantDx, the input gradient dy W [M, b, in] (a sum over the outputs
// in order, from +0).
func linearBackward(x, w, dy *Node, wantDx bool) (gw, gb, dx *Node) {
	g := x.Graph()
	d := x.Shape().Dimensions
	models, b, in, out := d[0], d[1], d[2], w.Shape().Dimensions[1]
	gw = Product(Transpose(dy, 1, 2), Transpose(x, 1, 2), Zeros(g, shapes.Make(dtypes.Float32, models, out, in)))
	acc := Zeros(g, shapes.Make(dtypes.Float64, models, out))
	for s := range b {
		acc = Add(
			acc,
			ConvertDType(Reshape(Slice(dy, AxisRange(), AxisElem(s), AxisRange()), models, out), dtypes.Float64),
		)
	}
	gb = ConvertDType(acc, dtypes.Float32)
	if wantDx {
		dx = Product(dy, Transpose(w, 1, 2), Zeros(g, shapes.Make(dtypes.Float32, models, b, in)))
	}
	return gw, gb, dx
}

// relu is the CPU engine's ReLU, Go's max(x, 0): +0 for either
// zero, a NaN kept.
func relu(x *Node) *Node {
	return Where(LogicalOr(GreaterThan(x, ZerosLike(x)), IsNaN(x)), x, ZerosLike(x))
}

// reluBackward passes dy where the CPU engine's mask of the output y
// is on: where -bits(y), as an int32, is negative (y > 0, or a NaN of
// positive sign); elsewhere +0.
func reluBackward(y, dy *Node) *Node {
	bits := Bitcast(y, dtypes.Int32)
	on := LessThan(Neg(bits), ZerosLike(bits))
	return Where(on, dy, ZerosLike(dy))
}

// Forward runs the layers of M models side by side, their parameters p
// [M, model.Params], on x ([M, b, C, H, W] for images, [M, b, features]
// else) as the CPU engine's forward computes them, and returns every
// layer's input and, last, the logits [M, b, classes]. masks holds
// training's dropout mask of each Dropout layer by its index, as
// nn.DropoutMask draws it (0 or the layer's scale, laid out as its input);
// a Dropout layer without one (evaluation) passes its input.
func Forward(model *nn.Model, p, x *Node, masks map[int]*Node) ([]*Node, error) {
	if err := Supports(model); err != nil {
		return nil, err
	}
	models, b := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	acts := []*Node{x}
	for i, l := range model.Layers {
		in := acts[i]
		switch l := l.(type) {
		case nn.Conv2d:
			w, bias, order := convParams(model, p, i)
			acts = append(acts, conv(in, w, bias, l.Pad, order == nn.ConvPlanes))
		case nn.MaxPool2:
			acts = append(acts, maxPool2(in))
		case nn.Flatten:
			acts = append(acts, Reshape(in, models, b, -1))
		case nn.Linear:
			w, bias := linearParams(model, p, i)
			acts = append(acts, linear(in, w, bias))
		case nn.ReLU:
			acts = append(acts, relu(in))
		case nn.Dropout:
			if m, ok := masks[i]; ok {
				in = Mul(in, Reshape(m, in.Shape().Dimensions...))
			}
			acts = append(acts, in)
		}
	}
	return acts, nil
}

// Supports says whether the exact program has every layer of the
// model: all but convolutions the CPU engine computes as a GEMM (the
// EMNIST CNN's second) and the text model's, not built yet.
func Supports(model *nn.Model) error {
	for i, l := range model.Layers {
		switch l := l.(type) {
		case nn.Conv2d:
			if in := model.Shapes[i]; l.Order(in) == nn.ConvGEMM {
				return fmt.Errorf("gpu engine: the exact program has no convolution of %d taps as a GEMM yet "+
					"(docs/gpu.md)", in.C*l.K*l.K)
			}
		case nn.MaxPool2, nn.Flatten, nn.Linear, nn.ReLU, nn.Dropout:
		default:
			return fmt.Errorf("gpu engine: the exact program has no %T layer yet (docs/gpu.md)", l)
		}
	}
	return nil
}

// convParams are convolution layer i's filters [M, outC, C, k, k] and
// biases [M, outC], in that order in p [M, Params], and the order the CPU
// engine adds its terms in.
func convParams(model *nn.Model, p *Node, i int) (w, bias *Node, order nn.ConvOrder) {
	l, in, at := model.Layers[i].(nn.Conv2d), model.Shapes[i], model.Offsets[i]
	models, taps := p.Shape().Dimensions[0], in.C*l.K*l.K
	w = Reshape(Slice(p, AxisRange(), AxisRange(at, at+l.OutC*taps)), models, l.OutC, in.C, l.K, l.K)
	return w, Slice(p, AxisRange(), AxisRange(at+l.OutC*taps, at+l.OutC*taps+l.OutC)), l.Order(in)
}

// linearParams are linear layer i's weights [M, out, in] and biases [M,
// out], in that order in p [M, Params].
func linearParams(model *nn.Model, p *Node, i int) (w, bias *Node) {
	in, out, at := model.Shapes[i].Size(), model.Shapes[i+1].Size(), model.Offsets[i]
	models := p.Shape().Dimensions[0]
	return Reshape(
			Slice(p, AxisRange(), AxisRange(at, at+out*in)),
			models,
			out,
			in,
		), Slice(
			p,
			AxisRange(),
			AxisRange(at+out*in, at+out*in+out),
		)
}

// Gradients is the CPU engine's step of gradients of M models side by
// side, each on a batch of the first count[m] (int32 [M]) of its samples
// x[m]: the mean softmax cross-entropy losses [M] (float64) and the
// gradients [M, model.Params] (float32) at the flat parameter vectors p
// [M, model.Params], for the inputs x (as Forward takes them), labels [M,
// b] (int32) and dropout masks (one per Dropout layer, laid out as its
// input). The layers run forward keeping their outputs, then backward
// from CrossEntropy's gradient. The sums over a layer's inputs and over
// the convolutions' positions are loops (Product,
// convWeightGrad); those over the batch's samples alone (a linear
// bias gradient, the mean loss) are chains of one add a sample. The
// samples from count on (a batch padded to b) add -0 to every sum over
// samples (onlyReal): the gradient is the one of the count samples alone.
func Gradients(model *nn.Model, p, x, labels, count *Node, masks []*Node) (loss, grad *Node, err error) {
	maskOf := map[int]*Node{} // layer index: its dropout mask
	for i, l := range model.Layers {
		if _, ok := l.(nn.Dropout); ok && len(masks) > len(maskOf) {
			maskOf[i] = masks[len(maskOf)]
		} else if ok {
			return nil, nil, fmt.Errorf("gpu engine: a step of gradients needs a dropout mask for each of the "+
				"model's Dropout layers; %d given", len(masks))
		}
	}
	acts, err := Forward(model, p, x, maskOf)
	if err != nil {
		return nil, nil, err
	}
	loss, _, dy := CrossEntropy(acts[len(acts)-1], labels, count)
	models, b := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	real := firstSamples(x.Graph(), count, models, b)
	negZero := math.Copysign(0, -1)
	grads := make([]*Node, len(model.Layers))
	for i := len(model.Layers) - 1; i >= 0 && dy != nil; i-- {
		wantDx := model.Offsets[i] > 0 // a layer before this one has parameters
		switch l := model.Layers[i].(type) {
		case nn.Linear:
			w, _ := linearParams(model, p, i)
			gw, gb, dx := linearBackward(onlyReal(acts[i], real, 0), w, onlyReal(dy, real, negZero), wantDx)
			grads[i], dy = Concatenate([]*Node{Reshape(gw, models, -1), gb}, 1), dx
		case nn.Conv2d:
			w, _, order := convParams(model, p, i)
			gw, gb := convWeightGrad(onlyReal(acts[i], real, 0), onlyReal(dy, real, negZero), l.K, l.Pad, order)
			var dx *Node
			if wantDx {
				dx = convInputGrad(dy, w, l.Pad)
			}
			grads[i], dy = Concatenate([]*Node{Reshape(gw, models, -1), gb}, 1), dx
		case nn.MaxPool2:
			dy = maxPool2Backward(acts[i], acts[i+1], dy)
		case nn.ReLU:
			dy = reluBackward(acts[i+1], dy)
		case nn.Dropout:
			dy = Mul(dy, Reshape(maskOf[i], dy.Shape().Dimensions...))
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
	return loss, Concatenate(parts, 1), nil
}
