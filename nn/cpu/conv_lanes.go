package cpu

import "github.com/ump-lab/ump/nn"

// ---- Conv2d with 16k output channels and short filters, computed directly ----
//
// LeNet's second layer (6 to 16 channels, 5x5, 14x14 to 10x10) unfolded is
// a GEMM with 16 rows and 150 inner products, too small for a matrix product to reach
// its speed once the unfolding is paid. Directly, a vector holds 16 output
// channels: each output is a multiply-add of the filters' tap (16 channels)
// by one input value, for every input channel and tap. The input is
// zero-padded per channel and sample (kept from forward for the weight
// gradient); the filters are laid out [C][k][k][outC] and, for the
// gradient, dy [batch][oh][ow][outC]. The input gradient is
// conv_plane.go's (inputGradient).
//
// The kernels (lanesForward, lanesWeightGrad) are C vectors under cgo and
// Go loops otherwise (planeForwardGo's for the forward), with the same
// order of additions (no fused multiply-add), so they give the same bits:
//   - forward: y = bias, then y += w[ic][ki][kj] * x[ic][r+ki][c+kj] for
//     ic, ki, kj in order;
//   - weight and bias gradients: each a sum over samples, rows and columns
//     in order, of dy times the input (weights) or of dy (biases).

type lanesKernel struct {
	l      nn.Conv2d
	in, o  nn.Shape
	cb     int // outputs of a row computed at once: 10 for rows 10 wide (LeNet), else 8
	ph, pw int // a padded input plane: ph rows of pw floats
	xp     []float32
	wt     []float32 // the filters laid out [C][k][k][outC] for the C forward
	dyt    []float32 // dy, [batch][oh][ow][outC]
	sums   []float32 // the C weight gradient's running sums
	grad   *inputGradient
}

func bindLanes(l nn.Conv2d, in nn.Shape, maxBatch int) *lanesKernel {
	o := l.Out(in)
	cb := 8
	if o.W == 10 {
		cb = 10
	}
	ph, pw := o.H+l.K-1, (o.W+cb-1)/cb*cb+l.K-1
	taps := in.C * l.K * l.K
	return &lanesKernel{l: l, in: in, o: o, cb: cb, ph: ph, pw: pw,
		xp: make([]float32, in.C*maxBatch*ph*pw), wt: make([]float32, taps*l.OutC),
		dyt: make([]float32, maxBatch*o.H*o.W*l.OutC), sums: make([]float32, (taps+1)*l.OutC),
		grad: newInputGradient(l, in, maxBatch)}
}

func (c *lanesKernel) forward(p, x, y []float32, s *step) {
	in, k := c.in, c.l.K
	padPlanes(c.xp, x, in, s.batch, c.l.Pad, c.ph, c.pw)
	filters := c.l.OutC * in.C * k * k
	lanesForward(c.xp, p[:filters], p[filters:], c.wt, y, in.C, s.batch, c.o.H, c.o.W, c.ph, c.pw, c.l.OutC, k, c.cb)
}

func (c *lanesKernel) backward(p, g, _, _, dy, dx []float32, s *step) {
	outC, hw := c.l.OutC, c.o.H*c.o.W
	for oc := 0; oc < outC; oc++ {
		for i, v := range dy[oc*s.batch*hw:][:s.batch*hw] {
			c.dyt[i*outC+oc] = v
		}
	}
	taps := c.in.C * c.l.K * c.l.K
	lanesWeightGrad(
		c.xp,
		c.dyt,
		g[:outC*taps],
		g[outC*taps:],
		c.sums,
		c.in.C,
		s.batch,
		c.o.H,
		c.o.W,
		c.ph,
		c.pw,
		outC,
		c.l.K,
	)
	if dx != nil {
		c.grad.compute(p[:outC*taps], dy, dx, s.batch)
	}
}

// lanesBiasGrad is lanesWeightGrad's bias gradient gb (outC) from dyt
// (n positions x outC), on every path: each channel's sum over the
// positions in order.
func lanesBiasGrad(dyt, gb []float32, n, outC int) {
	for o := 0; o < outC; o++ {
		b := float32(0)
		for i := 0; i < n; i++ {
			b += dyt[i*outC+o]
		}
		gb[o] = b
	}
}

// channelsLast lays the filters w (outC x taps) out as wt (taps x outC),
// a tap's output channels side by side, for the vector kernels' forward.
func channelsLast(w, wt []float32, outC, taps int) {
	for oc := 0; oc < outC; oc++ {
		for t := 0; t < taps; t++ {
			wt[t*outC+oc] = w[oc*taps+t]
		}
	}
}

// lanesWeightGradGo is lanesWeightGrad in Go.
func lanesWeightGradGo(xp, dyt, gw, gb, _ []float32, chans, batch, oh, ow, ph, pw, outC, k int) {
	lanesBiasGrad(dyt, gb, batch*oh*ow, outC)
	for o := 0; o < outC; o++ {
		for ic := 0; ic < chans; ic++ {
			for ki := 0; ki < k; ki++ {
				for kj := 0; kj < k; kj++ {
					acc := float32(0)
					for s := 0; s < batch; s++ {
						for r := 0; r < oh; r++ {
							src := xp[((ic*batch+s)*ph+r+ki)*pw+kj:]
							d := dyt[(s*oh+r)*ow*outC:]
							for c := 0; c < ow; c++ {
								acc += float32(d[c*outC+o] * src[c])
							}
						}
					}
					gw[((o*chans+ic)*k+ki)*k+kj] = acc
				}
			}
		}
	}
}
