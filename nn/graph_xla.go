//go:build xla

package nn

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The model as a GoMLX graph over a leading axis of models: every model's
// parameters are a row of p [models, Params] in the CPU engine's layout,
// activations are [models, b, C, H, W] or [models, b, F]. The backward
// pass is written out layer by layer, as the CPU engine's is, so every
// product — forward and backward — is one matrix product batched over
// models (GoMLX's automatic gradient of a product is a broadcast multiply
// and a reduction), and a round of K steps can be one program.

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
func (m *Model) block(p *Node, from, to int, dims ...int) *Node {
	models := p.Shape().Dimensions[0]
	return Reshape(Slice(p, AxisRange(), AxisRange(from, to)), append([]int{models}, dims...)...)
}

// graphForward runs every model on its batch; masks (training only)
// follow the dropout layers.
func (m *Model) graphForward(p *Node, in graphInput, masks []*Node) *graphTape {
	t := &graphTape{in: in, masks: masks}
	x := in.x
	for i, l := range m.layers {
		t.acts = append(t.acts, x)
		s, out, off := m.shapes[i], m.shapes[i+1], m.offsets[i]
		switch l := l.(type) {
		case conv2d:
			w := l.outC * s.C * l.k * l.k
			patches := im2col(padHW(x, l.pad), l.k, out.H, out.W, false)
			y := Einsum("qpwbc,wocq->wbop", patches, m.block(p, off, off+w, l.outC, s.C, l.k*l.k))
			y = Add(y, m.block(p, off+w, m.offsets[i+1], 1, l.outC, 1))
			dims := y.Shape().Dimensions
			x = Reshape(y, dims[0], dims[1], out.C, out.H, out.W)
		case maxPool2:
			x = ReduceMax(pool5(x, s, out), 4, 6)
		case relu:
			x = Max(x, ZerosLike(x))
		case flatten:
			dims := x.Shape().Dimensions
			x = Reshape(x, dims[0], dims[1], s.size())
		case linear:
			w := l.outF * s.size()
			x = Einsum("wbi,woi->wbo", x, m.block(p, off, off+w, l.outF, s.size()))
			x = Add(x, m.block(p, off+w, m.offsets[i+1], 1, l.outF))
		case dropout:
			if masks != nil {
				x = Mul(x, masks[0])
				masks = masks[1:]
			}
		case embeddingBag:
			models := p.Shape().Dimensions[0]
			emb := Reshape(m.block(p, off, m.offsets[i+1], l.vocab, l.dim), models*l.vocab, l.dim)
			d := in.rows.Shape().Dimensions // [models, b, L]
			rows := Reshape(Gather(emb, Reshape(in.rows, d[0]*d[1]*d[2], 1)), d[0], d[1], d[2], l.dim)
			x = ReduceSum(Mul(rows, ExpandAxes(in.bagW, -1)), 2)
		}
	}
	t.acts = append(t.acts, x)
	return t
}

// graphBackward returns the gradient [models, Params] of the loss whose
// gradient with respect to the logits is dlogits.
func (m *Model) graphBackward(p *Node, t *graphTape, dlogits *Node) *Node {
	grads := make([]*Node, 0, 2*len(m.layers)) // parameter blocks, last layer first
	dy := dlogits
	masks := len(t.masks)
	for i := len(m.layers) - 1; i >= 0; i-- {
		x, y := t.acts[i], t.acts[i+1]
		s, out, off := m.shapes[i], m.shapes[i+1], m.offsets[i]
		needDx := i > 0
		var dx *Node
		switch l := m.layers[i].(type) {
		case conv2d:
			w := l.outC * s.C * l.k * l.k
			models, b := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
			d := Reshape(dy, models, b, out.C, out.H*out.W)
			patches := im2col(padHW(x, l.pad), l.k, out.H, out.W, false)
			dw := Einsum("wbop,qpwbc->wocq", d, patches)
			grads = append(grads, Reshape(ReduceSum(d, 1, 3), models, l.outC), Reshape(dw, models, w))
			if needDx {
				// The input gradient is the full correlation of dy with the
				// flipped kernels: dy padded by k-1, unfolded, one product.
				h, wd := s.H+2*l.pad, s.W+2*l.pad
				dpatches := im2col(padHW(dy, l.k-1), l.k, h, wd, true) // [k*k, h*w, models, b, O]
				kern := m.block(p, off, off+w, l.outC, s.C, l.k*l.k)
				dx = Reshape(Einsum("qpwbo,wocq->wbcp", dpatches, kern), models, b, s.C, h, wd)
				if l.pad > 0 {
					dx = Slice(dx, AxisRange(), AxisRange(), AxisRange(), AxisRange(l.pad, l.pad+s.H), AxisRange(l.pad, l.pad+s.W))
				}
			}
		case maxPool2:
			if needDx {
				dx = poolBackward(x, y, dy, s, out)
			}
		case relu:
			if needDx {
				dx = Mul(dy, ConvertDType(GreaterThan(x, ZerosLike(x)), dtypes.Float32))
			}
		case flatten:
			if needDx {
				dims := x.Shape().Dimensions
				dx = Reshape(dy, dims...)
			}
		case linear:
			models := x.Shape().Dimensions[0]
			w := l.outF * s.size()
			grads = append(grads, ReduceSum(dy, 1), Reshape(Einsum("wbo,wbi->woi", dy, x), models, w))
			if needDx {
				dx = Einsum("wbo,woi->wbi", dy, m.block(p, off, off+w, l.outF, s.size()))
			}
		case dropout:
			if needDx {
				if t.masks != nil {
					masks--
					dx = Mul(dy, t.masks[masks])
				} else {
					dx = dy
				}
			}
		case embeddingBag:
			models := p.Shape().Dimensions[0]
			rows := t.in.rows
			n := rows.Shape().Size()
			upd := Mul(ExpandAxes(dy, 2), ExpandAxes(t.in.bagW, -1)) // [models, b, L, dim]
			zeros := Zeros(p.Graph(), shapes.Make(dtypes.Float32, models*l.vocab, l.dim))
			demb := ScatterSum(zeros, Reshape(rows, n, 1), Reshape(upd, n, l.dim), false, false)
			grads = append(grads, Reshape(demb, models, l.vocab*l.dim))
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

// padHW adds pad zeros around the last two axes of x [models, b, C, H, W]
// (by concatenation, which every backend has).
func padHW(x *Node, pad int) *Node {
	if pad == 0 {
		return x
	}
	d := x.Shape().Dimensions
	g := x.Graph()
	rows := Zeros(g, shapes.Make(dtypes.Float32, d[0], d[1], d[2], pad, d[4]))
	x = Concatenate([]*Node{rows, x, rows}, 3)
	cols := Zeros(g, shapes.Make(dtypes.Float32, d[0], d[1], d[2], d[3]+2*pad, pad))
	return Concatenate([]*Node{cols, x, cols}, 4)
}

// im2col unfolds x [models, b, C, h, w] into patches [k*k, ho*wo, models,
// b, C] by one gather: patch q = (di, dj) at output (oi, oj) is pixel
// (oi+di, oj+dj), or with flip pixel (oi+k-1-di, oj+k-1-dj).
func im2col(x *Node, k, ho, wo int, flip bool) *Node {
	d := x.Shape().Dimensions
	models, b, c, h, w := d[0], d[1], d[2], d[3], d[4]
	pixels := Reshape(TransposeAllAxes(x, 3, 4, 0, 1, 2), h*w, models*b*c)
	idx := make([]int32, 0, k*k*ho*wo)
	for di := 0; di < k; di++ {
		for dj := 0; dj < k; dj++ {
			for oi := 0; oi < ho; oi++ {
				for oj := 0; oj < wo; oj++ {
					r, c := di, dj
					if flip {
						r, c = k-1-di, k-1-dj
					}
					idx = append(idx, int32((oi+r)*w+oj+c))
				}
			}
		}
	}
	at := Const(x.Graph(), tensors.FromFlatDataAndDimensions(idx, len(idx), 1))
	return Reshape(Gather(pixels, at), k*k, ho*wo, models, b, c)
}

// pool5 views x [models, b, C, H, W] as [models, b, C, H/2, 2, W/2, 2],
// dropping an odd last row and column as the CPU engine does.
func pool5(x *Node, in, out shape) *Node {
	d := x.Shape().Dimensions
	if in.H%2 != 0 || in.W%2 != 0 {
		x = Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(0, 2*out.H), AxisRange(0, 2*out.W))
	}
	return Reshape(x, d[0], d[1], in.C, out.H, 2, out.W, 2)
}

// poolBackward routes each gradient to the first window position (row
// major) holding the maximum, as the CPU engine does.
func poolBackward(x, y, dy *Node, in, out shape) *Node {
	x5 := pool5(x, in, out)
	top, d := ExpandAxes(y, 4, 6), ExpandAxes(dy, 4, 6) // [models, b, C, Ho, 1, Wo, 1]
	taken := ConvertDType(ZerosLike(top), dtypes.Bool)
	var rows []*Node
	for a := range 2 {
		var cols []*Node
		for c := range 2 {
			v := Slice(x5, AxisRange(), AxisRange(), AxisRange(), AxisRange(), AxisElem(a), AxisRange(), AxisElem(c))
			hit := And(Equal(v, top), LogicalNot(taken))
			taken = Or(taken, hit)
			cols = append(cols, Mul(d, ConvertDType(hit, dtypes.Float32)))
		}
		rows = append(rows, Concatenate(cols, 6))
	}
	dims := x.Shape().Dimensions
	dx := Reshape(Concatenate(rows, 4), dims[0], dims[1], in.C, 2*out.H, 2*out.W)
	g := x.Graph() // the dropped odd row and column get no gradient
	if in.H%2 != 0 {
		dx = Concatenate([]*Node{dx, Zeros(g, shapes.Make(dtypes.Float32, dims[0], dims[1], in.C, 1, 2*out.W))}, 3)
	}
	if in.W%2 != 0 {
		dx = Concatenate([]*Node{dx, Zeros(g, shapes.Make(dtypes.Float32, dims[0], dims[1], in.C, in.H, 1))}, 4)
	}
	return dx
}
