package nn

// ---- Conv2d of a one-channel input, computed directly ----
//
// The first layer of the MNIST and EMNIST models convolves a single input
// plane. Unfolded, it is a GEMM with 6 or 32 rows and k*k inner products,
// whose unfolding costs more than its arithmetic; directly, each output row
// is k*k multiply-adds of shifted input rows. The samples are zero-padded
// once per step into planes of width ow rounded up to 16 plus k-1, so that
// every output row is read as whole vectors of 16; the planes stay from
// forward for the weight gradient.
//
// The kernels (planeForward, planeWeightGrad) are C vectors under cgo and
// the Go loops below otherwise. Both add in the same order, multiplies and
// adds rounded apart (no fused multiply-add), so they give the same bits:
//   - forward: y = bias, then y += w[ki][kj] * x[r+ki][c+kj] for ki, kj in
//     order, but for the rows of padding;
//   - weight and bias gradients: 16 running sums per filter tap (of dy x
//     the input) and per channel (of dy), sum l holding the columns c with
//     c mod 16 = l, added over samples, rows and columns in order (columns
//     past the output's width count as 0), then the 16 sums added from
//     l = 0 to 15.
// Such a layer is always a model's first: it computes no input gradient.

// lanes is the width of the kernels' vectors.
const lanes = 16

type planeKernel struct {
	l      conv2d
	in, o  shape
	ph, pw int       // a padded plane: ph rows of pw floats
	planes []float32 // the batch's padded planes
	sums   []float32 // the C weight gradient's running sums
}

func (l conv2d) bindPlane(in shape, maxBatch int) *planeKernel {
	o := l.out(in)
	ph, pw := o.H+l.k-1, (o.W+lanes-1)/lanes*lanes+l.k-1
	return &planeKernel{l: l, in: in, o: o, ph: ph, pw: pw, planes: make([]float32, maxBatch*ph*pw),
		sums: make([]float32, lanes*l.outC*(l.k*l.k+1))}
}

// pad writes the batch's samples into zero-padded planes.
func (c *planeKernel) pad(x []float32, batch int) {
	in, pad := c.in, c.l.pad
	for s := 0; s < batch; s++ {
		plane := c.planes[s*c.ph*c.pw:][:c.ph*c.pw]
		clear(plane)
		for i := 0; i < in.H; i++ {
			copy(plane[(i+pad)*c.pw+pad:], x[(s*in.H+i)*in.W:][:in.W])
		}
	}
}

func (c *planeKernel) forward(p, x, y []float32, s *step) {
	c.pad(x, s.batch)
	w := p[:c.l.outC*c.l.k*c.l.k]
	planeForward(c.planes, w, p[len(w):], y, 1, s.batch, c.o.H, c.o.W, c.pw, c.l.outC, c.l.pad, c.in.H, c.l.k)
}

func (c *planeKernel) backward(_, g, _, _, dy, dx []float32, s *step) {
	if dx != nil {
		panic("nn: a one-channel convolution is a model's first layer; it computes no input gradient")
	}
	gw := g[:c.l.outC*c.l.k*c.l.k]
	planeWeightGrad(c.planes, dy, gw, g[len(gw):], c.sums, s.batch, c.o.H, c.o.W, c.pw, c.l.outC, c.l.k)
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

// planeWeightGradGo is planeWeightGrad in Go: gw (outC x k x k) and gb
// (outC) from the padded planes and dy (outC x batch x oh x ow).
func planeWeightGradGo(planes, dy, gw, gb []float32, batch, oh, ow, pw, outC, k int) {
	ph := oh + k - 1
	total := func(acc *[lanes]float32) float32 {
		t := acc[0]
		for _, v := range acc[1:] {
			t += v
		}
		return t
	}
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
	for o := 0; o < outC; o++ {
		var bias [lanes]float32
		each(o, func(_, _, _ int, d *[lanes]float32) {
			for l, v := range d {
				bias[l] += v
			}
		})
		gb[o] = total(&bias)
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				var acc [lanes]float32
				each(o, func(s, r, c0 int, d *[lanes]float32) {
					x := planes[s*ph*pw+(r+ki)*pw+kj+c0:][:lanes]
					for l, v := range d {
						acc[l] += float32(v * x[l])
					}
				})
				gw[(o*k+ki)*k+kj] = total(&acc)
			}
		}
	}
}
