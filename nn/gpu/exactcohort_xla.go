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
	"github.com/ump-lab/ump/nn/gpu/exact"
	"github.com/ump-lab/ump/nn/gpu/loop"
)

// The programs of an Exact cohort: the round's step of gradients, gossip
// and average and the evaluation in the CPU engine's order (docs/gpu.md).

// exactGrad is an Exact cohort's step of gradients: a While loop of one
// trip per model (row), each trip the model's exact.Gradient on its batch,
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
	out := loop.Counted(g, rows, 1, outside, state, func(b *loop.Body, r *Node, acc []*Node) []*Node {
		row := func(v *Node) *Node { return Gather(b.Use(v), Reshape(r, 1, 1)) } // [1, ...]: v's row r
		in, labels := c.gatherInput(b.UseAll(split), row(idx), 1)
		var masks []*Node
		for d, li := range drops {
			masks = append(masks, unpackMask(row(packed[d]), m.Shapes[li], m.Layers[li].(nn.Dropout)))
		}
		w := row(weights)
		count := ReduceAllSum(ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Int32))
		l, gr, err := exact.Gradients(m, Reshape(row(x), p), exactInput(m, in.x), Reshape(labels, -1), count, masks)
		if err != nil {
			panic(err) // NewCohort checked exact.Covers
		}
		at := Reshape(r, 1, 1) // each row written once: added to its -0
		return []*Node{ScatterSum(acc[0], at, Reshape(l, 1), true, true), ScatterSum(acc[1], at, Reshape(gr, 1, p), true, true)}
	})
	return out[0], out[1]
}

// exactInput is one model's batch as gatherInput lays it out, [1, b, H,
// W, C] images or [1, b, F] features, as exact.Forward takes it: [b, C, H,
// W] or [b, F].
func exactInput(m *nn.Model, x *Node) *Node {
	d := x.Shape().Dimensions
	if !m.In.Spatial {
		return Reshape(x, d[1], d[2])
	}
	return Reshape(TransposeAllAxes(x, 0, 1, 4, 2, 3), d[1], m.In.C, m.In.H, m.In.W)
}

// exactEvalGraph is an Exact cohort's evaluation program of `cells`
// cells: inputs the models x [cells*workers, P], then the resident test
// split (padded to a multiple of nn.EvalBatch); outputs per model — the
// rows, then each cell's average model (exact.Average) — the CPU engine's
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
		models := Concatenate([]*Node{x, exact.Average(x, cells, c.shape.Workers)}, 0)
		k := models.Shape().Dimensions[0]
		zero := Zeros(g, shapes.Make(dtypes.Float64, k))
		return loop.Counted(g, k, 1, append([]*Node{models}, split...), []*Node{zero, zero}, func(b *loop.Body, i *Node, sums []*Node) []*Node {
			g := i.Graph()
			p := Reshape(Gather(b.Use(models), Reshape(i, 1, 1)), m.Params)
			test := b.UseAll(split)
			start := []*Node{Scalar(g, dtypes.Float64, 0), Scalar(g, dtypes.Float64, 0)}
			chunk := min(nn.EvalBatch, c.test.len)
			model := loop.Counted(g, c.test.len, chunk, append([]*Node{p}, test...), start, func(cb *loop.Body, lo *Node, acc []*Node) []*Node {
				g := lo.Graph()
				sample := Add(Iota(g, shapes.Make(dtypes.Int32, 1, chunk), 1), lo)
				in, labels := c.gatherInput(cb.UseAll(test), sample, 1)
				count := Min(Sub(Scalar(g, dtypes.Int32, c.test.len), lo), Scalar(g, dtypes.Int32, chunk))
				acts, err := exact.Forward(m, cb.Use(p), exactInput(m, in.x), nil)
				if err != nil {
					panic(err) // NewCohort checked exact.Covers
				}
				loss, correct, _ := exact.CrossEntropy(acts[len(acts)-1], Reshape(labels, -1), count)
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
