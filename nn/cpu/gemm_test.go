package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/fmath"
	"github.com/ump-lab/ump/internal/rng"
)

// TestGemmAddsEachElementsProductsInOrder checks gemm on every kernel path
// against its definition, written out here one element at a time: C[i][j]
// starts at 0 (or C[i][j] with beta) and adds A(i, l) B(l, j) for l = 0 ..
// k-1, each with one fused multiply-add. The cases cover every transpose,
// padded leading dimensions, sizes on both sides of the C kernels' tiles
// (6 and 8 rows, 16 and 32 columns) and of their blocks of k (256), k = 0,
// and values with zeros of both signs, infinities and NaNs.
func TestGemmAddsEachElementsProductsInOrder(t *testing.T) {
	r := rng.New(1, "gemm")
	specials := []float32{
		0,
		float32(math.Copysign(0, -1)),
		float32(math.Inf(1)),
		float32(math.Inf(-1)),
		float32(math.NaN()),
		1e-40,
	}
	rand := func(n int, special bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.Normal(r))
			if special && r.IntN(50) == 0 {
				v[i] = specials[r.IntN(len(specials))]
			}
		}
		return v
	}
	for _, c := range []struct {
		m, n, k, pad int
		special      bool
	}{
		{1, 1, 1, 0, false}, {3, 5, 7, 0, false}, {6, 16, 9, 1, false}, {8, 32, 256, 0, false}, {7, 33, 257, 3, false},
		{13, 47, 600, 2, false}, {128, 120, 400, 0, false}, {5, 17, 0, 1, false}, {9, 40, 70, 0, true},
	} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []bool{false, true} {
					lda, ldb, ldc := max(c.k, 1)+c.pad, c.n+c.pad, c.n+c.pad
					if ta {
						lda = c.m + c.pad
					}
					if tb {
						ldb = max(c.k, 1) + c.pad
					}
					a, b := rand(max(c.m, c.k, 1)*lda, c.special), rand(max(c.k, c.n, 1)*ldb, c.special)
					c0 := rand(c.m*ldc, c.special)
					want := append([]float32(nil), c0...)
					for i := 0; i < c.m; i++ {
						for j := 0; j < c.n; j++ {
							acc := float32(0)
							if beta {
								acc = want[i*ldc+j]
							}
							for l := 0; l < c.k; l++ {
								x, y := a[i*lda+l], b[l*ldb+j]
								if ta {
									x = a[l*lda+i]
								}
								if tb {
									y = b[j*ldb+l]
								}
								acc = fmath.FMA32(x, y, acc)
							}
							want[i*ldc+j] = acc
						}
					}
					onEveryPath(t, func(path string) {
						got := append([]float32(nil), c0...)
						gemm(ta, tb, c.m, c.n, c.k, a, lda, b, ldb, beta, got, ldc)
						where := fmt.Sprintf("%s: %+v ta=%v tb=%v beta=%v", path, c, ta, tb, beta)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) &&
								!(want[i] != want[i] && got[i] != got[i]) {
								t.Fatalf(
									"%s: C[%d] = %g (%#x), the definition gives %g (%#x)",
									where,
									i,
									got[i],
									math.Float32bits(got[i]),
									want[i],
									math.Float32bits(want[i]),
								)
							}
						}
					})
				}
			}
		}
	}
	// A zero's sign survives: -0 * 1 + -0 is -0 (a broadcast that adds +0
	// first would give +0).
	negZero := float32(math.Copysign(0, -1))
	onEveryPath(t, func(path string) {
		c := []float32{negZero}
		gemm(false, false, 1, 1, 1, []float32{negZero}, 1, []float32{1}, 1, true, c, 1)
		if math.Float32bits(c[0]) != math.Float32bits(negZero) {
			t.Errorf("%s: -0*1 + -0 = %g (%#x), want -0", path, c[0], math.Float32bits(c[0]))
		}
	})
}
