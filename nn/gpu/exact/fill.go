//go:build xla

package exact

import (
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// padded is x with `before` and `after` slices of fill along axis: the
// zeros around an image, or the terms of -0 that fill a loop's last trip.
func padded(x *Node, axis, before, after int, fill float64) *Node {
	slab := func(n int) *Node {
		dims := slices.Clone(x.Shape().Dimensions)
		dims[axis] = n
		return filled(x.Graph(), x.DType(), fill, dims...)
	}
	parts := []*Node{x}
	if before > 0 {
		parts = append([]*Node{slab(before)}, parts...)
	}
	if after > 0 {
		parts = append(parts, slab(after))
	}
	return Concatenate(parts, axis)
}

// filled is fill of dtype broadcast to dims. A -0 is -(+0): GoMLX's
// scalar constants are cached by value, and -0 == +0, so Scalar of -0
// may give a +0 made earlier (and a later +0 the -0).
func filled(g *Graph, dtype dtypes.DType, fill float64, dims ...int) *Node {
	v := Scalar(g, dtype, fill)
	if fill == 0 && math.Signbit(fill) {
		v = Neg(Scalar(g, dtype, 0))
	}
	return BroadcastToDims(v, dims...)
}

// firstSamples is [M, b]: whether sample s of model m is one of the first
// count[m] (count int32 [M]), the batch's own; the others pad it to b.
func firstSamples(g *Graph, count *Node, models, b int) *Node {
	return LessThan(
		Iota(g, shapes.Make(dtypes.Int32, models, b), 1),
		BroadcastToDims(Reshape(count, models, 1), models, b),
	)
}
