package nn

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
	"gonum.org/v1/gonum/blas"
)

// TestGemmMatchesGonum checks the OpenBLAS binding (argument order,
// transposes, leading dimensions) against gonum's sgemm.
func TestGemmMatchesGonum(t *testing.T) {
	if backend.sgemm == nil {
		t.Skipf("no OpenBLAS here (%s); the engine uses gonum's sgemm directly", BLAS())
	}
	r := rng.New(1, "gemm")
	rand := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for _, c := range []struct{ m, n, k, pad int }{{3, 5, 7, 0}, {16, 150, 800, 3}, {1, 1, 1, 0}, {64, 33, 9, 5}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				lda, ldb, ldc := c.k+c.pad, c.n+c.pad, c.n+c.pad
				if ta {
					lda = c.m + c.pad
				}
				if tb {
					ldb = c.k + c.pad
				}
				a, b := rand(max(c.m, c.k)*lda), rand(max(c.k, c.n)*ldb)
				want, got := rand(c.m*ldc), make([]float32, c.m*ldc)
				copy(got, want)
				tr := map[bool]blas.Transpose{false: blas.NoTrans, true: blas.Trans}
				goBLAS.Sgemm(tr[ta], tr[tb], c.m, c.n, c.k, 0.5, a, lda, b, ldb, 2, want, ldc)
				gemm(ta, tb, c.m, c.n, c.k, 0.5, a, lda, b, ldb, 2, got, ldc)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
						t.Fatalf("%+v ta=%v tb=%v: C[%d] = %v, gonum %v", c, ta, tb, i, got[i], want[i])
					}
				}
			}
		}
	}
}
