package nn

import (
	"fmt"
	"math"

	"github.com/ump-lab/ump/internal/rng"
)

// Model is a network over one flat parameter vector: layer i owns
// p[offsets[i]:offsets[i+1]].
type Model struct {
	Name    string
	Classes int
	Params  int
	in      shape // one input sample; Spatial for images, flat for vectors
	text    bool  // the input is a token bag (the first layer is EmbeddingBag)
	layers  []layer
	shapes  []shape // shapes[i] is layer i's input, shapes[len(layers)] the logits
	offsets []int
}

// Input describes a data set's samples for NewModel: Shape is [C, H, W]
// for images, [D] for vectors, nil for text (then Vocab is the vocabulary
// size).
type Input struct {
	Shape   []int
	Classes int
	Vocab   int
}

// NewModel builds a model of the paper for the given input:
//
//	lenet: conv5x5(6, padding (32-H)/2) relu maxpool conv5x5(16) relu maxpool
//	       flatten(400) dense(120) relu dense(84) relu dropout(.5) dense(classes)
//	cnn:   conv3x3(32) relu conv3x3(64) relu maxpool dropout(.25) flatten
//	       dense(128) relu dropout(.5) dense(classes)          (EMNIST, 1x28x28)
//
// A ReLU followed by a max-pool runs as the pool then the ReLU: the same
// function and gradient (both are monotone), on a quarter of the values.
//
//	embedding-bag: embeddingbag(vocab, 64, mean) dense(classes) dropout(.5)
//	mlp:   flatten dense(200) relu dense(classes)
//	logreg: flatten dense(classes)
func NewModel(name string, in Input) (*Model, error) {
	m := &Model{Name: name, Classes: in.Classes}
	switch len(in.Shape) {
	case 3:
		m.in = shape{C: in.Shape[0], H: in.Shape[1], W: in.Shape[2], Spatial: true}
	case 1:
		m.in = shape{C: in.Shape[0], H: 1, W: 1}
	case 0:
		m.text = true
	}
	var decl *modelKind
	for i := range modelKinds {
		if modelKinds[i].name == name {
			decl = &modelKinds[i]
		}
	}
	if decl == nil {
		return nil, fmt.Errorf("unknown model %q; use one of %v", name, modelNames())
	}
	layers, err := decl.layers(m, in)
	if err != nil {
		return nil, err
	}
	m.layers = layers
	if m.text && name != "embedding-bag" {
		return nil, fmt.Errorf("%s cannot read token bags; use embedding-bag", name)
	}
	m.layout()
	return m, nil
}

// modelKind declares a model: its name and its layers for an input.
type modelKind struct {
	name   string
	layers func(m *Model, input Input) ([]layer, error) // m holds the input shape
}

// flat puts a flatten before dense layers that read images.
func flat(image bool, rest ...layer) []layer {
	if image {
		return append([]layer{flatten{}}, rest...)
	}
	return rest
}

// modelNames lists the models NewModel builds: manifests.Models, which
// TestModelsAreTheManifestsModels checks.
func modelNames() []string {
	names := make([]string, len(modelKinds))
	for i, k := range modelKinds {
		names[i] = k.name
	}
	return names
}

// modelKinds are the models, as NewModel's doc draws them.
var modelKinds = []modelKind{
	{"lenet", func(m *Model, input Input) ([]layer, error) {
		if in := m.in; !in.Spatial || in.H != in.W || in.H > 32 || (32-in.H)%2 != 0 {
			return nil, fmt.Errorf("lenet needs square images of side 28 or 32, not %v", input.Shape)
		}
		return []layer{conv2d{6, 5, (32 - m.in.H) / 2}, maxPool2{}, relu{}, conv2d{16, 5, 0}, maxPool2{}, relu{},
			flatten{}, linear{120}, relu{}, linear{84}, relu{}, dropout{0.5}, linear{input.Classes}}, nil
	}},
	{"cnn", func(m *Model, input Input) ([]layer, error) {
		if in := m.in; !in.Spatial || in.H != 28 || in.W != 28 {
			return nil, fmt.Errorf("cnn is the EMNIST model for 28x28 images, not %v", input.Shape)
		}
		return []layer{conv2d{32, 3, 0}, relu{}, conv2d{64, 3, 0}, maxPool2{}, relu{}, dropout{0.25},
			flatten{}, linear{128}, relu{}, dropout{0.5}, linear{input.Classes}}, nil
	}},
	{"embedding-bag", func(m *Model, input Input) ([]layer, error) {
		if !m.text {
			return nil, fmt.Errorf("embedding-bag reads token bags, not inputs of shape %v", input.Shape)
		}
		return []layer{embeddingBag{input.Vocab, 64}, linear{input.Classes}, dropout{0.5}}, nil
	}},
	{"mlp", func(m *Model, input Input) ([]layer, error) {
		return flat(m.in.Spatial, linear{200}, relu{}, linear{input.Classes}), nil
	}},
	{"logreg", func(m *Model, input Input) ([]layer, error) {
		return flat(m.in.Spatial, linear{input.Classes}), nil
	}},
}

// layout computes each layer's input shape and parameter offset.
func (m *Model) layout() {
	s := m.in
	for _, l := range m.layers {
		m.shapes = append(m.shapes, s)
		m.offsets = append(m.offsets, m.Params)
		m.Params += l.params(s)
		s = l.out(s)
	}
	m.shapes = append(m.shapes, s)
	m.offsets = append(m.offsets, m.Params)
}

// Init fills p with the initial parameters: PyTorch's defaults
// (Kaiming-uniform for Conv2d and Linear, N(0,1) for EmbeddingBag) drawn
// from the stream (seed, "init").
func (m *Model) Init(p []float32, seed uint64) {
	r := rng.New(seed, "init")
	for i, l := range m.layers {
		l.init(m.param(p, i), m.shapes[i], r)
	}
}

func (m *Model) param(p []float32, i int) []float32 { return p[m.offsets[i]:m.offsets[i+1]] }

// Activations is the number of float32s one sample's forward pass holds:
// every layer's input and the logits.
func (m *Model) Activations() int {
	n := 0
	for _, s := range m.shapes {
		n += s.size()
	}
	return n
}

// FLOPs estimates the floating-point operations of one training sample
// (forward and backward GEMMs: 2 per multiply-add, the first layer without
// its input gradient).
func (m *Model) FLOPs() float64 {
	total := 0.0
	for i, l := range m.layers {
		in, out := m.shapes[i], m.shapes[i+1]
		var macs float64
		switch l := l.(type) {
		case conv2d:
			macs = float64(out.C * in.C * l.k * l.k * out.H * out.W)
		case linear:
			macs = float64(out.C * in.size())
		default:
			continue
		}
		passes := 3.0
		if i == 0 {
			passes = 2
		}
		total += 2 * macs * passes
	}
	return total
}

// net runs a model for batches of up to maxBatch samples: one kernel per
// layer and every activation buffer, allocated once and reused.
type net struct {
	m       *Model
	kernels []kernel
	acts    [][]float32 // acts[i] is layer i's input, acts[len] the logits
	dacts   [][]float32
	labels  []int32
	tokens  []int32 // the batch's bags, for text models
	offsets []int64
}

func newNet(m *Model, maxBatch int) *net {
	n := &net{m: m, labels: make([]int32, maxBatch)}
	for i, l := range m.layers {
		n.kernels = append(n.kernels, l.bind(m.shapes[i], maxBatch))
	}
	for _, s := range m.shapes {
		n.acts = append(n.acts, make([]float32, s.size()*maxBatch))
		n.dacts = append(n.dacts, make([]float32, s.size()*maxBatch))
	}
	return n
}

// forward runs the layers on acts[0] (or the step's bags) and returns the
// logits, batch x classes.
func (n *net) forward(p []float32, s *step) []float32 {
	for i, k := range n.kernels {
		k.forward(n.m.param(p, i), n.acts[i], n.acts[i+1], s)
	}
	return n.acts[len(n.kernels)][:s.batch*n.m.Classes]
}

// lossGrad runs forward and backward: it returns the mean softmax
// cross-entropy over the batch and writes its gradient into g.
func (n *net) lossGrad(p, g []float32, labels []int32, s *step) float64 {
	logits := n.forward(p, s)
	last := len(n.kernels)
	dlogits := n.dacts[last][:len(logits)]
	loss, _ := crossEntropy(logits, labels, n.m.Classes, dlogits)
	for i := last - 1; i >= 0; i-- {
		var dx []float32
		if i > 0 {
			dx = n.dacts[i]
		} else if n.m.offsets[1] == 0 {
			break // a first layer without parameters needs no backward pass
		}
		n.kernels[i].backward(n.m.param(p, i), n.m.param(g, i), n.acts[i], n.acts[i+1], n.dacts[i+1], dx, s)
	}
	return loss
}

// crossEntropy returns the mean softmax cross-entropy of logits (batch x
// classes) and the number of samples whose largest logit is the label's;
// when d is not nil it receives the gradient of the mean loss.
func crossEntropy(logits []float32, labels []int32, classes int, d []float32) (loss float64, correct int) {
	b := len(labels)
	for i, y := range labels {
		row := logits[i*classes:][:classes]
		hi, arg := row[0], 0
		for c, v := range row {
			if v > hi {
				hi, arg = v, c
			}
		}
		if arg == int(y) {
			correct++
		}
		z := 0.0
		for _, v := range row {
			z += math.Exp(float64(v - hi))
		}
		lz := math.Log(z)
		loss += lz - float64(row[y]-hi)
		if d != nil {
			drow := d[i*classes:][:classes]
			for c, v := range row {
				drow[c] = float32(math.Exp(float64(v-hi)-lz) / float64(b))
			}
			drow[y] -= 1 / float32(b)
		}
	}
	return loss / float64(b), correct
}
