package cpu

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

// TestGoSgemmIsGonumsSgemmSerially: the pure-Go path gives gonum's Sgemm's
// bits for every transpose, padded leading dimensions, beta 0, 1 and 2
// and sizes on both sides of gonum's parallel threshold (four 64 x 64
// blocks of C; k over several blocks of 64), and allocates nothing.
func TestGoSgemmIsGonumsSgemmSerially(t *testing.T) {
	r := rng.New(1, "go-sgemm")
	rand := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	tr := map[bool]blas.Transpose{false: blas.NoTrans, true: blas.Trans}
	for _, c := range []struct{ m, n, k, pad int }{{3, 5, 7, 0}, {128, 128, 64, 0}, {130, 200, 150, 3}, {70, 300, 9, 1}, {257, 65, 200, 0}, {128, 130, 0, 2}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float32{0, 1, 2} {
					lda, ldb, ldc := max(c.k, 1)+c.pad, c.n+c.pad, c.n+c.pad
					if ta {
						lda = c.m + c.pad
					}
					if tb {
						ldb = max(c.k, 1) + c.pad
					}
					a, b := rand(max(c.m, c.k)*lda), rand(max(c.k, c.n)*ldb)
					want, got := rand(c.m*ldc), make([]float32, c.m*ldc)
					copy(got, want)
					goBLAS.Sgemm(tr[ta], tr[tb], c.m, c.n, c.k, 0.5, a, lda, b, ldb, beta, want, ldc)
					goSgemm(tr[ta], tr[tb], c.m, c.n, c.k, 0.5, a, lda, b, ldb, beta, got, ldc)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%+v ta=%v tb=%v beta=%v: C[%d] = %v, gonum's %v", c, ta, tb, beta, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	a, b, c := rand(256*300), rand(300*200), make([]float32, 256*200)
	if allocs := testing.AllocsPerRun(5, func() { goSgemm(blas.NoTrans, blas.NoTrans, 256, 200, 300, 1, a, 300, b, 200, 0, c, 200) }); allocs != 0 {
		t.Errorf("a 256 x 200 x 300 product allocates %v times", allocs)
	}
}
