package cpu

import "github.com/ump-lab/ump/nn"

// ---- Conv2d with few filter taps, computed directly along output rows ----
//
// LeNet's first layer (1 or 3 channels to 6, 5x5) and the EMNIST CNN's (1
// to 32, 3x3) have at most 75 taps (channels x k x k). Unfolded, each is a
// GEMM with 6 or 32 rows and at most 75 inner products, whose unfolding
// costs more than its arithmetic; directly, each output row is a
// multiply-add of shifted input rows per tap, 16 columns a vector and
// several output channels at once. The samples are zero-padded once per
// step into planes of width ow rounded up to 16 plus k-1 (C x batch of
// them), kept from forward for the weight gradient. The input gradient is
// the same kernel's (inputGradient).
//
// The kernels (planeForward, planeWeightGrad) are C vectors under cgo and
// the Go loops below otherwise. Both add in the same order, multiplies and
// adds rounded apart (no fused multiply-add), so they give the same bits:
//   - forward: y = bias, then y += w[ic][ki][kj] * x[ic][r+ki][c+kj] for
//     ic, ki, kj in order, but for the rows of padding;
//   - weight and bias gradients: 16 running sums per filter tap (of dy x
//     the input) and per channel (of dy), sum l holding the columns c with
//     c mod 16 = l, added over samples, rows and columns in order (columns
//     past the output's width count as 0), then the 16 sums added from
//     l = 0 to 15.

// lanes is the width of the kernels' vectors.
const lanes = nn.Lanes

type planeKernel struct {
	l      nn.Conv2d
	in, o  nn.Shape
	ph, pw int       // a padded plane: ph rows of pw floats
	planes []float32 // the batch's padded planes, C x batch
	sums   []float32 // the C weight gradient's running sums
	grad   *inputGradient
}

func bindPlane(l nn.Conv2d, in nn.Shape, maxBatch int) *planeKernel {
	o := l.Out(in)
	ph, pw := o.H+l.K-1, (o.W+lanes-1)/lanes*lanes+l.K-1
	return &planeKernel{l: l, in: in, o: o, ph: ph, pw: pw, planes: make([]float32, in.C*maxBatch*ph*pw),
		sums: make([]float32, lanes*l.OutC*(in.C*l.K*l.K+1)), grad: newInputGradient(l, in, maxBatch)}
}

// padPlanes writes each of the batch's input planes (C x batch) into a
// zero-padded plane of ph rows of pw floats, the image at (pad, pad).
func padPlanes(planes, x []float32, in nn.Shape, batch, pad, ph, pw int) {
	for pl := 0; pl < in.C*batch; pl++ {
		plane := planes[pl*ph*pw:][:ph*pw]
		clear(plane)
		for i := 0; i < in.H; i++ {
			copy(plane[(i+pad)*pw+pad:], x[(pl*in.H+i)*in.W:][:in.W])
		}
	}
}

func (c *planeKernel) forward(p, x, y []float32, s *step) {
	padPlanes(c.planes, x, c.in, s.batch, c.l.Pad, c.ph, c.pw)
	w := p[:c.l.OutC*c.in.C*c.l.K*c.l.K]
	planeForward(c.planes, w, p[len(w):], y, c.in.C, s.batch, c.o.H, c.o.W, c.pw, c.l.OutC, c.l.Pad, c.in.H, c.l.K)
}

func (c *planeKernel) backward(p, g, _, _, dy, dx []float32, s *step) {
	gw := g[:c.l.OutC*c.in.C*c.l.K*c.l.K]
	planeWeightGrad(c.planes, dy, gw, g[len(gw):], c.sums, c.in.C, s.batch, c.o.H, c.o.W, c.pw, c.l.OutC, c.l.K)
	if dx != nil {
		c.grad.compute(p[:len(gw)], dy, dx, s.batch)
	}
}

// inputGradient computes a convolution's input gradient as the correlation
// of dy, zero-padded by k-1-pad, with the filters flipped and their
// channels swapped (C x outC x k x k), by planeForward. Its buffers are
// allocated at the first use: a model's first layer has none.
type inputGradient struct {
	l             nn.Conv2d
	in, o         nn.Shape
	maxBatch, dpw int
	dyp, wf, zero []float32
	dyt           []float32 // sampleInputGrad's scratch
}

func newInputGradient(l nn.Conv2d, in nn.Shape, maxBatch int) *inputGradient {
	return &inputGradient{l: l, in: in, o: l.Out(in), maxBatch: maxBatch, dpw: (in.W+lanes-1)/lanes*lanes + l.K - 1}
}

// compute writes dx: by sampleInputGrad where it can, else padded; both
// give the same bits.
func (g *inputGradient) compute(w, dy, dx []float32, batch int) {
	l, o := g.l, g.o
	if g.dyt == nil {
		g.dyt = make([]float32, (g.maxBatch+lanes-1)/lanes*lanes*l.OutC*o.H*o.W)
	}
	if !sampleInputGrad(dy, w, dx, g.dyt, l.OutC, g.in.C, batch, g.in.H, g.in.W, o.H, o.W, l.K-1-l.Pad, l.K) {
		g.padded(w, dy, dx, batch)
	}
}

// padded computes dx by planeForward over dy's zero-padded planes.
func (g *inputGradient) padded(w, dy, dx []float32, batch int) {
	l, in, o, k := g.l, g.in, g.o, g.l.K
	off, dph := k-1-l.Pad, in.H+k-1
	if g.dyp == nil {
		g.dyp, g.wf, g.zero = make(
			[]float32,
			l.OutC*g.maxBatch*dph*g.dpw,
		), make(
			[]float32,
			len(w),
		), make(
			[]float32,
			in.C,
		)
	}
	padPlanes(g.dyp, dy, nn.Shape{C: l.OutC, H: o.H, W: o.W}, batch, off, dph, g.dpw)
	for oc := 0; oc < l.OutC; oc++ {
		for ic := 0; ic < in.C; ic++ {
			for t := 0; t < k*k; t++ {
				g.wf[(ic*l.OutC+oc)*k*k+t] = w[(oc*in.C+ic)*k*k+k*k-1-t]
			}
		}
	}
	planeForward(g.dyp, g.wf, g.zero, dx, l.OutC, batch, in.H, in.W, g.dpw, in.C, off, o.H, k)
}

// planeForwardGo is planeForward in Go: y (outC x batch x oh x ow) from
// padded planes (chans x batch), filters w (outC x chans x k x k) and
// biases, skipping the taps of rows outside zr..zr+vr-1 (zeros).
func planeForwardGo(planes, w, bias, y []float32, chans, batch, oh, ow, pw, outC, zr, vr, k int) {
	ph := oh + k - 1
	for o := 0; o < outC; o++ {
		for s := 0; s < batch; s++ {
			for r := 0; r < oh; r++ {
				row := y[((o*batch+s)*oh+r)*ow:][:ow]
				fill(row, bias[o])
				for ic := 0; ic < chans; ic++ {
					plane := planes[(ic*batch+s)*ph*pw:][:ph*pw]
					for ki := max(0, zr-r); ki < min(k, zr+vr-r); ki++ {
						for kj := 0; kj < k; kj++ {
							wv, src := w[((o*chans+ic)*k+ki)*k+kj], plane[(r+ki)*pw+kj:][:ow]
							for c, v := range src {
								row[c] += float32(wv * v)
							}
						}
					}
				}
			}
		}
	}
}

// planeWeightGradGo is planeWeightGrad in Go: gw (outC x chans x k x k)
// and gb (outC) from the padded planes (chans x batch) and dy (outC x
// batch x oh x ow).
func planeWeightGradGo(planes, dy, gw, gb []float32, chans, batch, oh, ow, pw, outC, k int) {
	ph := oh + k - 1
	// each sample's row r of channel o, 16 columns at a time (0 past ow)
	each := func(o int, f func(s, r, c0 int, d *[lanes]float32)) {
		var d [lanes]float32
		for s := 0; s < batch; s++ {
			for r := 0; r < oh; r++ {
				row := dy[((o*batch+s)*oh+r)*ow:][:ow]
				for c0 := 0; c0 < ow; c0 += lanes {
					clear(d[:])
					copy(d[:], row[c0:])
					f(s, r, c0, &d)
				}
			}
		}
	}
	planeBiasGrad(dy, gb, batch, oh, ow, outC)
	for o := 0; o < outC; o++ {
		for ic := 0; ic < chans; ic++ {
			for ki := 0; ki < k; ki++ {
				for kj := 0; kj < k; kj++ {
					var acc [lanes]float32
					each(o, func(s, r, c0 int, d *[lanes]float32) {
						x := planes[(ic*batch+s)*ph*pw+(r+ki)*pw+kj+c0:][:lanes]
						for l, v := range d {
							acc[l] += float32(v * x[l])
						}
					})
					gw[((o*chans+ic)*k+ki)*k+kj] = laneTotal(acc[:])
				}
			}
		}
	}
}

// planeBiasGrad is planeWeightGrad's bias gradient gb (outC) from dy
// (outC x batch x oh x ow), on every path: per channel 16 running sums,
// sum l over the columns c with c mod 16 = l, over samples, rows and
// columns in order, then added from lane 0 to 15 (the lanes past ow add
// nothing: a sum that starts at +0 is unchanged by +0).
func planeBiasGrad(dy, gb []float32, batch, oh, ow, outC int) {
	for o := 0; o < outC; o++ {
		var bias [lanes]float32
		for i := 0; i < batch*oh; i++ {
			row := dy[(o*batch*oh+i)*ow:][:ow]
			for c0 := 0; c0 < ow; c0 += lanes {
				for l, d := range row[c0:min(c0+lanes, ow)] {
					bias[l] += d
				}
			}
		}
		gb[o] = laneTotal(bias[:])
	}
}

// laneTotal adds a tap's 16 running sums from lane 0 to 15.
func laneTotal(l16 []float32) float32 {
	t := l16[0]
	for _, v := range l16[1:] {
		t += v
	}
	return t
}
