package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// directCases are the convolutions computed directly: ones with few taps
// (LeNet's and the EMNIST CNN's first layers) and ones with 16k output
// channels (LeNet's second), with output rows shorter than, as long as and
// longer than a vector or a column block, several blocks of output
// channels, more samples than a group of the weight gradients and filters
// of every size.
var directCases = []struct {
	in           nn.Shape
	outC, k, pad int
	batch        int
}{
	{nn.Shape{C: 1, H: 28, W: 28, Spatial: true}, 6, 5, 2, 11}, // LeNet, MNIST
	{nn.Shape{C: 3, H: 32, W: 32, Spatial: true}, 6, 5, 0, 2},  // LeNet, CIFAR-10
	{nn.Shape{C: 1, H: 28, W: 28, Spatial: true}, 32, 3, 0, 2}, // CNN, EMNIST
	{nn.Shape{C: 1, H: 7, W: 9, Spatial: true}, 3, 3, 1, 2},
	{nn.Shape{C: 1, H: 18, W: 18, Spatial: true}, 5, 3, 0, 2}, // ow = 16
	{nn.Shape{C: 1, H: 6, W: 40, Spatial: true}, 11, 5, 2, 1},
	{nn.Shape{C: 1, H: 5, W: 5, Spatial: true}, 2, 2, 0, 4},
	{nn.Shape{C: 3, H: 9, W: 13, Spatial: true}, 32, 3, 1, 3},
	{nn.Shape{C: 2, H: 12, W: 12, Spatial: true}, 16, 5, 2, 9},
	{nn.Shape{C: 4, H: 6, W: 7, Spatial: true}, 16, 2, 0, 2},
	{nn.Shape{C: 6, H: 14, W: 14, Spatial: true}, 16, 5, 0, 11}, // LeNet's second layer
	{nn.Shape{C: 4, H: 9, W: 13, Spatial: true}, 32, 5, 1, 3},
	{nn.Shape{C: 5, H: 12, W: 12, Spatial: true}, 16, 5, 2, 2},
	{nn.Shape{C: 16, H: 6, W: 7, Spatial: true}, 16, 3, 0, 2},
}

// directData fills a batch, its layer's parameters and an output gradient
// with values in [-1, 1).
func directData(in nn.Shape, l nn.Conv2d, batch int) (x, p, dy []float32) {
	r := rng.New(3, "direct")
	o := l.Out(in)
	x, p, dy = make([]float32, batch*in.Size()), make([]float32, l.Params(in)), make([]float32, batch*o.Size())
	for _, v := range [][]float32{x, p, dy} {
		for i := range v {
			v[i] = float32(2*r.Float64() - 1)
		}
	}
	return x, p, dy
}

// TestDirectConvolutionsAgainstFloat64 checks each direct kernel's output,
// weight, bias and input gradients against sums in float64 over the
// unpadded input.
func TestDirectConvolutionsAgainstFloat64(t *testing.T) {
	for _, c := range directCases {
		l, in := nn.Conv2d{OutC: c.outC, K: c.k, Pad: c.pad}, c.in
		name := fmt.Sprintf("%dx%dx%d to %d, %dx%d, pad %d", in.C, in.H, in.W, c.outC, c.k, c.k, c.pad)
		kern := bind(l, in, c.batch)
		switch kern.(type) {
		case *planeKernel, *lanesKernel:
		default:
			t.Fatalf("%s binds %T, not a direct kernel", name, kern)
		}
		x, p, dy := directData(in, l, c.batch)
		o := l.Out(in)
		y, g := make([]float32, len(dy)), make([]float32, len(p))
		dx := make([]float32, len(x))
		s := &step{batch: c.batch, train: true}
		kern.forward(p, x, y, s)
		kern.backward(p, g, x, y, dy, dx, s)

		taps := in.C * c.k * c.k
		at := func(ch, sm, i, j int) int { return ((ch*c.batch+sm)*in.H+i)*in.W + j }
		gw, gb, gx := make([]float64, c.outC*taps), make([]float64, c.outC), make([]float64, len(x))
		worst := 0.0
		check := func(what string, got float32, want, scale float64) {
			if e := math.Abs(float64(got)-want) / scale; e > worst {
				worst = e
				if e > 1e-5 {
					t.Fatalf("%s: %s = %g, float64 reference %g", name, what, got, want)
				}
			}
		}
		for oc := 0; oc < c.outC; oc++ {
			for sm := 0; sm < c.batch; sm++ {
				for r := 0; r < o.H; r++ {
					for col := 0; col < o.W; col++ {
						want, scale := float64(p[c.outC*taps+oc]), 1.0
						d := float64(dy[((oc*c.batch+sm)*o.H+r)*o.W+col])
						gb[oc] += d
						for ch := 0; ch < in.C; ch++ {
							for ki := 0; ki < c.k; ki++ {
								for kj := 0; kj < c.k; kj++ {
									i, j := r+ki-c.pad, col+kj-c.pad
									if i < 0 || j < 0 || i >= in.H || j >= in.W {
										continue
									}
									wi := oc*taps + (ch*c.k+ki)*c.k + kj
									v := float64(x[at(ch, sm, i, j)])
									want += float64(p[wi]) * v
									scale += math.Abs(float64(p[wi]) * v)
									gw[wi] += d * v
									gx[at(ch, sm, i, j)] += d * float64(p[wi])
								}
							}
						}
						check(
							fmt.Sprintf("y[%d][%d][%d][%d]", oc, sm, r, col),
							y[((oc*c.batch+sm)*o.H+r)*o.W+col],
							want,
							scale,
						)
					}
				}
			}
		}
		n := float64(c.batch * o.H * o.W) // |dy|, |x|, |w| < 1
		for i := range gw {
			check(fmt.Sprintf("weight gradient %d", i), g[i], gw[i], n)
		}
		for oc := range gb {
			check(fmt.Sprintf("bias gradient %d", oc), g[c.outC*taps+oc], gb[oc], n)
		}
		for i := range dx {
			check(fmt.Sprintf("input gradient %d", i), dx[i], gx[i], float64(c.outC*c.k*c.k))
		}
		t.Logf("%s: worst relative error %.2g", name, worst)
	}
}

// TestDirectKernelsGiveTheGoLoopsBits checks that the kernels in use (C
// vectors under cgo, on each kernel path the CPU runs) give the bits of
// the Go loops that define them, so that a build without cgo, or on
// another CPU, computes the same numbers.
func TestDirectKernelsGiveTheGoLoopsBits(t *testing.T) {
	onEveryPath(t, func(path string) { directKernelsGiveTheGoLoopsBits(t, path) })
}

func directKernelsGiveTheGoLoopsBits(t *testing.T, path string) {
	for _, c := range directCases {
		l, in := nn.Conv2d{OutC: c.outC, K: c.k, Pad: c.pad}, c.in
		x, p, dy := directData(in, l, c.batch)
		o, taps := l.Out(in), in.C*c.k*c.k
		y, yGo := make([]float32, len(dy)), make([]float32, len(dy))
		gw, gwGo := make([]float32, c.outC*taps), make([]float32, c.outC*taps)
		gb, gbGo := make([]float32, c.outC), make([]float32, c.outC)
		if taps <= nn.PlaneMaxTaps {
			kern := bindPlane(l, in, c.batch)
			padPlanes(kern.planes, x, in, c.batch, c.pad, kern.ph, kern.pw)
			w, b := p[:len(gw)], p[len(gw):]
			planeForward(kern.planes, w, b, y, in.C, c.batch, o.H, o.W, kern.pw, c.outC, c.pad, in.H, c.k)
			planeForwardGo(kern.planes, w, b, yGo, in.C, c.batch, o.H, o.W, kern.pw, c.outC, c.pad, in.H, c.k)
			planeWeightGrad(kern.planes, dy, gw, gb, kern.sums, in.C, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
			planeWeightGradGo(kern.planes, dy, gwGo, gbGo, in.C, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
		} else {
			kern := bindLanes(l, in, c.batch)
			s, g := &step{batch: c.batch}, make([]float32, len(p))
			kern.forward(p, x, y, s)              // pads x,
			kern.backward(p, g, x, y, dy, nil, s) // and dy, for the Go loops
			copy(gw, g)
			copy(gb, g[len(gw):])
			planeForwardGo(kern.xp, p[:len(gw)], p[len(gw):], yGo, in.C, c.batch, o.H, o.W, kern.pw, c.outC, 0,
				kern.ph, c.k)
			lanesWeightGradGo(kern.xp, kern.dyt, gwGo, gbGo, nil, in.C, c.batch, o.H, o.W, kern.ph, kern.pw, c.outC,
				c.k)
		}
		for _, v := range []struct {
			what      string
			got, want []float32
		}{{"output", y, yGo}, {"weight gradient", gw, gwGo}, {"bias gradient", gb, gbGo}} {
			for i := range v.got {
				if v.got[i] != v.want[i] {
					t.Errorf("%+v (%s): %s[%d] = %g, the Go loops give %g", c, path, v.what, i, v.got[i], v.want[i])
					break
				}
			}
		}
	}
}

// TestPlaneWeightGradientAddsItsLanesInOrder checks the row kernel's
// weight and bias gradients on every path against their definition
// written out here: each tap's 16 sums (sum l over the columns c with c
// mod 16 = l, added over samples, rows and columns in order), then those
// added from l = 0 to 15. Its data are where the order of the last
// additions shows: added from 15 down, some sums differ.
func TestPlaneWeightGradientAddsItsLanesInOrder(t *testing.T) {
	onEveryPath(t, func(path string) {
		for _, c := range directCases {
			l, in := nn.Conv2d{OutC: c.outC, K: c.k, Pad: c.pad}, c.in
			if in.C*c.k*c.k > nn.PlaneMaxTaps {
				continue
			}
			x, _, dy := directData(in, l, c.batch)
			for i := range dy { // magnitudes 2^-12 to 2^12: rounding depends on the order
				dy[i] *= float32(math.Ldexp(1, i%25-12))
			}
			o, taps := l.Out(in), in.C*c.k*c.k
			kern := bindPlane(l, in, c.batch)
			padPlanes(kern.planes, x, in, c.batch, c.pad, kern.ph, kern.pw)
			gw, gb := make([]float32, c.outC*taps), make([]float32, c.outC)
			planeWeightGrad(kern.planes, dy, gw, gb, kern.sums, in.C, c.batch, o.H, o.W, kern.pw, c.outC, c.k)
			reordered := 0
			check := func(what string, got float32, term func(s, r, col int) float32) {
				var sums [16]float32
				for s := 0; s < c.batch; s++ {
					for r := 0; r < o.H; r++ {
						for col := 0; col < o.W; col++ {
							sums[col%16] += term(s, r, col)
						}
					}
				}
				want, backwards := sums[0], sums[15]
				for l := 1; l < 16; l++ {
					want += sums[l]
					backwards += sums[15-l]
				}
				if want != backwards {
					reordered++
				}
				if got != want {
					t.Errorf("%+v (%s): %s = %g, its lanes added in order %g", c, path, what, got, want)
				}
			}
			for oc := 0; oc < c.outC; oc++ {
				d := func(s, r, col int) float32 { return dy[((oc*c.batch+s)*o.H+r)*o.W+col] }
				check(fmt.Sprintf("bias gradient %d", oc), gb[oc], d)
				for ic := 0; ic < in.C; ic++ {
					for t := 0; t < c.k*c.k; t++ {
						check(
							fmt.Sprintf("weight gradient %d", (oc*in.C+ic)*c.k*c.k+t),
							gw[(oc*in.C+ic)*c.k*c.k+t],
							func(s, r, col int) float32 {
								return float32(
									d(
										s,
										r,
										col,
									) * kern.planes[(ic*c.batch+s)*kern.ph*kern.pw+(r+t/c.k)*kern.pw+col+t%c.k],
								)
							},
						)
					}
				}
			}
			if reordered == 0 {
				t.Errorf("%+v: no sum whose lanes added backwards differ: the data cannot tell the order", c)
			}
		}
	})
}

// TestPoolKernelGivesTheGoLoopsBits checks that max-pooling in use (C
// vectors under cgo) gives the bits of the Go loops that define it: maxima
// and their positions, on windows of ties, signed zeros and NaNs of either
// sign (Go's max gives a NaN where a window holds one, +0 for -0 and +0),
// on rows shorter and longer than a vector and with odd sizes, writing
// nothing past the output.
func TestPoolKernelGivesTheGoLoopsBits(t *testing.T) {
	negNaN := math.Float32frombits(0xffc00000)
	values := []float32{-1, float32(math.Copysign(0, -1)), 0, 0.5, 2}
	r := rng.New(5, "pool")
	for _, c := range []struct {
		planes, h, w int
		nans         []float32
	}{
		{12, 24, 24, nil}, {12, 8, 8, nil}, {3, 28, 28, nil}, {3, 10, 10, nil},
		{2, 7, 9, nil}, {2, 8, 9, nil}, {2, 6, 18, nil}, {2, 40, 40, nil}, {1, 2, 2, nil},
		{4, 24, 24, []float32{negNaN}}, {4, 24, 24, []float32{float32(math.NaN())}},
	} {
		x := make([]float32, c.planes*c.h*c.w)
		for i := range x {
			x[i] = values[r.IntN(len(values))]
		}
		for i, v := range c.nans {
			x[(i*7919+len(x)/2)%len(x)] = v
		}
		n := c.planes * (c.h / 2) * (c.w / 2)
		for _, train := range []bool{true, false} {
			y, yGo := make([]float32, n+16), make([]float32, n+16) // 16 past the end stay 0
			at, atGo := make([]int32, n+16), make([]int32, n+16)
			poolForward(x, y[:n], at[:n], c.planes, c.h, c.w, train)
			poolForwardGo(x, yGo[:n], atGo[:n], c.planes, c.h, c.w, train)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(yGo[i]) || at[i] != atGo[i] {
					t.Errorf("%d planes of %dx%d, nans %v, train %v: output %d = %g at %d, the Go loop gives %g at %d",
						c.planes, c.h, c.w, c.nans, train, i, y[i], at[i], yGo[i], atGo[i])
					break
				}
			}
		}
	}
}

// TestReLUKernelGivesTheGoLoopsBits checks that ReLU's forward in use
// (C under cgo) gives the bits of Go's max(x, 0): +0 for -0 and +0, NaNs
// of either sign kept, lengths that fill no vector and several, nothing
// written past the output.
func TestReLUKernelGivesTheGoLoopsBits(t *testing.T) {
	negNaN := math.Float32frombits(0xffc00000)
	values := []float32{-1, float32(math.Copysign(0, -1)), 0, 0.5, float32(math.Inf(-1)), float32(math.Inf(1)), 1e-40}
	r := rng.New(6, "relu")
	for _, c := range []struct {
		n    int
		nans []float32
	}{{1, nil}, {7, nil}, {16, nil}, {33, nil}, {1176, nil}, {100, []float32{negNaN}}, {100, []float32{float32(
		math.NaN())}}} {
		x := make([]float32, c.n)
		for i := range x {
			x[i] = values[r.IntN(len(values))]
		}
		for i, v := range c.nans {
			x[(i*31+c.n/2)%c.n] = v
		}
		y, yGo := make([]float32, c.n+16), make([]float32, c.n+16) // 16 past the end stay 0
		reluForward(x, y[:c.n])
		reluForwardGo(x, yGo[:c.n])
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(yGo[i]) {
				t.Errorf(
					"%d values, nans %v: output %d = %g (%#x), the Go loop gives %g (%#x)",
					c.n,
					c.nans,
					i,
					y[i],
					math.Float32bits(y[i]),
					yGo[i],
					math.Float32bits(yGo[i]),
				)
				break
			}
		}
	}
}

// TestSampleInputGradGivesThePaddedBits checks that the input gradient in
// use (under cgo a vector of samples, on each kernel path the CPU runs, the
// products of padding skipped) gives the bits of the sum over dy's
// zero-padded planes that defines it: on values whose products cancel to
// exact zeros and carry both signs of zero, NaNs and infinities in dy,
// batches that fill no vector, one and several, LeNet's shape and others;
// a filter that is not finite takes the padded path.
func TestSampleInputGradGivesThePaddedBits(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	values := []float32{-1, negZero, 0, 1, 2, -0.5}
	r := rng.New(7, "input gradient")
	for _, c := range []struct {
		outC, inC, h, k, pad, batch int
		special                     []float32 // put into dy, or into w when wSpecial
		wSpecial                    bool
	}{
		{16, 6, 14, 5, 0, 128, nil, false}, {16, 6, 14, 5, 0, 100, nil, false}, {16, 6, 14, 5, 0, 1, nil, false},
		{16, 6, 14, 5, 0, 17, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}, false},
		{8, 3, 9, 3, 1, 20, nil, false}, {4, 8, 12, 5, 2, 33, nil, false}, {4, 9, 8, 3, 0, 16, nil, false},
		{1, 2, 6, 3, 0, 40, nil, false}, // a corner's sum is one product: often a zero of either sign
		{16, 6, 14, 5, 0, 40, []float32{float32(math.Inf(1))}, true}, {16, 6, 14, 5, 0, 40, []float32{float32(
			math.NaN())}, true},
	} {
		l, in := nn.Conv2d{OutC: c.outC, K: c.k, Pad: c.pad}, nn.Shape{C: c.inC, H: c.h, W: c.h, Spatial: true}
		o := l.Out(in)
		w, dy := make([]float32, c.outC*c.inC*c.k*c.k), make([]float32, c.outC*c.batch*o.H*o.W)
		for i := range w {
			w[i] = values[r.IntN(len(values))]
		}
		for i := range dy {
			dy[i] = values[r.IntN(len(values))]
		}
		into := dy
		if c.wSpecial {
			into = w
		}
		for i, v := range c.special {
			into[(i*7919+len(into)/3)%len(into)] = v
		}
		n := c.inC * c.batch * c.h * c.h
		want := make([]float32, n+16) // 16 past the end stay 0
		g := newInputGradient(l, in, c.batch)
		g.padded(w, dy, want[:n], c.batch)
		onEveryPath(t, func(path string) {
			got := make([]float32, n+16)
			g.compute(w, dy, got[:n], c.batch)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf(
						"%+v (%s): dx[%d] = %g (%#x), the padded sum gives %g (%#x)",
						c,
						path,
						i,
						got[i],
						math.Float32bits(got[i]),
						want[i],
						math.Float32bits(want[i]),
					)
					break
				}
			}
		})
	}
}
