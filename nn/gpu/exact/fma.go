//go:build xla

package exact

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/ump-lab/ump/nn/gpu/loop"
)

// FMA32 is x*y + z rounded once to float32, element by element, as the
// CPU engine's fused multiply-add (fmath.FMA32) computes it: the float64
// product, exact, plus z in float64; where that sum is inexact (TwoSum
// gives its error) and its last bit even, it steps to its neighbour
// towards the exact sum (rounding to odd), so that its rounding to
// float32 is the single rounding of the exact x*y + z. Every operation
// is a float64 add, subtract or multiply, whose order XLA keeps, and a
// backend that fused the product into an add would give the same float64
// values, since the product is exact: every backend gives these bits.
func FMA32(x, y, z *Node) *Node {
	g := x.Graph()
	p := Mul(ConvertDType(x, dtypes.Float64), ConvertDType(y, dtypes.Float64))
	c := ConvertDType(z, dtypes.Float64)
	s := Add(p, c)
	bb := Sub(s, p)
	e := Add(Sub(p, Sub(s, bb)), Sub(c, bb)) // s + e = p + c exactly
	zero := ScalarZero(g, dtypes.Float64)
	bits := Bitcast(s, dtypes.Int64)
	even := Equal(BitwiseAnd(bits, ScalarOne(g, dtypes.Int64)), ScalarZero(g, dtypes.Int64))
	inexact := LogicalAnd(LogicalAnd(NotEqual(e, zero), even), IsFinite(s))
	// One step away from zero where e has s's sign, else towards it.
	away := ConvertDType(Equal(Sign(e), Sign(s)), dtypes.Int64)
	odd := Bitcast(Add(bits, Sub(MulScalar(away, 2), ScalarOne(g, dtypes.Int64))), dtypes.Float64)
	return ConvertDType(Where(inexact, odd, s), dtypes.Float32)
}

// termsPerTrip is how many terms of a long sum one trip of its loop adds
// (in order, unrolled): the trips, and a GPU's kernel launches, are that
// many times fewer (docs/gpu.md's blocks of U). A sum whose terms are not
// a multiple of it is padded with terms of -0, which leave it as it was.
const termsPerTrip = 8

// Product is start + a bᵀ of every model in the CPU engine's order:
// element (i, j) starts at start[i, j] and adds a[i, l] b[j, l] for l =
// 0, 1, ..., k-1, one FMA32 each, as the engine's gemm computes a linear
// layer's x Wᵀ + bias. a is [M, m, k], b [M, n, k], start [M, m, n], for
// M models side by side; the k steps are one loop, each trip
// termsPerTrip elementwise FMA32s over [M, m, n] of a's columns and b's
// (past k, -0 times +0).
func Product(a, b, start *Node) *Node {
	ad, bd := a.Shape().Dimensions, b.Shape().Dimensions
	models, m, k, n := ad[0], ad[1], ad[2], bd[1]
	spare := (termsPerTrip - k%termsPerTrip) % termsPerTrip                         // terms of -0 to fill the last trip
	cols := padded(TransposeAllDims(a, 2, 0, 1), 0, 0, spare, math.Copysign(0, -1)) // [k+spare, M, m]: term l is row l
	rows := padded(TransposeAllDims(b, 2, 0, 1), 0, 0, spare, 0)                    // [k+spare, M, n]
	return loop.Counted(a.Graph(), k+spare, termsPerTrip, []*Node{cols, rows}, []*Node{start}, func(body *loop.Body,
		l *Node, acc []*Node) []*Node {
		terms := Reshape(Add(Iota(l.Graph(), shapes.Make(dtypes.Int32, termsPerTrip), 0), l), termsPerTrip, 1)
		cs, rs := Gather(body.Use(cols), terms), Gather(body.Use(rows), terms)
		sum := acc[0]
		for u := range termsPerTrip {
			col := BroadcastToDims(Reshape(Slice(cs, AxisElem(u)), models, m, 1), models, m, n)
			row := BroadcastToDims(Reshape(Slice(rs, AxisElem(u)), models, 1, n), models, m, n)
			sum = FMA32(col, row, sum)
		}
		return []*Node{sum}
	})[0]
}
