//go:build xla

package gpu

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/ump-lab/ump/nn"
)

// The programs of an Exact cohort: the round's step of gradients, gossip
// and average and the evaluation in the CPU engine's order (docs/gpu.md).

// exactGrad is an Exact cohort's step of gradients: a While loop of one
// trip per model (row), each trip the model's exactGradient on its batch,
// so that every row's loss and gradient have the CPU engine's bits. x is
// [rows, P]; idx and weights [rows, b] are the step's sample indices and
// weights (0 past a short batch's end), packed its dropout masks [rows, b,
// words], split the resident training split. It returns the losses [rows]
// (float64) and the gradients [rows, P]. The models take their trips one
// after another: the study's models side by side are not built yet.
func (c *xlaCohort) exactGrad(x, idx, weights *Node, packed, split []*Node) (loss, grad *Node) {
	m := c.model
	rows, p := x.Shape().Dimensions[0], m.Params
	drops := dropoutLayers(m)
	outside := append(append([]*Node{x, idx, weights}, packed...), split...)
	g := x.Graph()
	negZero := func(dtype dtypes.DType, dims ...int) *Node { // -0 + v is v for every v, -0 and NaN included
		return BroadcastToDims(Scalar(g, dtype, math.Copysign(0, -1)), dims...)
	}
	state := []*Node{negZero(dtypes.Float64, rows), negZero(dtypes.Float32, rows, p)}
	out := countedLoop(g, rows, 1, outside, state, func(b *loopBody, r *Node, acc []*Node) []*Node {
		row := func(v *Node) *Node { return Gather(b.use(v), Reshape(r, 1, 1)) } // [1, ...]: v's row r
		in, labels := c.gatherInput(b.useAll(split), row(idx), 1)
		var masks []*Node
		for d, li := range drops {
			masks = append(masks, unpackMask(row(packed[d]), m.Shapes[li], m.Layers[li].(nn.Dropout)))
		}
		w := row(weights)
		count := ReduceAllSum(ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Int32))
		l, gr, err := exactGradient(m, Reshape(row(x), p), exactInput(m, in.x), Reshape(labels, -1), count, masks)
		if err != nil {
			panic(err) // NewCohort checked exactCovers
		}
		at := Reshape(r, 1, 1) // each row written once: added to its -0
		return []*Node{ScatterSum(acc[0], at, Reshape(l, 1), true, true), ScatterSum(acc[1], at, Reshape(gr, 1, p), true, true)}
	})
	return out[0], out[1]
}

// exactInput is one model's batch as gatherInput lays it out, [1, b, H,
// W, C] images or [1, b, F] features, as exactForward takes it: [b, C, H,
// W] or [b, F].
func exactInput(m *nn.Model, x *Node) *Node {
	d := x.Shape().Dimensions
	if !m.In.Spatial {
		return Reshape(x, d[1], d[2])
	}
	return Reshape(TransposeAllAxes(x, 0, 1, 4, 2, 3), d[1], m.In.C, m.In.H, m.In.W)
}

// exactMix is the gossip x_i = sum_j w_ij x_j as algorithms.Mixing's Apply
// computes it: in float64, the terms w_ij float64(x_j) rounded each, added
// with j ascending from +0, the zero weights left out (Apply's rows list
// only the others), rounded to float32 once. x is [cells*n, P], mixing
// [cells, n, n].
func exactMix(x, mixing *Node, cells, n int) *Node {
	p := x.Shape().Dimensions[1]
	x64 := Reshape(ConvertDType(x, dtypes.Float64), cells, n, p)
	acc := Zeros(x.Graph(), shapes.Make(dtypes.Float64, cells, n, p))
	for j := range n {
		w := BroadcastToDims(Slice(mixing, AxisRange(), AxisRange(), AxisElem(j)), cells, n, p)
		xj := BroadcastToDims(Slice(x64, AxisRange(), AxisElem(j), AxisRange()), cells, n, p)
		acc = Where(NotEqual(w, ZerosLike(w)), Add(acc, Mul(w, xj)), acc)
	}
	return Reshape(ConvertDType(acc, dtypes.Float32), cells*n, p)
}

// exactMean is every worker's x replaced by its cell's exactAverage.
// x is [cells*n, P].
func exactMean(x *Node, cells, n int) *Node {
	p := x.Shape().Dimensions[1]
	return Reshape(BroadcastToDims(Reshape(exactAverage(x, cells, n), cells, 1, p), cells, n, p), cells*n, p)
}

// exactAverage is each cell's mean over its n workers of x [cells*n, P]
// as algorithms.Mean and nn.Average compute it: float64(x_j) added with j
// ascending from +0, divided by n (a division: DivScalar multiplies by
// 1/n), rounded to float32 once; [cells, P].
func exactAverage(x *Node, cells, n int) *Node {
	p := x.Shape().Dimensions[1]
	x64 := Reshape(ConvertDType(x, dtypes.Float64), cells, n, p)
	acc := Zeros(x.Graph(), shapes.Make(dtypes.Float64, cells, 1, p))
	for j := range n {
		acc = Add(acc, Slice(x64, AxisRange(), AxisElem(j), AxisRange()))
	}
	return Reshape(ConvertDType(Div(acc, Scalar(x.Graph(), dtypes.Float64, n)), dtypes.Float32), cells, p)
}

// exactScale is n a with the product rounded to float32 on its own, as
// the CPU's optimizer rounds it (also where it adds it to another vector
// in the same pass): the float64 product, exact, converted, so that no
// backend fuses it into an add that follows.
func exactScale(n, a *Node) *Node {
	return ConvertDType(Mul(ConvertDType(n, dtypes.Float64), ConvertDType(a, dtypes.Float64)), dtypes.Float32)
}

// exactEvalGraph is an Exact cohort's evaluation program of `cells`
// cells: inputs the models x [cells*workers, P], then the resident test
// split (padded to a multiple of nn.EvalBatch); outputs per model — the
// rows, then each cell's average model (exactAverage) — the CPU engine's
// Evaluate sums: each chunk's mean loss times its size, added in chunk
// order (float64), and the hits (float64). A While loop has one trip per
// model and, within it, one per chunk of nn.EvalBatch test samples, the
// CPU engine's chunks (one chunk of them all where the split is shorter).
// The consensus distances are the host's (hostDistances).
func (c *xlaCohort) exactEvalGraph(cells int) func(inputs []*Node) []*Node {
	return func(inputs []*Node) []*Node {
		m := c.model
		x, split := inputs[0], inputs[1:]
		g := x.Graph()
		models := Concatenate([]*Node{x, exactAverage(x, cells, c.shape.Workers)}, 0)
		k := models.Shape().Dimensions[0]
		zero := Zeros(g, shapes.Make(dtypes.Float64, k))
		return countedLoop(g, k, 1, append([]*Node{models}, split...), []*Node{zero, zero}, func(b *loopBody, i *Node, sums []*Node) []*Node {
			g := i.Graph()
			p := Reshape(Gather(b.use(models), Reshape(i, 1, 1)), m.Params)
			test := b.useAll(split)
			start := []*Node{Scalar(g, dtypes.Float64, 0), Scalar(g, dtypes.Float64, 0)}
			chunk := min(nn.EvalBatch, c.test.len)
			model := countedLoop(g, c.test.len, chunk, append([]*Node{p}, test...), start, func(cb *loopBody, lo *Node, acc []*Node) []*Node {
				g := lo.Graph()
				sample := Add(Iota(g, shapes.Make(dtypes.Int32, 1, chunk), 1), lo)
				in, labels := c.gatherInput(cb.useAll(test), sample, 1)
				count := Min(Sub(Scalar(g, dtypes.Int32, c.test.len), lo), Scalar(g, dtypes.Int32, chunk))
				acts, err := exactForward(m, cb.use(p), exactInput(m, in.x), nil)
				if err != nil {
					panic(err) // NewCohort checked exactCovers
				}
				loss, correct, _ := crossEntropy64(acts[len(acts)-1], Reshape(labels, -1), count)
				return []*Node{Add(acc[0], Mul(loss, ConvertDType(count, dtypes.Float64))), Add(acc[1], ConvertDType(correct, dtypes.Float64))}
			})
			mine := Equal(Iota(g, shapes.Make(dtypes.Int32, k), 0), i)
			return []*Node{Where(mine, BroadcastToDims(model[0], k), sums[0]), Where(mine, BroadcastToDims(model[1], k), sums[1])}
		})
	}
}

// hostDistances are the consensus distances of `cells` cells' models x
// [cells*workers, P], as the CPU computes them (nn.ConsensusDistance, one
// sum of every worker's every parameter in order), on the host.
func (c *xlaCohort) hostDistances(x *tensors.Tensor, cells int) ([]float64, error) {
	flat, err := tensors.CopyFlatData[float32](x)
	if err != nil {
		return nil, fmt.Errorf("gpu engine: downloading the models: %w", err)
	}
	n, p := c.shape.Workers, c.model.Params
	out := make([]float64, cells)
	for ci := range out {
		rows := make([][]float32, n)
		for i := range rows {
			rows[i] = flat[(ci*n+i)*p:][:p]
		}
		out[ci] = nn.ConsensusDistance(rows, nn.Average(rows))
	}
	return out, nil
}
