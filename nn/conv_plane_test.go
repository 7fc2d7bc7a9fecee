package nn

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
)

// planeCases are one-channel convolutions: the MNIST LeNet's and the
// EMNIST CNN's first layers, and shapes whose output rows are shorter
// than, exactly or more than the kernels' 16 lanes, with more output
// channels than a block of the kernels holds and filters of every size.
var planeCases = []struct {
	h, w, outC, k, pad, batch int
}{
	{28, 28, 6, 5, 2, 11}, // LeNet, MNIST; more samples than a group of the C weight gradient
	{28, 28, 32, 3, 0, 2}, // CNN, EMNIST
	{7, 9, 3, 3, 1, 2},
	{18, 18, 5, 3, 0, 2}, // ow = 16
	{6, 40, 11, 5, 2, 1},
	{5, 5, 2, 2, 0, 4},
}

// planeData fills a one-channel batch, its filters, biases and an output
// gradient with values from r.
func planeData(h, w, outC, k, pad, batch int) (x, p, dy []float32, o shape) {
	r := rng.New(3, "plane")
	l := conv2d{outC, k, pad}
	o = l.out(shape{C: 1, H: h, W: w, Spatial: true})
	x, p, dy = make([]float32, batch*h*w), make([]float32, l.params(shape{C: 1})), make([]float32, outC*batch*o.H*o.W)
	for _, v := range [][]float32{x, p, dy} {
		for i := range v {
			v[i] = float32(2*r.Float64() - 1)
		}
	}
	return x, p, dy, o
}

// TestPlaneConvolutionAgainstFloat64 checks the one-channel convolution's
// output, weight gradient and bias gradient against sums in float64 over
// the unpadded input.
func TestPlaneConvolutionAgainstFloat64(t *testing.T) {
	for _, c := range planeCases {
		x, p, dy, o := planeData(c.h, c.w, c.outC, c.k, c.pad, c.batch)
		kern := conv2d{c.outC, c.k, c.pad}.bind(shape{C: 1, H: c.h, W: c.w, Spatial: true}, c.batch)
		y, g := make([]float32, len(dy)), make([]float32, len(p))
		s := &step{batch: c.batch, train: true}
		kern.forward(p, x, y, s)
		kern.backward(p, g, x, y, dy, nil, s)
		input := func(s, i, j int) float64 { // zero outside the image
			if i < 0 || j < 0 || i >= c.h || j >= c.w {
				return 0
			}
			return float64(x[(s*c.h+i)*c.w+j])
		}
		w, kk := p[:c.outC*c.k*c.k], c.k*c.k
		gw := make([]float64, len(w))
		gb := make([]float64, c.outC)
		worst := 0.0
		check := func(what string, got float32, want, scale float64) {
			if e := math.Abs(float64(got)-want) / scale; e > worst {
				worst = e
				if e > 1e-5 {
					t.Fatalf("%+v: %s = %g, float64 reference %g", c, what, got, want)
				}
			}
		}
		for oc := 0; oc < c.outC; oc++ {
			for sm := 0; sm < c.batch; sm++ {
				for r := 0; r < o.H; r++ {
					for col := 0; col < o.W; col++ {
						want, scale := float64(p[len(w)+oc]), 1.0
						d := float64(dy[((oc*c.batch+sm)*o.H+r)*o.W+col])
						gb[oc] += d
						for ki := 0; ki < c.k; ki++ {
							for kj := 0; kj < c.k; kj++ {
								v := input(sm, r+ki-c.pad, col+kj-c.pad)
								want += float64(w[oc*kk+ki*c.k+kj]) * v
								scale += math.Abs(float64(w[oc*kk+ki*c.k+kj]) * v)
								gw[oc*kk+ki*c.k+kj] += d * v
							}
						}
						check("y", y[((oc*c.batch+sm)*o.H+r)*o.W+col], want, scale)
					}
				}
			}
		}
		n := float64(c.batch * o.H * o.W) // |dy| <= 1, |x| <= 1
		for i := range gw {
			check("weight gradient", g[i], gw[i], n)
		}
		for oc := range gb {
			check("bias gradient", g[len(w)+oc], gb[oc], n)
		}
		t.Logf("%+v: worst relative error %.2g", c, worst)
	}
}

// TestPlaneKernelsGiveTheGoLoopsBits checks that the kernels in use (C
// vectors under cgo) give the bits of the Go loops that define them, so
// that a build without cgo computes the same numbers.
func TestPlaneKernelsGiveTheGoLoopsBits(t *testing.T) {
	for _, c := range planeCases {
		x, p, dy, o := planeData(c.h, c.w, c.outC, c.k, c.pad, c.batch)
		kern := conv2d{c.outC, c.k, c.pad}.bindPlane(shape{C: 1, H: c.h, W: c.w, Spatial: true}, c.batch)
		kern.pad(x, c.batch)
		w, bias := p[:c.outC*c.k*c.k], p[c.outC*c.k*c.k:]
		y, yGo := make([]float32, len(dy)), make([]float32, len(dy))
		planeForward(kern.planes, w, bias, y, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
		planeForwardGo(kern.planes, w, bias, yGo, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
		gw, gwGo := make([]float32, len(w)), make([]float32, len(w))
		gb, gbGo := make([]float32, c.outC), make([]float32, c.outC)
		planeWeightGrad(kern.planes, dy, gw, gb, kern.sums, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
		planeWeightGradGo(kern.planes, dy, gwGo, gbGo, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
		for _, v := range []struct {
			what      string
			got, want []float32
		}{{"output", y, yGo}, {"weight gradient", gw, gwGo}, {"bias gradient", gb, gbGo}} {
			for i := range v.got {
				if v.got[i] != v.want[i] {
					t.Errorf("%+v: %s[%d] = %g, the Go loops give %g", c, v.what, i, v.got[i], v.want[i])
					break
				}
			}
		}
	}
}
