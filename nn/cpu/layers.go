package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ump-lab/ump/nn"
)

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

// bind makes layer l's kernel, with buffers for batches of up to maxBatch
// samples.
func bind(l nn.Layer, in nn.Shape, maxBatch int) kernel {
	switch l := l.(type) {
	case nn.Conv2d:
		return bindConv(l, in, maxBatch)
	case nn.MaxPool2:
		o := l.Out(in)
		return &poolKernel{in: in, o: o, at: make([]int32, o.Size()*maxBatch)}
	case nn.ReLU:
		return reluKernel{n: in.Size()}
	case nn.Dropout:
		threshold, scale := l.MaskParams()
		return &dropoutKernel{n: in.Size(), mask: make([]float32, in.Size()*maxBatch), threshold: threshold,
			scale: scale}
	case nn.Flatten:
		return flattenKernel{in: in}
	case nn.Linear:
		return linearKernel{in: in.Size(), out: l.OutF}
	case nn.EmbeddingBag:
		return bagKernel(l)
	}
	panic(fmt.Sprintf("the CPU engine has no kernel for layer %T", l))
}

// kernel runs a layer. forward writes y from x; backward writes the
// parameter gradient g (every entry) and, when dx is not nil, dx.
type kernel interface {
	forward(p, x, y []float32, s *step)
	backward(p, g, x, y, dy, dx []float32, s *step)
}

// ---- Conv2d: im2col + GEMM over chunks of the batch (few taps:
// conv_plane.go; 16k output channels and short filters: conv_lanes.go) ----

// colFloats is the size an im2col chunk aims at: the samples of a chunk
// fit the core's L2 cache, where the GEMMs run three to ten times faster
// than over the whole batch.
const colFloats = 160 << 10

// bindConv picks a convolution's kernel by its order: direct for few taps
// (conv_plane.go) or for 16k output channels and short filters
// (conv_lanes.go), else im2col and GEMM.
func bindConv(l nn.Conv2d, in nn.Shape, maxBatch int) kernel {
	switch l.Order(in) {
	case nn.ConvPlanes:
		return bindPlane(l, in, maxBatch)
	case nn.ConvLanes:
		return bindLanes(l, in, maxBatch)
	}
	o := l.Out(in)
	rows := in.C * l.K * l.K
	chunk := min(maxBatch, max(1, colFloats/(rows*o.H*o.W)))
	return &convKernel{l: l, in: in, o: o, rows: rows, chunk: chunk}
}

type convKernel struct {
	l     nn.Conv2d
	in, o nn.Shape
	rows  int // C*k*k
	chunk int // samples per im2col and GEMM
	// cols holds one im2col block per chunk: training keeps them all from
	// forward for backward, evaluation reuses the first.
	cols [][]float32
	dcol []float32 // allocated when an input gradient is first needed
}

// block returns chunk i's im2col buffer.
func (c *convKernel) block(i int) []float32 {
	for len(c.cols) <= i {
		c.cols = append(c.cols, make([]float32, c.rows*c.chunk*c.o.H*c.o.W))
	}
	return c.cols[i]
}

// im2col writes, for samples s0..s0+nb of a batch of b, col[(c*k+ki)*k+kj]
// [(s-s0), oh, ow] = x[c, s, oh+ki-pad, ow+kj-pad] (zero outside the image).
func (c *convKernel) im2col(col, x []float32, b, s0, nb int) {
	k, pad, in, o := c.l.K, c.l.Pad, c.in, c.o
	n := nb * o.H * o.W
	for ch := 0; ch < in.C; ch++ {
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				row := col[((ch*k+ki)*k+kj)*n:][:n]
				lo, hi := max(0, pad-kj), min(o.W, in.W+pad-kj) // ow range inside the image
				if o.W == in.W {
					c.shiftRows(row, x, b, s0, nb, ch, ki, kj)
					continue
				}
				for s := 0; s < nb; s++ {
					plane := x[(ch*b+s0+s)*in.H*in.W:][:in.H*in.W]
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

// shiftRows is im2col's row (ch, ki, kj) when the output is as wide as the
// input ("same" padding): each sample's rows inside the image are one
// shifted copy of the plane, then the columns that fell off an edge are
// zeroed.
func (c *convKernel) shiftRows(row, x []float32, b, s0, nb, ch, ki, kj int) {
	pad, in, o := c.l.Pad, c.in, c.o
	dh, dw := ki-pad, kj-pad
	ohLo, ohHi := max(0, -dh), min(o.H, in.H-dh) // output rows inside the image
	for s := 0; s < nb; s++ {
		plane := x[(ch*b+s0+s)*in.H*in.W:][:in.H*in.W]
		dst := row[s*o.H*o.W:][:o.H*o.W]
		clear(dst[:ohLo*o.W])
		clear(dst[ohHi*o.W:])
		if ohLo >= ohHi {
			continue
		}
		from, to := ohLo*o.W, ohHi*o.W // dst[i] = plane[i + dh*W + dw]
		lo, hi := max(from, -(dh*in.W+dw)), min(to, len(plane)-(dh*in.W+dw))
		clear(dst[from:lo])
		copy(dst[lo:hi], plane[lo+dh*in.W+dw:])
		clear(dst[hi:to])
		for oh := ohLo; oh < ohHi; oh++ { // columns past the left or right edge
			r := dst[oh*o.W:][:o.W]
			if dw < 0 {
				clear(r[:-dw])
			} else {
				clear(r[o.W-dw:])
			}
		}
	}
}

// col2im adds dcol back into dx for samples s0..s0+nb (the adjoint of
// im2col).
func (c *convKernel) col2im(dx []float32, b, s0, nb int) {
	k, pad, in, o := c.l.K, c.l.Pad, c.in, c.o
	n := nb * o.H * o.W
	for ch := 0; ch < in.C; ch++ {
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				row := c.dcol[((ch*k+ki)*k+kj)*n:][:n]
				lo, hi := max(0, pad-kj), min(o.W, in.W+pad-kj)
				if lo >= hi {
					continue
				}
				for s := 0; s < nb; s++ {
					plane := dx[(ch*b+s0+s)*in.H*in.W:][:in.H*in.W]
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
	hw := c.o.H * c.o.W
	n := s.batch * hw
	w, bias := p[:c.l.OutC*c.rows], p[c.l.OutC*c.rows:]
	for oc := 0; oc < c.l.OutC; oc++ {
		fill(y[oc*n:][:n], bias[oc])
	}
	for s0 := 0; s0 < s.batch; s0 += c.chunk {
		nb := min(c.chunk, s.batch-s0)
		col := c.block(0)
		if s.train {
			col = c.block(s0 / c.chunk)
		}
		c.im2col(col, x, s.batch, s0, nb)
		gemm(false, false, c.l.OutC, nb*hw, c.rows, w, c.rows, col, nb*hw, true, y[s0*hw:], n)
	}
}

func (c *convKernel) backward(p, g, x, y, dy, dx []float32, s *step) {
	hw := c.o.H * c.o.W
	n := s.batch * hw
	w := p[:c.l.OutC*c.rows]
	gw, gb := g[:c.l.OutC*c.rows], g[c.l.OutC*c.rows:]
	for oc := range gb {
		gb[oc] = sum(dy[oc*n:][:n])
	}
	for s0 := 0; s0 < s.batch; s0 += c.chunk {
		nb := min(c.chunk, s.batch-s0)
		col := c.block(s0 / c.chunk) // written by forward
		gemm(false, true, c.l.OutC, c.rows, nb*hw, dy[s0*hw:], n, col, nb*hw, s0 > 0, gw, c.rows)
	}
	if dx != nil {
		c.inputGrad(w, dy, dx, s.batch)
	}
}

// inputGrad writes dx from the filters w and dy: per chunk of the batch,
// the unfolded gradient (a GEMM), folded back.
func (c *convKernel) inputGrad(w, dy, dx []float32, batch int) {
	hw := c.o.H * c.o.W
	n := batch * hw
	clear(dx[:c.in.C*batch*c.in.H*c.in.W])
	if c.dcol == nil {
		c.dcol = make([]float32, c.rows*c.chunk*hw)
	}
	for s0 := 0; s0 < batch; s0 += c.chunk {
		nb := min(c.chunk, batch-s0)
		gemm(true, false, c.rows, nb*hw, c.l.OutC, w, c.rows, dy[s0*hw:], n, false, c.dcol, nb*hw)
		c.col2im(dx, batch, s0, nb)
	}
}

// sum adds in float64 with eight running sums (a fixed order, so the
// result is reproducible) combined at the end.
func sum(v []float32) float32 {
	var acc [8]float64
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		acc[0] += float64(w[0])
		acc[1] += float64(w[1])
		acc[2] += float64(w[2])
		acc[3] += float64(w[3])
		acc[4] += float64(w[4])
		acc[5] += float64(w[5])
		acc[6] += float64(w[6])
		acc[7] += float64(w[7])
	}
	for ; i < len(v); i++ {
		acc[i%8] += float64(v[i])
	}
	return float32(((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])))
}

// fill sets every element of v to x, doubling copies.
func fill(v []float32, x float32) {
	if len(v) == 0 {
		return
	}
	v[0] = x
	for k := 1; k < len(v); k *= 2 {
		copy(v[k:], v[:k])
	}
}

// ---- MaxPool2d, 2x2 windows, stride 2 ----

type poolKernel struct {
	in, o nn.Shape
	at    []int32 // training: where each output's maximum is in x
}

// forward takes each window's maximum; in training it also records the
// first position (row-major) that holds it, to which backward routes the
// gradient (the last when the window holds a NaN). poolForward (C under
// cgo) computes it, or poolForwardGo, which defines it.
func (k *poolKernel) forward(_, x, y []float32, s *step) {
	poolForward(x, y, k.at, k.in.C*s.batch, k.in.H, k.in.W, s.train)
}

// poolForwardGo takes the 2x2 windows' maxima of planes planes of h x w
// (a last odd row or column is left out) into y, and in training (train)
// their positions within the plane into at.
func poolForwardGo(x, y []float32, at []int32, planes, h, w int, train bool) {
	oh, ow := h/2, w/2
	for pl := 0; pl < planes; pl++ {
		src := x[pl*h*w:]
		dst := y[pl*oh*ow:][:oh*ow]
		at := at[pl*oh*ow:][:oh*ow]
		for r := 0; r < oh; r++ {
			i0 := 2 * r * w
			r0 := src[i0:][:2*ow]
			r1 := src[i0+w:][:2*ow]
			d := dst[r*ow:][:ow]
			if !train {
				for c := range d {
					d[c] = max(max(r0[2*c], r0[2*c+1]), max(r1[2*c], r1[2*c+1]))
				}
				continue
			}
			a := at[r*ow:][:ow]
			for c := range d {
				v00, v01, v10, v11 := r0[2*c], r0[2*c+1], r1[2*c], r1[2*c+1]
				m := max(max(v00, v01), max(v10, v11))
				d[c] = m
				off := int32(w + 1) // the first holding m, without branches
				if v10 == m {
					off = int32(w)
				}
				if v01 == m {
					off = 1
				}
				if v00 == m {
					off = 0
				}
				a[c] = int32(i0+2*c) + off
			}
		}
	}
}

func (k *poolKernel) backward(_, _, _, _, dy, dx []float32, s *step) {
	in, o := k.in, k.o
	clear(dx[:in.C*s.batch*in.H*in.W])
	for pl := 0; pl < in.C*s.batch; pl++ {
		d := dx[pl*in.H*in.W:][:in.H*in.W]
		for i, g := range dy[pl*o.H*o.W:][:o.H*o.W] {
			d[k.at[pl*o.H*o.W+i]] = g
		}
	}
}

// ---- ReLU ----

type reluKernel struct{ n int }

// forward is reluForward: C under cgo, else reluForwardGo, which defines
// it.
func (k reluKernel) forward(_, x, y []float32, s *step) {
	reluForward(x[:k.n*s.batch], y[:k.n*s.batch])
}

func reluForwardGo(x, y []float32) {
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

// backward passes dy where y > 0. y >= 0, so its bits are zero exactly
// where the unit was off; the mask is built without a branch.
func (k reluKernel) backward(_, _, _, y, dy, dx []float32, s *step) {
	y, dy, dx = y[:k.n*s.batch], dy[:k.n*s.batch], dx[:k.n*s.batch]
	for i, v := range y {
		on := uint32(int32(-math.Float32bits(v)) >> 31) // all ones when v > 0
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & on)
	}
}

// ---- Dropout (inverted: kept units are scaled by 1/(1-p)) ----

type dropoutKernel struct {
	n         int
	mask      []float32 // 0 or scale
	threshold uint64    // a unit drops when its 16-bit draw is below this
	scale     float32
}

func (k *dropoutKernel) forward(_, x, y []float32, s *step) {
	n := k.n * s.batch
	if !s.train {
		copy(y[:n], x[:n])
		return
	}
	mask := k.mask[:n]
	nn.DropoutMask(s.dropout, k.threshold, k.scale, mask)
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

type flattenKernel struct{ in nn.Shape }

func (k flattenKernel) forward(_, x, y []float32, s *step) {
	hw, f := k.in.H*k.in.W, k.in.Size()
	for c := 0; c < k.in.C; c++ {
		for b := 0; b < s.batch; b++ {
			copy(y[b*f+c*hw:][:hw], x[(c*s.batch+b)*hw:])
		}
	}
}

func (k flattenKernel) backward(_, _, _, _, dy, dx []float32, s *step) {
	hw, f := k.in.H*k.in.W, k.in.Size()
	for c := 0; c < k.in.C; c++ {
		for b := 0; b < s.batch; b++ {
			copy(dx[(c*s.batch+b)*hw:][:hw], dy[b*f+c*hw:])
		}
	}
}

// ---- Linear: y = x W^T + b, W stored out x in as in PyTorch ----

type linearKernel struct{ in, out int }

func (k linearKernel) forward(p, x, y []float32, s *step) {
	w, bias := p[:k.out*k.in], p[k.out*k.in:]
	for b := 0; b < s.batch; b++ {
		copy(y[b*k.out:][:k.out], bias)
	}
	gemm(false, true, s.batch, k.out, k.in, x, k.in, w, k.in, true, y, k.out)
}

func (k linearKernel) backward(p, g, x, _, dy, dx []float32, s *step) {
	w := p[:k.out*k.in]
	gw, gb := g[:k.out*k.in], g[k.out*k.in:]
	gemm(true, false, k.out, k.in, s.batch, dy, k.out, x, k.in, false, gw, k.in)
	for o := range gb {
		acc := 0.0
		for b := 0; b < s.batch; b++ {
			acc += float64(dy[b*k.out+o])
		}
		gb[o] = float32(acc)
	}
	if dx != nil {
		gemm(false, false, s.batch, k.in, k.out, dy, k.out, w, k.in, false, dx, k.in)
	}
}

// ---- EmbeddingBag (mean): the first layer of text models ----

type bagKernel nn.EmbeddingBag

func (k bagKernel) forward(p, _, y []float32, s *step) {
	for b := 0; b < s.batch; b++ {
		out := y[b*k.Dim:][:k.Dim]
		clear(out)
		bag := s.tokens[s.offsets[b]:s.offsets[b+1]]
		for _, t := range bag {
			row := p[int(t)*k.Dim:][:k.Dim]
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
		d := dy[b*k.Dim:][:k.Dim]
		for _, t := range bag {
			row := g[int(t)*k.Dim:][:k.Dim]
			for j, v := range d {
				row[j] += float32(v * inv)
			}
		}
	}
}
