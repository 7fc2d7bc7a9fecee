//go:build xla

package exact

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/gpu/loop"
)

// The exact program's convolutions and pooling, in the CPU engine's order
// (nn.ConvPlanes, nn.ConvLanes; its pooling's maxima), of M models side
// by side, over activations laid out [M, b, C, H, W].

// conv is a direct convolution of x [M, b, C, H, W] by the filters w
// [M, outC, C, k, k] with biases [M, outC], zero-padded by pad: each
// output starts at its bias and adds float32(w·x) for each input channel,
// filter row and column in order, the product rounded to float32 before
// the add (as a float64 product, exact, converted: no backend can fuse it
// into the add). skipPadRows leaves out the taps on rows of padding
// (nn.ConvPlanes), which are not added at all: adding their +0 or -0
// would turn a -0 sum into +0. Columns of padding are added, as the CPU
// adds them.
func conv(x, w, bias *Node, pad int, skipPadRows bool) *Node {
	g := x.Graph()
	d, wd := x.Shape().Dimensions, w.Shape().Dimensions
	models, b, chans, h, wid, outC, k := d[0], d[1], d[2], d[3], d[4], wd[1], wd[3]
	oh, ow := h+2*pad-k+1, wid+2*pad-k+1
	xp := padded(padded(x, 3, pad, pad, 0), 4, pad, pad, 0)
	dims := []int{models, b, outC, oh, ow}
	acc := BroadcastToDims(Reshape(bias, models, 1, outC, 1, 1), dims...)
	for ic := range chans {
		for ki := range k {
			var valid *Node // the output rows r whose tap row r+ki is not padding
			if skipPadRows && pad > 0 {
				on := make([]bool, oh)
				for r := range on {
					on[r] = r+ki >= pad && r+ki < pad+h
				}
				valid = BroadcastToDims(Reshape(Const(g, on), 1, 1, 1, oh, 1), dims...)
			}
			for kj := range k {
				xs := BroadcastToDims(
					Slice(xp, AxisRange(), AxisRange(), AxisElem(ic), AxisRange(ki, ki+oh), AxisRange(kj, kj+ow)),
					dims...)
				ws := BroadcastToDims(
					Reshape(
						Slice(w, AxisRange(), AxisRange(), AxisElem(ic), AxisElem(ki), AxisElem(kj)),
						models,
						1,
						outC,
						1,
						1,
					),
					dims...)
				term := ConvertDType(
					Mul(ConvertDType(ws, dtypes.Float64), ConvertDType(xs, dtypes.Float64)),
					dtypes.Float32,
				)
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

// maxPool2 takes the 2 x 2 windows' maxima of x [M, b, C, H, W] (a last
// odd row or column left out) as the CPU engine does:
// max(max(x00, x01), max(x10, x11)) with Go's max.
func maxPool2(x *Node) *Node {
	return goMax(goMax(windowAt(x, 0, 0), windowAt(x, 0, 1)), goMax(windowAt(x, 1, 0), windowAt(x, 1, 1)))
}

// windowAt is element (di, dj) of every 2 x 2 window of x [M, b, C, H,
// W].
func windowAt(x *Node, di, dj int) *Node {
	d := x.Shape().Dimensions
	return Slice(
		x,
		AxisRange(),
		AxisRange(),
		AxisRange(),
		AxisRange(di, d[3]/2*2).Stride(2),
		AxisRange(dj, d[4]/2*2).Stride(2),
	)
}

// goMax is Go's max of float32s, element by element: a NaN if either is
// NaN, +0 of the zeros of both signs, else the larger.
func goMax(a, b *Node) *Node {
	bits := func(v *Node) *Node { return Bitcast(v, dtypes.Int32) }
	same := Bitcast(BitwiseAnd(bits(a), bits(b)), dtypes.Float32) // equal values: a's bits; +0 and -0: +0
	larger := Where(GreaterThan(a, b), a, Where(GreaterThan(b, a), b, same))
	return Where(IsNaN(a), a, Where(IsNaN(b), b, larger))
}

// convInputGrad is the CPU engine's input gradient of a direct
// convolution by w [M, outC, C, k, k] padded by pad, for dy [M, b, outC,
// oh, ow]: the correlation of dy, padded by k-1-pad, with the filters
// flipped and their channels swapped, from +0, the taps on dy's rows of
// padding left out (conv_plane.go's inputGradient).
func convInputGrad(dy, w *Node, pad int) *Node {
	g := dy.Graph()
	models, chans, k := w.Shape().Dimensions[0], w.Shape().Dimensions[2], w.Shape().Dimensions[3]
	flipped := Reverse(Transpose(w, 1, 2), 3, 4) // [M, C, outC, k, k], flipped[ic][oc][t] = w[oc][ic][k*k-1-t]
	return conv(dy, flipped, Zeros(g, shapes.Make(dtypes.Float32, models, chans)), k-1-pad, true)
}

// convWeightGrad is the CPU engine's weight and bias gradients of a
// direct convolution of x [M, b, C, H, W] (padded by pad) with output
// gradient dy [M, b, outC, oh, ow], for filters of k x k. nn.ConvPlanes
// (planeWeightGrad): per tap 16 running sums, sum l over the columns c
// with c mod 16 = l, over samples, rows and blocks of 16 columns in order
// (columns past ow add dy's 0 times the padded input), then added from
// lane 0 to 15; the bias alike over dy alone (real columns only).
// nn.ConvLanes (lanesWeightGrad): per tap one sum over samples, rows and
// columns in order; the bias alike. Every product is rounded to float32
// before its add. The sums run as one loop over (sample, row, block), each
// trip adding termsPerTrip terms in order to every model's every tap's
// sums at once (past the last, dy's -0 times +0).
func convWeightGrad(x, dy *Node, k, pad int, order nn.ConvOrder) (gw, gb *Node) {
	g := x.Graph()
	d, dd := x.Shape().Dimensions, dy.Shape().Dimensions
	models, b, chans, h, wid, outC, oh, ow := d[0], d[1], d[2], d[3], d[4], dd[2], dd[3], dd[4]
	width, step := ow, 1 // the columns each term covers, and the step between terms
	if order == nn.ConvPlanes {
		width = (ow + nn.Lanes - 1) / nn.Lanes * nn.Lanes
		step = nn.Lanes
	}
	// The padded input, wide enough for every term, and its k x k shifted
	// windows: window[:, :, :, t] is [M, b, C, oh, width] for tap t = ki*k + kj.
	xp := padded(padded(x, 3, pad, oh+k-1-pad-h, 0), 4, pad, width+k-1-pad-wid, 0)
	var taps []*Node
	for t := range k * k {
		taps = append(
			taps,
			Slice(xp, AxisRange(), AxisRange(), AxisRange(), AxisRange(t/k, t/k+oh), AxisRange(t%k, t%k+width)),
		)
	}
	window := Stack(taps, 3)             // [M, b, C, k*k, oh, width]
	dyw := padded(dy, 4, 0, width-ow, 0) // columns past ow: dy is 0
	// Each term as a row, term i = (sample, row, block) in order.
	blocks, terms := width/step, b*oh*width/step
	spare := (termsPerTrip - terms%termsPerTrip) % termsPerTrip // terms of -0 to fill the last trip
	dRows := padded(
		Reshape(
			TransposeAllDims(Reshape(dyw, models, b, outC, oh, blocks, step), 1, 3, 4, 0, 2, 5),
			terms,
			models,
			outC,
			step,
		),
		0,
		0,
		spare,
		math.Copysign(0, -1),
	)
	xRows := padded(
		Reshape(
			TransposeAllDims(Reshape(window, models, b, chans, k*k, oh, blocks, step), 1, 4, 5, 0, 2, 3, 6),
			terms,
			models,
			chans,
			k*k,
			step,
		),
		0,
		0,
		spare,
		0,
	)
	zeros := func(dims ...int) *Node { return Zeros(g, shapes.Make(dtypes.Float32, dims...)) }
	sums := loop.Counted(
		g,
		terms+spare,
		termsPerTrip,
		[]*Node{dRows, xRows},
		[]*Node{zeros(models, outC, chans, k*k, step), zeros(models, outC, step)},
		func(body *loop.Body, i *Node, state []*Node) []*Node {
			bg := i.Graph()
			at := func(v int) *Node { return Const(bg, int32(v)) }
			trip := Reshape(Add(Iota(bg, shapes.Make(dtypes.Int32, termsPerTrip), 0), i), termsPerTrip, 1)
			ds, xs := Gather(body.Use(dRows), trip), Gather(body.Use(xRows), trip)
			dims := []int{models, outC, chans, k * k, step}
			f64 := func(v *Node) *Node { return ConvertDType(BroadcastToDims(v, dims...), dtypes.Float64) }
			gw, gb := state[0], state[1]
			for u := range termsPerTrip {
				dv := Reshape(Slice(ds, AxisElem(u)), models, outC, step)
				xv := Reshape(Slice(xs, AxisElem(u)), models, chans, k*k, step)
				c0 := Mul(
					Rem(Add(i, at(u)), at(blocks)),
					at(step),
				) // the block's first column
				real := LessThan(
					Add(Iota(bg, shapes.Make(dtypes.Int32, models, outC, step), 2), c0),
					at(ow),
				) // the bias adds real columns only
				term := ConvertDType(
					Mul(f64(Reshape(dv, models, outC, 1, 1, step)), f64(Reshape(xv, models, 1, chans, k*k, step))),
					dtypes.Float32,
				)
				gw, gb = Add(gw, term), Where(real, Add(gb, dv), gb)
			}
			return []*Node{gw, gb}
		},
	)
	return Reshape(laneTotal(sums[0]), models, outC, chans, k, k), laneTotal(sums[1])
}

// laneTotal adds the last axis's running sums from the first to the last,
// as the CPU engine's laneTotal: a last axis of 1 is the sum itself.
func laneTotal(sums *Node) *Node {
	last := sums.Rank() - 1
	lane := func(l int) *Node { return Squeeze(SliceAxis(sums, last, AxisElem(l)), last) }
	total := lane(0)
	for l := 1; l < sums.Shape().Dimensions[last]; l++ {
		total = Add(total, lane(l))
	}
	return total
}

// maxPool2Backward routes each window's output gradient dy [M, b, C,
// oh, ow] to the first position (row-major) of the window of x [M, b, C,
// H, W] that holds its maximum m (maxPool2's output), the last when the
// window holds a NaN, as the CPU engine's pooling does; every other input
// (and a last odd row or column) gets +0.
func maxPool2Backward(x, m, dy *Node) *Node {
	d := x.Shape().Dimensions
	oh, ow := d[3]/2, d[4]/2
	at := func(di, dj int) *Node { return windowAt(x, di, dj) }
	zero := ZerosLike(dy)
	// The position that takes dy: 0, 1, 2, 3 for (0,0), (0,1), (1,0), (1,1).
	pos := Where(
		Equal(at(0, 0), m),
		ScalarZero(x.Graph(), dtypes.Int32),
		Where(Equal(at(0, 1), m), Const(x.Graph(), int32(1)),
			Where(Equal(at(1, 0), m), Const(x.Graph(), int32(2)), Const(x.Graph(), int32(3)))),
	)
	part := func(p int32) *Node { return Where(Equal(pos, Const(x.Graph(), p)), dy, zero) }
	top := Reshape(Stack([]*Node{part(0), part(1)}, 5), d[0], d[1], d[2], oh, 2*ow)
	bottom := Reshape(Stack([]*Node{part(2), part(3)}, 5), d[0], d[1], d[2], oh, 2*ow)
	dx := Reshape(Stack([]*Node{top, bottom}, 4), d[0], d[1], d[2], 2*oh, 2*ow)
	return padded(padded(dx, 3, 0, d[3]-2*oh, 0), 4, 0, d[4]-2*ow, 0)
}
