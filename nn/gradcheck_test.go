package nn

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
)

// The reference below is an independent float64 implementation of every
// layer, sample by sample in C x H x W layout (the engine works on whole
// batches in C x B x H x W). Gradient checks compare the engine's analytic
// float32 gradient with central finite differences of the reference loss.

// refForward returns the mean cross-entropy of the batch under the
// reference, with the dropout masks the engine drew (per layer, in the
// engine's layout).
func refForward(m *Model, p []float64, xs [][]float64, bags [][]int32, labels []int32, masks map[int][]float32) float64 {
	b := len(labels)
	acts := xs
	if m.text {
		acts = make([][]float64, b)
	}
	for li, l := range m.layers {
		in, out := m.shapes[li], m.shapes[li+1]
		w := p[m.offsets[li]:m.offsets[li+1]]
		next := make([][]float64, b)
		for s := 0; s < b; s++ {
			x := acts[s]
			y := make([]float64, out.size())
			switch l := l.(type) {
			case conv2d:
				k := l.k
				fan := in.C * k * k
				for oc := 0; oc < out.C; oc++ {
					for oh := 0; oh < out.H; oh++ {
						for ow := 0; ow < out.W; ow++ {
							v := w[out.C*fan+oc]
							for c := 0; c < in.C; c++ {
								for ki := 0; ki < k; ki++ {
									for kj := 0; kj < k; kj++ {
										ih, iw := oh+ki-l.pad, ow+kj-l.pad
										if ih >= 0 && ih < in.H && iw >= 0 && iw < in.W {
											v += w[oc*fan+(c*k+ki)*k+kj] * x[(c*in.H+ih)*in.W+iw]
										}
									}
								}
							}
							y[(oc*out.H+oh)*out.W+ow] = v
						}
					}
				}
			case maxPool2:
				for c := 0; c < out.C; c++ {
					for oh := 0; oh < out.H; oh++ {
						for ow := 0; ow < out.W; ow++ {
							v := math.Inf(-1)
							for a := 0; a < 4; a++ {
								v = math.Max(v, x[(c*in.H+2*oh+a/2)*in.W+2*ow+a%2])
							}
							y[(c*out.H+oh)*out.W+ow] = v
						}
					}
				}
			case relu:
				for i, v := range x {
					y[i] = math.Max(v, 0)
				}
			case dropout:
				mask := masks[li]
				for i, v := range x {
					at := s*in.size() + i // flat: B x F
					if in.Spatial {
						hw := in.H * in.W
						at = (i/hw*b+s)*hw + i%hw
					}
					y[i] = v * float64(mask[at])
				}
			case flatten:
				copy(y, x)
			case linear:
				for o := 0; o < out.C; o++ {
					v := w[out.C*in.size()+o]
					for i, xv := range x {
						v += w[o*in.size()+i] * xv
					}
					y[o] = v
				}
			case embeddingBag:
				for _, t := range bags[s] {
					for j := range y {
						y[j] += w[int(t)*l.dim+j] / float64(len(bags[s]))
					}
				}
			}
			next[s] = y
		}
		acts = next
	}
	loss := 0.0
	for s, logits := range acts {
		hi := math.Inf(-1)
		for _, v := range logits {
			hi = math.Max(hi, v)
		}
		z := 0.0
		for _, v := range logits {
			z += math.Exp(v - hi)
		}
		loss += math.Log(z) + hi - logits[labels[s]]
	}
	return loss / float64(b)
}

// gradCheck runs the engine's forward/backward on a random batch and
// compares the loss with the reference and the gradient with reference
// finite differences on up to perLayer parameters of every layer.
func gradCheck(t *testing.T, m *Model, batch, vocab int, perLayer int) {
	t.Helper()
	r := rng.New(1, "gradcheck-data")
	p := make([]float32, m.Params)
	m.Init(p, 3)
	n := newNet(m, batch)
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32(r.IntN(m.Classes))
	}
	xs := make([][]float64, batch)
	var bags [][]int32
	s := &step{batch: batch, train: true, dropout: rng.New(1, "dropout", 0, 0, 0)}
	if m.text {
		s.offsets = []int64{0}
		for i := 0; i < batch; i++ {
			bag := make([]int32, 1+r.IntN(5))
			for j := range bag {
				bag[j] = int32(r.IntN(vocab))
			}
			bags = append(bags, bag)
			s.tokens = append(s.tokens, bag...)
			s.offsets = append(s.offsets, int64(len(s.tokens)))
		}
	} else {
		in := m.in
		for i := range xs {
			xs[i] = make([]float64, in.size())
			for j := range xs[i] {
				v := float32(r.NormFloat64())
				xs[i][j] = float64(v)
				at := i*in.size() + j
				if in.Spatial {
					hw := in.H * in.W
					at = (j/hw*batch+i)*hw + j%hw
				}
				n.acts[0][at] = v
			}
		}
	}
	g := make([]float32, m.Params)
	loss := n.lossGrad(p, g, labels, s)
	masks := map[int][]float32{}
	for i, k := range n.kernels {
		if d, ok := k.(*dropoutKernel); ok {
			masks[i] = d.mask
		}
	}
	p64 := make([]float64, len(p))
	for i, v := range p {
		p64[i] = float64(v)
	}
	ref := refForward(m, p64, xs, bags, labels, masks)
	if math.Abs(loss-ref) > 1e-5*math.Max(1, math.Abs(ref)) {
		t.Fatalf("%s: engine loss %.9g, reference %.9g", m.Name, loss, ref)
	}
	const eps = 1e-6
	worst := 0.0
	for li := range m.layers {
		lo, hi := m.offsets[li], m.offsets[li+1]
		for k := 0; k < perLayer && hi > lo; k++ {
			i := lo + r.IntN(hi-lo)
			if k < hi-lo && hi-lo <= perLayer {
				i = lo + k
			}
			orig := p64[i]
			p64[i] = orig + eps
			up := refForward(m, p64, xs, bags, labels, masks)
			p64[i] = orig - eps
			down := refForward(m, p64, xs, bags, labels, masks)
			p64[i] = orig
			fd := (up - down) / (2 * eps)
			err := math.Abs(float64(g[i])-fd) / math.Max(1e-3, math.Abs(fd)+math.Abs(float64(g[i])))
			worst = math.Max(worst, err)
			if err > 1e-4 {
				t.Errorf("%s layer %d (%T) parameter %d: engine gradient %.6g, finite difference %.6g", m.Name, li, m.layers[li], i-lo, g[i], fd)
			}
		}
	}
	t.Logf("%s: %d params, loss %.6f (reference %.6f), worst relative gradient error %.2g", m.Name, m.Params, loss, ref, worst)
}

// tiny builds a test model from layers.
func tiny(name string, in shape, classes int, text bool, layers ...layer) *Model {
	m := &Model{Name: name, Classes: classes, in: in, text: text, layers: layers}
	m.layout()
	return m
}

func TestGradientsOfEveryLayer(t *testing.T) {
	img := shape{C: 2, H: 6, W: 6, Spatial: true}
	cases := []*Model{
		tiny("conv-pad", img, 3, false, conv2d{3, 3, 1}, flatten{}, linear{3}),
		tiny("conv-conv", img, 3, false, conv2d{3, 3, 0}, relu{}, conv2d{2, 2, 1}, flatten{}, linear{3}),
		tiny("conv-pool", img, 3, false, conv2d{4, 3, 1}, relu{}, maxPool2{}, flatten{}, linear{3}),
		tiny("spatial-dropout", img, 3, false, conv2d{2, 3, 0}, dropout{0.25}, flatten{}, linear{3}),
		tiny("dense", shape{C: 7, H: 1, W: 1}, 4, false, linear{5}, relu{}, dropout{0.5}, linear{4}),
		tiny("bag", shape{}, 3, true, embeddingBag{11, 4}, linear{3}, dropout{0.5}),
	}
	for _, m := range cases {
		gradCheck(t, m, 5, 11, 40)
	}
}

func TestGradientsOfThePaperModels(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Input
	}{
		{"lenet", Input{Shape: []int{1, 28, 28}, Classes: 10}},
		{"lenet", Input{Shape: []int{3, 32, 32}, Classes: 10}},
		{"cnn", Input{Shape: []int{1, 28, 28}, Classes: 62}},
		{"embedding-bag", Input{Classes: 4, Vocab: 50}},
		{"mlp", Input{Shape: []int{1, 28, 28}, Classes: 10}},
		{"logreg", Input{Shape: []int{20}, Classes: 4}},
	} {
		m, err := NewModel(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		gradCheck(t, m, 3, 50, 6)
	}
}

func TestModelShapes(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     Input
		params int
	}{
		// LeNet: conv 6x1x5x5+6, conv 16x6x5x5+16, 400x120+120, 120x84+84, 84x10+10.
		{"lenet", Input{Shape: []int{1, 28, 28}, Classes: 10}, 156 + 2416 + 48120 + 10164 + 850},
		{"lenet", Input{Shape: []int{3, 32, 32}, Classes: 10}, 456 + 2416 + 48120 + 10164 + 850},
		// EMNIST CNN: 32x1x3x3+32, 64x32x3x3+64, 9216x128+128, 128x62+62.
		{"cnn", Input{Shape: []int{1, 28, 28}, Classes: 62}, 320 + 18496 + 1179776 + 7998},
		// AG NEWS: 95812x64 embeddings, 64x4+4.
		{"embedding-bag", Input{Classes: 4, Vocab: 95812}, 95812*64 + 260},
	} {
		m, err := NewModel(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if m.Params != c.params {
			t.Errorf("%s %v: %d parameters, want %d", c.name, c.in.Shape, m.Params, c.params)
		}
	}
	if _, err := NewModel("cnn", Input{Shape: []int{3, 32, 32}, Classes: 10}); err == nil {
		t.Error("cnn accepted 3x32x32 images")
	}
}
