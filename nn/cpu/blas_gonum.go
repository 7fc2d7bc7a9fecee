package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// goBLAS is the pure-Go fallback.
var goBLAS gonum.Implementation

// goBlock is gonum's block size: a product with at least goParBlocks
// blocks of C goes parallel there (gonum.go's blockSize and minParBlock).
const goBlock, goParBlocks = 64, 4

// goSgemm is gonum's Sgemm on the calling goroutine, with its bits and
// without an allocation. gonum's own splits a product of at least four
// 64 x 64 blocks of C among goroutines it starts at every call (2.2 MB a
// LeNet step of 10 workers), each block summed along k in blocks of 64; the
// CPU engine already runs a worker per core. goSgemm makes the same calls
// of gonum's serial kernel, one after another: each block of C, each of
// its k-blocks in order, as a product small enough that gonum keeps it
// serial; the first scales C's block by beta, as gonum scales C first.
func goSgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if blocksOf(m)*blocksOf(n) < goParBlocks || k == 0 {
		goBLAS.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) // serial there too
		return
	}
	for i := 0; i < m; i += goBlock {
		rows := min(goBlock, m-i)
		for j := 0; j < n; j += goBlock {
			cols := min(goBlock, n-j)
			scale := beta
			for l := 0; l < k; l += goBlock {
				depth := min(goBlock, k-l)
				aSub, bSub := block(a, lda, tA, i, l, rows, depth), block(b, ldb, tB, l, j, depth, cols)
				goBLAS.Sgemm(tA, tB, rows, cols, depth, alpha, aSub, lda, bSub, ldb, scale, view(c, ldc, i, j, rows, cols), ldc)
				scale = 1
			}
		}
	}
}

// blocksOf is how many goBlock blocks cover n.
func blocksOf(n int) int { return (n + goBlock - 1) / goBlock }

// block is the r x c block of op(A) at row i, column j, as A stores it.
func block(a []float32, ld int, t blas.Transpose, i, j, r, c int) []float32 {
	if t == blas.Trans {
		return view(a, ld, j, i, c, r)
	}
	return view(a, ld, i, j, r, c)
}

// view is the r x c block of a row-major matrix (leading dimension ld)
// at row i, column j, as gonum's sliceView32 takes it.
func view(a []float32, ld, i, j, r, c int) []float32 {
	return a[i*ld+j : (i+r-1)*ld+j+c]
}
