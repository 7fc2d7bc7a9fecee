//go:build xla

package exact

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Mix is the gossip x_i = sum_j w_ij x_j as algorithms.Mixing's Apply
// computes it: in float64, the terms w_ij float64(x_j) rounded each, added
// with j ascending from +0, the zero weights left out (Apply's rows list
// only the others), rounded to float32 once. x is [cells*n, P], mixing
// [cells, n, n].
func Mix(x, mixing *Node, cells, n int) *Node {
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

// Mean is every worker's x replaced by its cell's Average.
// x is [cells*n, P].
func Mean(x *Node, cells, n int) *Node {
	p := x.Shape().Dimensions[1]
	return Reshape(BroadcastToDims(Reshape(Average(x, cells, n), cells, 1, p), cells, n, p), cells*n, p)
}

// Average is each cell's mean over its n workers of x [cells*n, P]
// as algorithms.Mean and nn.Average compute it: float64(x_j) added with j
// ascending from +0, divided by n (a division: DivScalar multiplies by
// 1/n), rounded to float32 once; [cells, P].
func Average(x *Node, cells, n int) *Node {
	p := x.Shape().Dimensions[1]
	x64 := Reshape(ConvertDType(x, dtypes.Float64), cells, n, p)
	acc := Zeros(x.Graph(), shapes.Make(dtypes.Float64, cells, 1, p))
	for j := range n {
		acc = Add(acc, Slice(x64, AxisRange(), AxisElem(j), AxisRange()))
	}
	return Reshape(ConvertDType(Div(acc, Scalar(x.Graph(), dtypes.Float64, n)), dtypes.Float32), cells, p)
}

// Scale is n a with the product rounded to float32 on its own, as
// the CPU's optimizer rounds it (also where it adds it to another vector
// in the same pass): the float64 product, exact, converted, so that no
// backend fuses it into an add that follows.
func Scale(n, a *Node) *Node {
	return ConvertDType(Mul(ConvertDType(n, dtypes.Float64), ConvertDType(a, dtypes.Float64)), dtypes.Float32)
}
