//go:build xla

package gpu

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/ump-lab/ump/nn"
)

// The model as a GoMLX graph over a leading axis of models: every model's
// parameters are a row of p [models, Params] in the CPU engine's layout;
// image activations are [models, b, H, W, C] (channels last, so that the
// unfolded patches of a convolution are already in a matrix product's
// layout: no transposes), flat ones [models, b, F]. The backward pass is
// written out layer by layer, as the CPU engine's is, so every product —
// forward and backward — is one matrix product batched over models
// (GoMLX's automatic gradient of a product is a broadcast multiply and a
// reduction), and a local step can be the body of the round program's
// loop. A convolution of one input channel takes no patches: its output
// and weight gradient are shifted multiply-adds and multiply-reduces.

// graphInput is a batch of model inputs: x for images and features;
// rows (indices into the models' stacked embedding tables) and bag
// weights for token bags.
type graphInput struct{ x, rows, bagW *Node }

// graphTape keeps what the backward pass needs of a forward pass.
type graphTape struct {
	in    graphInput
	acts  []*Node // acts[i] is layer i's input, acts[len] the logits
	masks []*Node // dropout masks (0 or the scale), in layer order
}

// block returns the parameters of layer i from offset `from` as
// [models, dims...].
func block(m *nn.Model, p *Node, from, to int, dims ...int) *Node {
	models := p.Shape().Dimensions[0]
	return Reshape(Slice(p, AxisRange(), AxisRange(from, to)), append([]int{models}, dims...)...)
}

// graphForward runs every model on its batch; masks (training only)
// follow the dropout layers, in the CPU engine's per-sample C x H x W or
// F layout.
func graphForward(m *nn.Model, p *Node, in graphInput, masks []*Node) *graphTape {
	t := &graphTape{in: in}
	x := in.x
	for i, l := range m.Layers {
		t.acts = append(t.acts, x)
		s, out, off := m.Shapes[i], m.Shapes[i+1], m.Offsets[i]
		switch l := l.(type) {
		case nn.Conv2d:
			w := l.OutC * s.C * l.K * l.K
			weights := block(m, p, off, off+w, l.OutC, s.C, l.K*l.K)
			if s.C == 1 {
				x = shiftedConv(padHW(x, l.Pad), weights, l.K, out)
			} else {
				patches := unfold(padHW(x, l.Pad), l.K, out.H, out.W) // [models, b, Ho, Wo, C, k*k]
				x = Einsum("wbhvcq,wocq->wbhvo", patches, weights)
			}
			x = Add(x, block(m, p, off+w, m.Offsets[i+1], 1, 1, 1, l.OutC))
		case nn.MaxPool2:
			x = ReduceMax(pool6(x, s, out), 3, 5)
		case nn.ReLU:
			x = Max(x, ZerosLike(x))
		case nn.Flatten:
			dims := x.Shape().Dimensions
			x = Reshape(TransposeAllAxes(x, 0, 1, 4, 2, 3), dims[0], dims[1], s.Size()) // C x H x W order
		case nn.Linear:
			w := l.OutF * s.Size()
			x = Einsum("wbi,woi->wbo", x, block(m, p, off, off+w, l.OutF, s.Size()))
			x = Add(x, block(m, p, off+w, m.Offsets[i+1], 1, l.OutF))
		case nn.Dropout:
			if masks != nil {
				mask := masks[0]
				masks = masks[1:]
				if s.Spatial {
					mask = TransposeAllAxes(mask, 0, 1, 3, 4, 2)
				}
				t.masks = append(t.masks, mask)
				x = Mul(x, mask)
			}
		case nn.EmbeddingBag:
			models := p.Shape().Dimensions[0]
			emb := Reshape(block(m, p, off, m.Offsets[i+1], l.Vocab, l.Dim), models*l.Vocab, l.Dim)
			d := in.rows.Shape().Dimensions // [models, b, L]
			rows := Reshape(Gather(emb, Reshape(in.rows, d[0]*d[1]*d[2], 1)), d[0], d[1], d[2], l.Dim)
			x = ReduceSum(Mul(rows, ExpandAxes(in.bagW, -1)), 2)
		}
	}
	t.acts = append(t.acts, x)
	return t
}

// graphBackward returns the gradient [models, Params] of the loss whose
// gradient with respect to the logits is dlogits.
func graphBackward(m *nn.Model, p *Node, t *graphTape, dlogits *Node) *Node {
	grads := make([]*Node, 0, 2*len(m.Layers)) // parameter blocks, last layer first
	dy := dlogits
	masks := len(t.masks)
	for i := len(m.Layers) - 1; i >= 0; i-- {
		x, y := t.acts[i], t.acts[i+1]
		s, out, off := m.Shapes[i], m.Shapes[i+1], m.Offsets[i]
		needDx := i > 0
		var dx *Node
		switch l := m.Layers[i].(type) {
		case nn.Conv2d:
			w := l.OutC * s.C * l.K * l.K
			models := x.Shape().Dimensions[0]
			var dw *Node
			if s.C == 1 {
				dw = shiftedConvWeightGrad(padHW(x, l.Pad), dy, l.K)
			} else {
				dw = Einsum("wbhvo,wbhvcq->wocq", dy, unfold(padHW(x, l.Pad), l.K, out.H, out.W))
			}
			grads = append(grads, ReduceSum(dy, 1, 2, 3), Reshape(dw, models, w))
			if needDx {
				dx = convInputGrad(dy, block(m, p, off, off+w, l.OutC, s.C, l.K*l.K), l.K, s.H+2*l.Pad, s.W+2*l.Pad)
				if l.Pad > 0 {
					dx = Slice(dx, AxisRange(), AxisRange(), AxisRange(l.Pad, l.Pad+s.H), AxisRange(l.Pad, l.Pad+s.W),
						AxisRange())
				}
			}
		case nn.MaxPool2:
			if needDx {
				dx = poolBackward(x, y, dy, s, out)
			}
		case nn.ReLU:
			if needDx {
				dx = Mul(dy, ConvertDType(GreaterThan(x, ZerosLike(x)), dtypes.Float32))
			}
		case nn.Flatten:
			if needDx {
				d := x.Shape().Dimensions
				dx = TransposeAllAxes(Reshape(dy, d[0], d[1], s.C, s.H, s.W), 0, 1, 3, 4, 2)
			}
		case nn.Linear:
			models := x.Shape().Dimensions[0]
			w := l.OutF * s.Size()
			grads = append(grads, ReduceSum(dy, 1), Reshape(Einsum("wbo,wbi->woi", dy, x), models, w))
			if needDx {
				dx = Einsum("wbo,woi->wbi", dy, block(m, p, off, off+w, l.OutF, s.Size()))
			}
		case nn.Dropout:
			if needDx {
				if len(t.masks) > 0 {
					masks--
					dx = Mul(dy, t.masks[masks])
				} else {
					dx = dy
				}
			}
		case nn.EmbeddingBag:
			models := p.Shape().Dimensions[0]
			rows := t.in.rows
			n := rows.Shape().Size()
			upd := Mul(ExpandAxes(dy, 2), ExpandAxes(t.in.bagW, -1)) // [models, b, L, dim]
			zeros := Zeros(p.Graph(), shapes.Make(dtypes.Float32, models*l.Vocab, l.Dim))
			demb := ScatterSum(zeros, Reshape(rows, n, 1), Reshape(upd, n, l.Dim), false, false)
			grads = append(grads, Reshape(demb, models, l.Vocab*l.Dim))
		}
		dy = dx
	}
	for a, b := 0, len(grads)-1; a < b; a, b = a+1, b-1 {
		grads[a], grads[b] = grads[b], grads[a]
	}
	return Concatenate(grads, 1)
}

// crossEntropyGraph returns, for logits [models, b, classes], labels
// [models, b] and sample weights [models, b] (1/len for a batch's samples,
// 0 for padding), each model's weighted loss [models], the gradient of
// their sum with respect to the logits, and per sample whether the argmax
// is the label.
func crossEntropyGraph(logits, labels, weights *Node, classes int) (loss, dlogits, hits *Node) {
	onehot := OneHot(labels, classes, dtypes.Float32)
	logp := LogSoftmax(logits, -1)
	ce := Neg(ReduceSum(Mul(logp, onehot), -1))
	loss = ReduceSum(Mul(ce, weights), 1)
	dlogits = Mul(Sub(Exp(logp), onehot), ExpandAxes(weights, -1))
	hits = Equal(ArgMax(logits, -1, dtypes.Int32), labels)
	return loss, dlogits, hits
}

// padHW adds pad zeros around the spatial axes of x [models, b, H, W, C]
// (by concatenation, which every backend has).
func padHW(x *Node, pad int) *Node {
	return padSpatial(x, pad, pad, pad, pad)
}

// padSpatial adds zeros above, below, left and right of the spatial axes
// of x [models, b, H, W, C].
func padSpatial(x *Node, top, bottom, left, right int) *Node {
	g := x.Graph()
	zeros := func(dims ...int) *Node { return Zeros(g, shapes.Make(dtypes.Float32, dims...)) }
	d := x.Shape().Dimensions
	parts := []*Node{x}
	if top > 0 {
		parts = append([]*Node{zeros(d[0], d[1], top, d[3], d[4])}, parts...)
	}
	if bottom > 0 {
		parts = append(parts, zeros(d[0], d[1], bottom, d[3], d[4]))
	}
	if len(parts) > 1 {
		x = Concatenate(parts, 2)
	}
	d = x.Shape().Dimensions
	parts = []*Node{x}
	if left > 0 {
		parts = append([]*Node{zeros(d[0], d[1], d[2], left, d[4])}, parts...)
	}
	if right > 0 {
		parts = append(parts, zeros(d[0], d[1], d[2], right, d[4]))
	}
	if len(parts) > 1 {
		x = Concatenate(parts, 3)
	}
	return x
}

// unfold returns the k x k patches of x [models, b, h, w, C] at the ho x wo
// output positions as [models, b, ho, wo, C, k*k] (patch q = (di, dj) at
// (oi, oj) is pixel (oi+di, oj+dj)): a stack of shifted slices.
func unfold(x *Node, k, ho, wo int) *Node {
	var shifted []*Node
	for di := 0; di < k; di++ {
		for dj := 0; dj < k; dj++ {
			shifted = append(shifted, shift(x, di, dj, ho, wo))
		}
	}
	return Stack(shifted, 5)
}

// shift is the k x k patch position q = (di, dj) of every output
// position of x [models, b, h, w, C]: pixels (oi+di, oj+dj) for the
// ho x wo outputs.
func shift(x *Node, di, dj, ho, wo int) *Node {
	return Slice(x, AxisRange(), AxisRange(), AxisRange(di, di+ho), AxisRange(dj, dj+wo), AxisRange())
}

// shiftedConv is a convolution of one input channel without unfolded
// patches: x [models, b, h, w, 1] (padded), weights [models, outC, 1, k*k];
// the k*k shifted inputs times their weights, summed in patch order:
// elementwise work XLA can fuse into one pass over x (GoMLX's Go backend
// runs it as k*k passes).
func shiftedConv(x, weights *Node, k int, out nn.Shape) *Node {
	models, outC := weights.Shape().Dimensions[0], weights.Shape().Dimensions[1]
	var y *Node
	for q := range k * k {
		wq := Reshape(Slice(weights, AxisRange(), AxisRange(), AxisRange(), AxisElem(q)), models, 1, 1, 1, outC)
		term := Mul(shift(x, q/k, q%k, out.H, out.W), wq)
		if y == nil {
			y = term
		} else {
			y = Add(y, term)
		}
	}
	return y
}

// shiftedConvWeightGrad is shiftedConv's weight gradient [models, outC,
// 1, k*k]: for each patch position, the output gradient dy [models, b,
// ho, wo, outC] times the shifted input, reduced over samples and
// positions (a fused multiply-reduce; no unfolded patches).
func shiftedConvWeightGrad(x, dy *Node, k int) *Node {
	d := dy.Shape().Dimensions
	qs := make([]*Node, k*k)
	for q := range qs {
		qs[q] = ReduceSum(Mul(dy, shift(x, q/k, q%k, d[2], d[3])), 1, 2, 3) // [models, outC]
	}
	return Reshape(Stack(qs, 2), d[0], d[4], 1, k*k)
}

// convInputGrad is a convolution's input gradient on the padded h x w
// input: the patches' gradient dy x w [models, b, ho, wo, C, k*k] in one
// product batched over models (dy [models, b, ho, wo, outC] read once),
// then each patch position q = (di, dj) shifted back onto the input by
// (di, dj) and summed in patch order — elementwise work XLA fuses into
// one pass. (One product makes all C*k*k columns; a product per patch
// position, C columns each, would read dy k*k times.)
func convInputGrad(dy, weights *Node, k, h, w int) *Node {
	d := dy.Shape().Dimensions
	models, b, ho, wo, c := d[0], d[1], d[2], d[3], weights.Shape().Dimensions[2]
	dpatches := Einsum("wbhvo,wocq->wbhvcq", dy, weights)
	var sum *Node
	for q := range k * k {
		di, dj := q/k, q%k
		at := Reshape(
			Slice(dpatches, AxisRange(), AxisRange(), AxisRange(), AxisRange(), AxisRange(), AxisElem(q)),
			models,
			b,
			ho,
			wo,
			c,
		)
		term := padSpatial(at, di, h-ho-di, dj, w-wo-dj)
		if sum == nil {
			sum = term
		} else {
			sum = Add(sum, term)
		}
	}
	return sum
}

// pool6 views x [models, b, H, W, C] as [models, b, H/2, 2, W/2, 2, C],
// dropping an odd last row and column as the CPU engine does.
func pool6(x *Node, in, out nn.Shape) *Node {
	d := x.Shape().Dimensions
	if in.H%2 != 0 || in.W%2 != 0 {
		x = Slice(x, AxisRange(), AxisRange(), AxisRange(0, 2*out.H), AxisRange(0, 2*out.W), AxisRange())
	}
	return Reshape(x, d[0], d[1], out.H, 2, out.W, 2, in.C)
}

// poolBackward routes each gradient to the first window position (row
// major) holding the maximum, as the CPU engine does.
func poolBackward(x, y, dy *Node, in, out nn.Shape) *Node {
	x6 := pool6(x, in, out)
	top, d := ExpandAxes(y, 3, 5), ExpandAxes(dy, 3, 5) // [models, b, Ho, 1, Wo, 1, C]
	taken := ConvertDType(ZerosLike(top), dtypes.Bool)
	var rows []*Node
	for a := range 2 {
		var cols []*Node
		for c := range 2 {
			v := Slice(x6, AxisRange(), AxisRange(), AxisRange(), AxisElem(a), AxisRange(), AxisElem(c), AxisRange())
			hit := And(Equal(v, top), LogicalNot(taken))
			taken = Or(taken, hit)
			cols = append(cols, Mul(d, ConvertDType(hit, dtypes.Float32)))
		}
		rows = append(rows, Concatenate(cols, 5))
	}
	dims := x.Shape().Dimensions
	dx := Reshape(Concatenate(rows, 3), dims[0], dims[1], 2*out.H, 2*out.W, in.C)
	return padSpatial(dx, 0, in.H-2*out.H, 0, in.W-2*out.W) // the dropped odd row and column get no gradient
}
