//go:build xla

package gpu

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// The exact program's convolutions and pooling, in the CPU engine's order
// (nn.ConvPlanes, nn.ConvLanes; its pooling's maxima), over activations
// laid out [b, C, H, W].

// exactConv is a direct convolution of x [b, C, H, W] by the filters w
// [outC, C, k, k] with biases [outC], zero-padded by pad: each output
// starts at its bias and adds float32(w·x) for each input channel, filter
// row and column in order, the product rounded to float32 before the add
// (as a float64 product, exact, converted: no backend can fuse it into
// the add). skipPadRows leaves out the taps on rows of padding
// (nn.ConvPlanes), which are not added at all: adding their +0 or -0 would
// turn a -0 sum into +0. Columns of padding are added, as the CPU adds
// them.
func exactConv(x, w, bias *Node, pad int, skipPadRows bool) *Node {
	g := x.Graph()
	d, wd := x.Shape().Dimensions, w.Shape().Dimensions
	b, chans, h, wid, outC, k := d[0], d[1], d[2], d[3], wd[0], wd[2]
	oh, ow := h+2*pad-k+1, wid+2*pad-k+1
	xp := x
	if pad > 0 {
		zeros := func(dims ...int) *Node { return Zeros(g, shapes.Make(dtypes.Float32, dims...)) }
		rows := Concatenate([]*Node{zeros(b, chans, pad, wid), x, zeros(b, chans, pad, wid)}, 2)
		xp = Concatenate([]*Node{zeros(b, chans, h+2*pad, pad), rows, zeros(b, chans, h+2*pad, pad)}, 3)
	}
	dims := []int{b, outC, oh, ow}
	acc := BroadcastToDims(Reshape(bias, 1, outC, 1, 1), dims...)
	for ic := range chans {
		for ki := range k {
			var valid *Node // the output rows r whose tap row r+ki is not padding
			if skipPadRows && pad > 0 {
				on := make([]bool, oh)
				for r := range on {
					on[r] = r+ki >= pad && r+ki < pad+h
				}
				valid = BroadcastToDims(Reshape(Const(g, on), 1, 1, oh, 1), dims...)
			}
			for kj := range k {
				xs := BroadcastToDims(Slice(xp, AxisRange(), AxisElem(ic), AxisRange(ki, ki+oh), AxisRange(kj, kj+ow)), dims...)
				ws := BroadcastToDims(Reshape(Slice(w, AxisRange(), AxisElem(ic), AxisElem(ki), AxisElem(kj)), 1, outC, 1, 1), dims...)
				term := ConvertDType(Mul(ConvertDType(ws, dtypes.Float64), ConvertDType(xs, dtypes.Float64)), dtypes.Float32)
				if valid != nil {
					acc = Where(valid, Add(acc, term), acc)
				} else {
					acc = Add(acc, term)
				}
			}
		}
	}
	return acc
}

// exactMaxPool2 takes the 2 x 2 windows' maxima of x [b, C, H, W] (a last
// odd row or column left out) as the CPU engine does:
// max(max(x00, x01), max(x10, x11)) with Go's max.
func exactMaxPool2(x *Node) *Node {
	d := x.Shape().Dimensions
	oh, ow := d[2]/2, d[3]/2
	at := func(di, dj int) *Node { // each window's element (di, dj)
		return Slice(x, AxisRange(), AxisRange(), AxisRange(di, 2*oh).Stride(2), AxisRange(dj, 2*ow).Stride(2))
	}
	return goMax(goMax(at(0, 0), at(0, 1)), goMax(at(1, 0), at(1, 1)))
}

// goMax is Go's max of float32s, element by element: a NaN if either is
// NaN, +0 of the zeros of both signs, else the larger.
func goMax(a, b *Node) *Node {
	bits := func(v *Node) *Node { return Bitcast(v, dtypes.Int32) }
	same := Bitcast(BitwiseAnd(bits(a), bits(b)), dtypes.Float32) // equal values: a's bits; +0 and -0: +0
	larger := Where(GreaterThan(a, b), a, Where(GreaterThan(b, a), b, same))
	return Where(IsNaN(a), a, Where(IsNaN(b), b, larger))
}
