package nn

import (
	"math"
	"math/rand/v2"
)

// shape is one sample's activation shape. Spatial activations of a batch
// are stored channel-major over the batch, C x B x H x W, so that a
// convolution is one GEMM for the whole batch; flat activations are
// B x C (H = W = 1).
type shape struct {
	C, H, W int
	Spatial bool
}

func (s shape) size() int { return s.C * s.H * s.W }

// step is what one forward/backward pass needs besides parameters and
// activations.
type step struct {
	batch int
	train bool
	// dropout draws the masks of this worker, round and local step.
	dropout *rand.Rand
	// tokens and offsets hold the batch's bags for EmbeddingBag.
	tokens  []int32
	offsets []int64
}

// layer is one layer of a model: its configuration, parameter count and
// initialisation. bind makes a kernel with buffers for batches of up to
// maxBatch samples.
type layer interface {
	out(in shape) shape
	params(in shape) int
	init(p []float32, in shape, r *rand.Rand)
	bind(in shape, maxBatch int) kernel
}

// kernel runs a layer. forward writes y from x; backward writes the
// parameter gradient g (every entry) and, when dx is not nil, dx.
type kernel interface {
	forward(p, x, y []float32, s *step)
	backward(p, g, x, y, dy, dx []float32, s *step)
}

// kaimingUniform fills weights and biases as PyTorch's Conv2d and Linear
// defaults do: U(-1/sqrt(fanIn), 1/sqrt(fanIn)) for both.
func kaimingUniform(w, b []float32, fanIn int, r *rand.Rand) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = float32((2*r.Float64() - 1) * bound)
	}
	for i := range b {
		b[i] = float32((2*r.Float64() - 1) * bound)
	}
}

// ---- Conv2d: im2col + GEMM over the whole batch ----

type conv2d struct{ outC, k, pad int }

func (l conv2d) out(in shape) shape {
	return shape{C: l.outC, H: in.H + 2*l.pad - l.k + 1, W: in.W + 2*l.pad - l.k + 1, Spatial: true}
}
func (l conv2d) params(in shape) int { return l.outC*in.C*l.k*l.k + l.outC }
func (l conv2d) init(p []float32, in shape, r *rand.Rand) {
	fan := in.C * l.k * l.k
	kaimingUniform(p[:l.outC*fan], p[l.outC*fan:], fan, r)
}
func (l conv2d) bind(in shape, maxBatch int) kernel {
	o := l.out(in)
	rows := in.C * l.k * l.k
	return &convKernel{l: l, in: in, o: o, rows: rows, col: make([]float32, rows*maxBatch*o.H*o.W), dcol: make([]float32, rows*maxBatch*o.H*o.W)}
}

type convKernel struct {
	l         conv2d
	in, o     shape
	rows      int // C*k*k
	col, dcol []float32
}

// im2col writes col[(c*k+ki)*k+kj][b, oh, ow] = x[c, b, oh+ki-pad, ow+kj-pad]
// (zero outside the image).
func (c *convKernel) im2col(x []float32, b int) {
	k, pad, in, o := c.l.k, c.l.pad, c.in, c.o
	n := b * o.H * o.W
	for ch := 0; ch < in.C; ch++ {
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				row := c.col[((ch*k+ki)*k+kj)*n:][:n]
				lo, hi := max(0, pad-kj), min(o.W, in.W+pad-kj) // ow range inside the image
				for s := 0; s < b; s++ {
					plane := x[(ch*b+s)*in.H*in.W:][:in.H*in.W]
					for oh := 0; oh < o.H; oh++ {
						dst := row[(s*o.H+oh)*o.W:][:o.W]
						ih := oh + ki - pad
						if ih < 0 || ih >= in.H || lo >= hi {
							clear(dst)
							continue
						}
						clear(dst[:lo])
						copy(dst[lo:hi], plane[ih*in.W+lo+kj-pad:])
						clear(dst[hi:])
					}
				}
			}
		}
	}
}

// col2im adds dcol back into dx (the adjoint of im2col).
func (c *convKernel) col2im(dx []float32, b int) {
	k, pad, in, o := c.l.k, c.l.pad, c.in, c.o
	n := b * o.H * o.W
	clear(dx[:in.C*b*in.H*in.W])
	for ch := 0; ch < in.C; ch++ {
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				row := c.dcol[((ch*k+ki)*k+kj)*n:][:n]
				lo, hi := max(0, pad-kj), min(o.W, in.W+pad-kj)
				if lo >= hi {
					continue
				}
				for s := 0; s < b; s++ {
					plane := dx[(ch*b+s)*in.H*in.W:][:in.H*in.W]
					for oh := 0; oh < o.H; oh++ {
						ih := oh + ki - pad
						if ih < 0 || ih >= in.H {
							continue
						}
						src := row[(s*o.H+oh)*o.W+lo:][:hi-lo]
						dst := plane[ih*in.W+lo+kj-pad:][:hi-lo]
						for i, v := range src {
							dst[i] += v
						}
					}
				}
			}
		}
	}
}

func (c *convKernel) forward(p, x, y []float32, s *step) {
	n := s.batch * c.o.H * c.o.W
	w, bias := p[:c.l.outC*c.rows], p[c.l.outC*c.rows:]
	c.im2col(x, s.batch)
	for oc := 0; oc < c.l.outC; oc++ {
		row := y[oc*n:][:n]
		for i := range row {
			row[i] = bias[oc]
		}
	}
	gemm(false, false, c.l.outC, n, c.rows, 1, w, c.rows, c.col, n, 1, y, n)
}

func (c *convKernel) backward(p, g, x, y, dy, dx []float32, s *step) {
	n := s.batch * c.o.H * c.o.W
	w := p[:c.l.outC*c.rows]
	gw, gb := g[:c.l.outC*c.rows], g[c.l.outC*c.rows:]
	gemm(false, true, c.l.outC, c.rows, n, 1, dy, n, c.col, n, 0, gw, c.rows)
	for oc := range gb {
		gb[oc] = sum(dy[oc*n:][:n])
	}
	if dx != nil {
		gemm(true, false, c.rows, n, c.l.outC, 1, w, c.rows, dy, n, 0, c.dcol, n)
		c.col2im(dx, s.batch)
	}
}

// sum adds in float64 for accuracy, in index order.
func sum(v []float32) float32 {
	s := 0.0
	for _, x := range v {
		s += float64(x)
	}
	return float32(s)
}

// ---- MaxPool2d, 2x2 windows, stride 2 ----

type maxPool2 struct{}

func (maxPool2) out(in shape) shape { return shape{C: in.C, H: in.H / 2, W: in.W / 2, Spatial: true} }
func (maxPool2) params(shape) int   { return 0 }
func (maxPool2) init([]float32, shape, *rand.Rand) {}
func (l maxPool2) bind(in shape, maxBatch int) kernel {
	return &poolKernel{in: in, o: l.out(in), arg: make([]uint8, in.C*maxBatch*(in.H/2)*(in.W/2))}
}

type poolKernel struct {
	in, o shape
	arg   []uint8 // which of the 4 window positions won
}

func (k *poolKernel) forward(_, x, y []float32, s *step) {
	in, o := k.in, k.o
	for pl := 0; pl < in.C*s.batch; pl++ {
		src := x[pl*in.H*in.W:]
		dst := y[pl*o.H*o.W:]
		arg := k.arg[pl*o.H*o.W:]
		for oh := 0; oh < o.H; oh++ {
			r0 := src[2*oh*in.W:]
			r1 := src[(2*oh+1)*in.W:]
			for ow := 0; ow < o.W; ow++ {
				best, at := r0[2*ow], uint8(0)
				if v := r0[2*ow+1]; v > best {
					best, at = v, 1
				}
				if v := r1[2*ow]; v > best {
					best, at = v, 2
				}
				if v := r1[2*ow+1]; v > best {
					best, at = v, 3
				}
				dst[oh*o.W+ow], arg[oh*o.W+ow] = best, at
			}
		}
	}
}

func (k *poolKernel) backward(_, _, _, _, dy, dx []float32, s *step) {
	in, o := k.in, k.o
	clear(dx[:in.C*s.batch*in.H*in.W])
	for pl := 0; pl < in.C*s.batch; pl++ {
		d := dx[pl*in.H*in.W:]
		g := dy[pl*o.H*o.W:]
		arg := k.arg[pl*o.H*o.W:]
		for oh := 0; oh < o.H; oh++ {
			for ow := 0; ow < o.W; ow++ {
				a := int(arg[oh*o.W+ow])
				d[(2*oh+a/2)*in.W+2*ow+a%2] = g[oh*o.W+ow]
			}
		}
	}
}

// ---- ReLU ----

type relu struct{}

func (relu) out(in shape) shape { return in }
func (relu) params(shape) int   { return 0 }
func (relu) init([]float32, shape, *rand.Rand) {}
func (relu) bind(in shape, _ int) kernel {
	return reluKernel{n: in.size()}
}

type reluKernel struct{ n int }

func (k reluKernel) forward(_, x, y []float32, s *step) {
	x, y = x[:k.n*s.batch], y[:k.n*s.batch]
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

func (k reluKernel) backward(_, _, _, y, dy, dx []float32, s *step) {
	y, dy, dx = y[:k.n*s.batch], dy[:k.n*s.batch], dx[:k.n*s.batch]
	for i, v := range y {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// ---- Dropout (inverted: kept units are scaled by 1/(1-p)) ----

type dropout struct{ p float64 }

func (dropout) out(in shape) shape { return in }
func (dropout) params(shape) int   { return 0 }
func (dropout) init([]float32, shape, *rand.Rand) {}
func (l dropout) bind(in shape, maxBatch int) kernel {
	return &dropoutKernel{n: in.size(), mask: make([]float32, in.size()*maxBatch),
		threshold: uint64(math.Round(l.p * 65536)), scale: float32(1 / (1 - l.p))}
}

type dropoutKernel struct {
	n         int
	mask      []float32 // 0 or scale
	threshold uint64    // a unit drops when its 16-bit draw is below this
	scale     float32
}

// dropoutMask fills mask with 0 (dropped) or scale, four units per 64-bit
// draw of r.
func dropoutMask(r *rand.Rand, threshold uint64, scale float32, mask []float32) {
	for i := 0; i < len(mask); i += 4 {
		bits := r.Uint64()
		for j := i; j < min(i+4, len(mask)); j++ {
			if bits&0xffff < threshold {
				mask[j] = 0
			} else {
				mask[j] = scale
			}
			bits >>= 16
		}
	}
}

func (k *dropoutKernel) forward(_, x, y []float32, s *step) {
	n := k.n * s.batch
	if !s.train {
		copy(y[:n], x[:n])
		return
	}
	mask := k.mask[:n]
	dropoutMask(s.dropout, k.threshold, k.scale, mask)
	for i, m := range mask {
		y[i] = x[i] * m
	}
}

func (k *dropoutKernel) backward(_, _, _, _, dy, dx []float32, s *step) {
	for i, m := range k.mask[:k.n*s.batch] {
		dx[i] = dy[i] * m
	}
}

// ---- Flatten: C x B x H x W to B x (C*H*W), PyTorch's (c, h, w) order ----

type flatten struct{}

func (flatten) out(in shape) shape { return shape{C: in.size(), H: 1, W: 1} }
func (flatten) params(shape) int   { return 0 }
func (flatten) init([]float32, shape, *rand.Rand) {}
func (flatten) bind(in shape, _ int) kernel { return flattenKernel{in: in} }

type flattenKernel struct{ in shape }

func (k flattenKernel) forward(_, x, y []float32, s *step) {
	hw, f := k.in.H*k.in.W, k.in.size()
	for c := 0; c < k.in.C; c++ {
		for b := 0; b < s.batch; b++ {
			copy(y[b*f+c*hw:][:hw], x[(c*s.batch+b)*hw:])
		}
	}
}

func (k flattenKernel) backward(_, _, _, _, dy, dx []float32, s *step) {
	hw, f := k.in.H*k.in.W, k.in.size()
	for c := 0; c < k.in.C; c++ {
		for b := 0; b < s.batch; b++ {
			copy(dx[(c*s.batch+b)*hw:][:hw], dy[b*f+c*hw:])
		}
	}
}

// ---- Linear: y = x W^T + b, W stored out x in as in PyTorch ----

type linear struct{ outF int }

func (l linear) out(shape) shape      { return shape{C: l.outF, H: 1, W: 1} }
func (l linear) params(in shape) int  { return l.outF*in.size() + l.outF }
func (l linear) init(p []float32, in shape, r *rand.Rand) {
	kaimingUniform(p[:l.outF*in.size()], p[l.outF*in.size():], in.size(), r)
}
func (l linear) bind(in shape, _ int) kernel { return linearKernel{in: in.size(), out: l.outF} }

type linearKernel struct{ in, out int }

func (k linearKernel) forward(p, x, y []float32, s *step) {
	w, bias := p[:k.out*k.in], p[k.out*k.in:]
	for b := 0; b < s.batch; b++ {
		copy(y[b*k.out:][:k.out], bias)
	}
	gemm(false, true, s.batch, k.out, k.in, 1, x, k.in, w, k.in, 1, y, k.out)
}

func (k linearKernel) backward(p, g, x, _, dy, dx []float32, s *step) {
	w := p[:k.out*k.in]
	gw, gb := g[:k.out*k.in], g[k.out*k.in:]
	gemm(true, false, k.out, k.in, s.batch, 1, dy, k.out, x, k.in, 0, gw, k.in)
	for o := range gb {
		acc := 0.0
		for b := 0; b < s.batch; b++ {
			acc += float64(dy[b*k.out+o])
		}
		gb[o] = float32(acc)
	}
	if dx != nil {
		gemm(false, false, s.batch, k.in, k.out, 1, dy, k.out, w, k.in, 0, dx, k.in)
	}
}

// ---- EmbeddingBag (mean): the first layer of text models ----

type embeddingBag struct{ vocab, dim int }

func (l embeddingBag) out(shape) shape  { return shape{C: l.dim, H: 1, W: 1} }
func (l embeddingBag) params(shape) int { return l.vocab * l.dim }

// init draws N(0, 1) as PyTorch's EmbeddingBag does.
func (l embeddingBag) init(p []float32, _ shape, r *rand.Rand) {
	for i := range p {
		p[i] = float32(r.NormFloat64())
	}
}
func (l embeddingBag) bind(shape, int) kernel { return bagKernel(l) }

type bagKernel embeddingBag

func (k bagKernel) forward(p, _, y []float32, s *step) {
	for b := 0; b < s.batch; b++ {
		out := y[b*k.dim:][:k.dim]
		clear(out)
		bag := s.tokens[s.offsets[b]:s.offsets[b+1]]
		for _, t := range bag {
			row := p[int(t)*k.dim:][:k.dim]
			for j, v := range row {
				out[j] += v
			}
		}
		if len(bag) > 0 {
			inv := 1 / float32(len(bag))
			for j := range out {
				out[j] *= inv
			}
		}
	}
}

func (k bagKernel) backward(_, g, _, _, dy, _ []float32, s *step) {
	clear(g)
	for b := 0; b < s.batch; b++ {
		bag := s.tokens[s.offsets[b]:s.offsets[b+1]]
		if len(bag) == 0 {
			continue
		}
		inv := 1 / float32(len(bag))
		d := dy[b*k.dim:][:k.dim]
		for _, t := range bag {
			row := g[int(t)*k.dim:][:k.dim]
			for j, v := range d {
				row[j] += v * inv
			}
		}
	}
}
