//go:build !cgo

package nn

// Without cgo the one-channel convolution runs as Go loops.

func planeForward(planes, w, bias, y []float32, batch, oh, ow, pw, outC, k int) {
	planeForwardGo(planes, w, bias, y, batch, oh, ow, pw, outC, k)
}

func planeWeightGrad(planes, dy, gw, gb, _ []float32, batch, oh, ow, pw, outC, k int) {
	planeWeightGradGo(planes, dy, gw, gb, batch, oh, ow, pw, outC, k)
}
