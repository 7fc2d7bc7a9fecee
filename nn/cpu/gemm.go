package cpu

import "github.com/ump-lab/ump/internal/fmath"

// gemm (kernels_cgo.go, kernels_nocgo.go) computes C = (beta ? C : 0) +
// op(A) op(B) for row-major matrices: op(A) is m x k (A stored k x m when
// ta), op(B) is k x n (B stored n x k when tb), C is m x n. Every element
// of C starts at 0 (or its value, with beta) and adds its k products in
// order, each with one float32 fused multiply-add; every path gives these
// bits. Calls from several goroutines at once are safe.

// gemmGo is gemm on the go path, element by element.
func gemmGo(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta bool, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc:][:n]
		if !beta {
			clear(row)
		}
		for l := 0; l < k; l++ {
			var x float32
			if ta {
				x = a[l*lda+i]
			} else {
				x = a[i*lda+l]
			}
			if tb {
				for j := range row {
					row[j] = fmath.FMA32(x, b[j*ldb+l], row[j])
				}
				continue
			}
			for j, y := range b[l*ldb:][:n] {
				row[j] = fmath.FMA32(x, y, row[j])
			}
		}
	}
}
