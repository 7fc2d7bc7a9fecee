package cpu

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// The reference below is an independent float64 implementation of every
// layer, sample by sample in C x H x W layout (the engine works on whole
// batches in C x B x H x W). Gradient checks compare the engine's analytic
// float32 gradient with central finite differences of the reference loss.

// refForward returns the mean cross-entropy of the batch under the
// reference, with the dropout masks the engine drew (per layer, in the
// engine's layout).
func refForward(
	m *nn.Model,
	p []float64,
	xs [][]float64,
	bags [][]int32,
	labels []int32,
	masks map[int][]float32,
) float64 {
	b := len(labels)
	acts := xs
	if m.Text {
		acts = make([][]float64, b)
	}
	for li, l := range m.Layers {
		in, out := m.Shapes[li], m.Shapes[li+1]
		w := p[m.Offsets[li]:m.Offsets[li+1]]
		next := make([][]float64, b)
		for s := 0; s < b; s++ {
			x := acts[s]
			y := make([]float64, out.Size())
			switch l := l.(type) {
			case nn.Conv2d:
				k := l.K
				fan := in.C * k * k
				for oc := 0; oc < out.C; oc++ {
					for oh := 0; oh < out.H; oh++ {
						for ow := 0; ow < out.W; ow++ {
							v := w[out.C*fan+oc]
							for c := 0; c < in.C; c++ {
								for ki := 0; ki < k; ki++ {
									for kj := 0; kj < k; kj++ {
										ih, iw := oh+ki-l.Pad, ow+kj-l.Pad
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
			case nn.MaxPool2:
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
			case nn.ReLU:
				for i, v := range x {
					y[i] = math.Max(v, 0)
				}
			case nn.Dropout:
				mask := masks[li]
				for i, v := range x {
					at := s*in.Size() + i // flat: B x F
					if in.Spatial {
						hw := in.H * in.W
						at = (i/hw*b+s)*hw + i%hw
					}
					y[i] = v * float64(mask[at])
				}
			case nn.Flatten:
				copy(y, x)
			case nn.Linear:
				for o := 0; o < out.C; o++ {
					v := w[out.C*in.Size()+o]
					for i, xv := range x {
						v += w[o*in.Size()+i] * xv
					}
					y[o] = v
				}
			case nn.EmbeddingBag:
				for _, t := range bags[s] {
					for j := range y {
						y[j] += w[int(t)*l.Dim+j] / float64(len(bags[s]))
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
func gradCheck(t *testing.T, m *nn.Model, batch, vocab int, perLayer int) {
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
	if m.Text {
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
		in := m.In
		for i := range xs {
			xs[i] = make([]float64, in.Size())
			for j := range xs[i] {
				v := float32(r.NormFloat64())
				xs[i][j] = float64(v)
				at := i*in.Size() + j
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
	for li := range m.Layers {
		lo, hi := m.Offsets[li], m.Offsets[li+1]
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
				t.Errorf(
					"%s layer %d (%T) parameter %d: engine gradient %.6g, finite difference %.6g",
					m.Name,
					li,
					m.Layers[li],
					i-lo,
					g[i],
					fd,
				)
			}
		}
	}
	t.Logf(
		"%s: %d params, loss %.6f (reference %.6f), worst relative gradient error %.2g",
		m.Name,
		m.Params,
		loss,
		ref,
		worst,
	)
}

func TestGradientsOfEveryLayer(t *testing.T) {
	img := nn.Shape{C: 2, H: 6, W: 6, Spatial: true}
	cases := []*nn.Model{
		nn.FromLayers("conv-pad", img, 3, nn.Conv2d{OutC: 3, K: 3, Pad: 1}, nn.Flatten{}, nn.Linear{OutF: 3}),
		nn.FromLayers(
			"conv-conv",
			img,
			3,
			nn.Conv2d{OutC: 3, K: 3, Pad: 0},
			nn.ReLU{},
			nn.Conv2d{OutC: 2, K: 2, Pad: 1},
			nn.Flatten{},
			nn.Linear{OutF: 3},
		),
		nn.FromLayers(
			"conv-pool",
			img,
			3,
			nn.Conv2d{OutC: 4, K: 3, Pad: 1},
			nn.ReLU{},
			nn.MaxPool2{},
			nn.Flatten{},
			nn.Linear{OutF: 3},
		),
		nn.FromLayers(
			"spatial-dropout",
			img,
			3,
			nn.Conv2d{OutC: 2, K: 3, Pad: 0},
			nn.Dropout{P: 0.25},
			nn.Flatten{},
			nn.Linear{OutF: 3},
		),
		nn.FromLayers(
			"dense",
			nn.Shape{C: 7, H: 1, W: 1},
			4,
			nn.Linear{OutF: 5},
			nn.ReLU{},
			nn.Dropout{P: 0.5},
			nn.Linear{OutF: 4},
		),
		nn.FromLayers("bag", nn.Shape{}, 3, nn.EmbeddingBag{Vocab: 11, Dim: 4}, nn.Linear{OutF: 3}, nn.Dropout{P: 0.5}),
	}
	for _, m := range cases {
		gradCheck(t, m, 5, 11, 40)
	}
}

func TestGradientsOfThePaperModels(t *testing.T) {
	for _, c := range []struct {
		name string
		in   nn.Input
	}{
		{"lenet", nn.Input{Shape: []int{1, 28, 28}, Classes: 10}},
		{"lenet", nn.Input{Shape: []int{3, 32, 32}, Classes: 10}},
		{"cnn", nn.Input{Shape: []int{1, 28, 28}, Classes: 62}},
		{"embedding-bag", nn.Input{Classes: 4, Vocab: 50}},
		{"mlp", nn.Input{Shape: []int{1, 28, 28}, Classes: 10}},
		{"logreg", nn.Input{Shape: []int{20}, Classes: 4}},
	} {
		m, err := nn.NewModel(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		gradCheck(t, m, 3, 50, 6)
	}
}

func TestModelShapes(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     nn.Input
		params int
	}{
		// LeNet: conv 6x1x5x5+6, conv 16x6x5x5+16, 400x120+120, 120x84+84, 84x10+10.
		{"lenet", nn.Input{Shape: []int{1, 28, 28}, Classes: 10}, 156 + 2416 + 48120 + 10164 + 850},
		{"lenet", nn.Input{Shape: []int{3, 32, 32}, Classes: 10}, 456 + 2416 + 48120 + 10164 + 850},
		// EMNIST CNN: 32x1x3x3+32, 64x32x3x3+64, 9216x128+128, 128x62+62.
		{"cnn", nn.Input{Shape: []int{1, 28, 28}, Classes: 62}, 320 + 18496 + 1179776 + 7998},
		// AG NEWS: 95812x64 embeddings, 64x4+4.
		{"embedding-bag", nn.Input{Classes: 4, Vocab: 95812}, 95812*64 + 260},
	} {
		m, err := nn.NewModel(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if m.Params != c.params {
			t.Errorf("%s %v: %d parameters, want %d", c.name, c.in.Shape, m.Params, c.params)
		}
	}
	if _, err := nn.NewModel("cnn", nn.Input{Shape: []int{3, 32, 32}, Classes: 10}); err == nil {
		t.Error("cnn accepted 3x32x32 images")
	}
}
