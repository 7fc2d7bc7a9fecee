//go:build xla

package exact

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // "go": the pure-Go backend
	. "github.com/gomlx/gomlx/pkg/core/graph"    //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The tests of the pieces package gpu's tests cannot reach; they run on
// GoMLX's Go backend. Package gpu's tests check the program as a whole
// against the CPU engine, on that backend and on XLA.

// TestConvLeavesOutTheRowsOfPadding: the CPU engine's direct
// convolution (nn.ConvPlanes) does not add the taps on rows of padding,
// and -0 + +0 is +0, so on a zero image with a bias of -0, filters
// negative but for a positive first row give -0 where that row falls on
// padding (the first two output rows of a 5 x 5 filter padded by 2) and
// +0 where it does not. nn.ConvLanes adds them: +0 everywhere.
func TestConvLeavesOutTheRowsOfPadding(t *testing.T) {
	const k, pad, side = 5, 2, 8
	w := make([]float32, k*k)
	for i := range w {
		w[i] = -1
		if i < k {
			w[i] = 1
		}
	}
	for _, skip := range []bool{true, false} {
		out := run(
			t,
			func(in []*Node) []*Node { return []*Node{conv(in[0], in[1], in[2], pad, skip)} },
			tensors.FromFlatDataAndDimensions(make([]float32, side*side), 1, 1, 1, side, side),
			tensors.FromFlatDataAndDimensions(
				w,
				1,
				1,
				1,
				k,
				k,
			),
			tensors.FromFlatDataAndDimensions([]float32{float32(math.Copysign(0, -1))}, 1, 1),
		)
		y := out[0]
		for i, v := range y {
			if r := i / side; math.Signbit(float64(v)) != (skip && r < pad) || v != 0 {
				t.Errorf("skipping rows of padding %v: output row %d column %d is %v", skip, r, i%side, v)
			}
		}
	}
}

// TestMaxIsGosMax: goMax gives Go's max (the CPU engine's pooling) of
// every pair of zeros of both signs, ones, infinities, NaN and
// subnormals, bit for bit (a NaN equal to a NaN).
func TestMaxIsGosMax(t *testing.T) {
	values := []float32{
		0,
		float32(math.Copysign(0, -1)),
		1,
		-1,
		float32(math.Inf(1)),
		float32(math.Inf(-1)),
		float32(math.NaN()),
		math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32,
		math.MaxFloat32,
	}
	var a, c []float32
	for _, x := range values {
		for _, y := range values {
			a, c = append(a, x), append(c, y)
		}
	}
	out := run(t, func(in []*Node) []*Node { return []*Node{goMax(in[0], in[1])} }, a, c)
	got := out[0]
	for i := range a {
		if want := max(a[i], c[i]); math.Float32bits(got[i]) != math.Float32bits(want) &&
			!(got[i] != got[i] && want != want) {
			t.Errorf(
				"goMax(%v, %v) = %v (bits %#x), Go's max %v (bits %#x)",
				a[i],
				c[i],
				got[i],
				math.Float32bits(got[i]),
				want,
				math.Float32bits(want),
			)
		}
	}
}

// TestProductFillsItsLastTripWithMinusZero: a sum of 3 terms, each -0
// times 1, from -0, is -0 (as the CPU engine adds it: -0 + -0 is -0); the
// loop's last trip adds 5 more terms, which must be -0 too (a +0 would
// turn the sum into +0).
func TestProductFillsItsLastTripWithMinusZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	out := run(t, func(in []*Node) []*Node { return []*Node{Product(in[0], in[1], in[2])} },
		tensors.FromFlatDataAndDimensions([]float32{negZero, negZero, negZero}, 1, 1, 3),
		tensors.FromFlatDataAndDimensions([]float32{1, 1, 1}, 1, 1, 3),
		tensors.FromFlatDataAndDimensions([]float32{negZero}, 1, 1, 1))
	if got := out[0][0]; got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("-0 + 3 terms of -0 x 1 = %v (sign bit %v), want -0", got, math.Signbit(float64(got)))
	}
}

// run builds a graph of build on GoMLX's Go backend, runs it on args and
// returns its float32 outputs.
func run(t *testing.T, build func(in []*Node) []*Node, args ...any) [][]float32 {
	t.Helper()
	b, err := backends.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	exec, err := NewExec(b, build)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	out, err := exec.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]float32
	for _, o := range out {
		v, err := tensors.CopyFlatData[float32](o)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
		o.FinalizeAll()
	}
	return got
}
