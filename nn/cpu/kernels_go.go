//go:build !cgo && !amd64

package cpu

// Without cgo, on other architectures than amd64, every kernel runs as Go
// loops: the "go" path.

func runs(path string) bool { return path == "go" }

func use(path string) { kernels = path }

func source(string) string { return "Go loops" }

func gemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta bool, c []float32, ldc int) {
	if m > 0 && n > 0 {
		gemmGo(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
	}
}

func planeForward(planes, w, bias, y []float32, chans, batch, oh, ow, pw, outC, zr, vr, k int) {
	planeForwardGo(planes, w, bias, y, chans, batch, oh, ow, pw, outC, zr, vr, k)
}

// sampleInputGrad has no Go loop of its own: inputGradient's path is the
// same sum.
func sampleInputGrad(_, _, _, _ []float32, _, _, _, _, _, _, _, _, _ int) bool { return false }

func planeWeightGrad(planes, dy, gw, gb, _ []float32, chans, batch, oh, ow, pw, outC, k int) {
	planeWeightGradGo(planes, dy, gw, gb, chans, batch, oh, ow, pw, outC, k)
}

func lanesForward(xp, w, bias, _, y []float32, chans, batch, oh, ow, ph, pw, outC, k, _ int) {
	planeForwardGo(xp, w, bias, y, chans, batch, oh, ow, pw, outC, 0, ph, k)
}

func lanesWeightGrad(xp, dyt, gw, gb, scratch []float32, chans, batch, oh, ow, ph, pw, outC, k int) {
	lanesWeightGradGo(xp, dyt, gw, gb, scratch, chans, batch, oh, ow, ph, pw, outC, k)
}

func poolForward(x, y []float32, at []int32, planes, h, w int, train bool) {
	poolForwardGo(x, y, at, planes, h, w, train)
}

func reluForward(x, y []float32) { reluForwardGo(x, y) }
