//go:build xla

package gpu

import (
	"fmt"

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

// exactGrad is an Exact cohort's step of gradients: exact.Gradients of
// every model (row) side by side on its batch, so that every row's loss
// and gradient have the CPU engine's bits. x is [rows, P]; idx and
// weights [rows, b] are the step's sample indices and weights (0 past a
// short batch's end), packed its dropout masks [rows, b, words], split the
// resident training split. It returns the losses [rows] (float64) and the
// gradients [rows, P].
func (c *xlaCohort) exactGrad(x, idx, weights *Node, packed, split []*Node) (loss, grad *Node) {
	m := c.model
	rows := x.Shape().Dimensions[0]
	in, labels := c.gatherInput(split, idx, rows)
	var masks []*Node
	for d, li := range dropoutLayers(m) {
		masks = append(masks, unpackMask(packed[d], m.Shapes[li], m.Layers[li].(nn.Dropout)))
	}
	count := ReduceSum(ConvertDType(GreaterThan(weights, ZerosLike(weights)), dtypes.Int32), 1)
	loss, grad, err := exact.Gradients(m, x, exactInput(m, in.x), labels, count, masks)
	if err != nil {
		panic(err) // NewCohort checked exact.Supports
	}
	return loss, grad
}

// exactInput is the models' batches as gatherInput lays them out, [M, b,
// H, W, C] images or [M, b, F] features, as exact.Forward takes them: [M,
// b, C, H, W] or [M, b, F].
func exactInput(m *nn.Model, x *Node) *Node {
	if !m.In.Spatial {
		return x
	}
	return TransposeAllAxes(x, 0, 1, 4, 2, 3)
}

// exactEvalGraph is an Exact cohort's evaluation program of `cells`
// cells: inputs the models x [cells*workers, P], then the resident test
// split (padded to a multiple of nn.EvalBatch); outputs per model — the
// rows, then each cell's average model (exact.Average) — the CPU engine's
// Evaluate sums: each chunk's mean loss times its size, added in chunk
// order (float64), and the hits (float64). A While loop has one trip per
// chunk of nn.EvalBatch test samples, the CPU engine's chunks (one chunk
// of them all where the split is shorter), every model side by side on
// it. The consensus distances are the host's (hostDistances).
func (c *xlaCohort) exactEvalGraph(cells int) func(inputs []*Node) []*Node {
	return func(inputs []*Node) []*Node {
		m := c.model
		x, split := inputs[0], inputs[1:]
		g := x.Graph()
		models := Concatenate([]*Node{x, exact.Average(x, cells, c.shape.Workers)}, 0)
		k := models.Shape().Dimensions[0]
		zero := Zeros(g, shapes.Make(dtypes.Float64, k))
		chunk := min(nn.EvalBatch, c.test.len)
		return loop.Counted(
			g,
			c.test.len,
			chunk,
			append([]*Node{models}, split...),
			[]*Node{zero, zero},
			func(b *loop.Body, lo *Node, sums []*Node) []*Node {
				g := lo.Graph()
				sample := Add(Iota(g, shapes.Make(dtypes.Int32, 1, chunk), 1), lo)
				in, labels := c.gatherInput(b.UseAll(split), sample, k) // the chunk's samples once, for every model
				count := BroadcastToDims(
					Min(Sub(Scalar(g, dtypes.Int32, c.test.len), lo), Scalar(g, dtypes.Int32, chunk)),
					k,
				)
				acts, err := exact.Forward(m, b.Use(models), exactInput(m, in.x), nil)
				if err != nil {
					panic(err) // NewCohort checked exact.Supports
				}
				loss, correct, _ := exact.CrossEntropy(acts[len(acts)-1], labels, count)
				return []*Node{
					Add(sums[0], Mul(loss, ConvertDType(count, dtypes.Float64))),
					Add(sums[1], ConvertDType(correct, dtypes.Float64)),
				}
			},
		)
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
