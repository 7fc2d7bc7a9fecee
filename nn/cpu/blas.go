package cpu

import "gonum.org/v1/gonum/blas"

// gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices:
// op(A) is m x k, op(B) is k x n, C is m x n. Calls from several goroutines
// at once are safe; each call runs on the calling goroutine's thread.
func gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if backend.sgemm != nil {
		backend.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	t := func(tr bool) blas.Transpose {
		if tr {
			return blas.Trans
		}
		return blas.NoTrans
	}
	goSgemm(t(transA), t(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// blasBackend is the sgemm in use: OpenBLAS loaded at run time, or nil for
// gonum's pure-Go implementation.
type blasBackend struct {
	name  string
	sgemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// BLAS names the sgemm implementation in use, e.g. "openblas 0.3.21" or
// "gonum (pure Go)"; it enters the engine identity.
func BLAS() string { return backend.name }
