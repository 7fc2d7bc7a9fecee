package nn

import (
	"fmt"

	"github.com/ump-lab/ump/internal/rng"
)

// Model is a network over one flat parameter vector: layer i owns
// p[offsets[i]:offsets[i+1]].
type Model struct {
	Name    string
	Classes int
	Params  int
	In      Shape // one input sample; Spatial for images, flat for vectors
	Text    bool  // the input is a token bag (the first layer is EmbeddingBag)
	Layers  []Layer
	Shapes  []Shape // shapes[i] is layer i's input, shapes[len(layers)] the logits
	Offsets []int
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
		m.In = Shape{C: in.Shape[0], H: in.Shape[1], W: in.Shape[2], Spatial: true}
	case 1:
		m.In = Shape{C: in.Shape[0], H: 1, W: 1}
	case 0:
		m.Text = true
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
	m.Layers = layers
	if m.Text && name != "embedding-bag" {
		return nil, fmt.Errorf("%s cannot read token bags; use embedding-bag", name)
	}
	m.layout()
	return m, nil
}

// FromLayers builds a model of the given layers for samples of shape in:
// token bags when the first layer is an EmbeddingBag. NewModel builds the
// paper's models; this, the small ones the engines' tests check layer by
// layer.
func FromLayers(name string, in Shape, classes int, layers ...Layer) *Model {
	_, text := layers[0].(EmbeddingBag)
	m := &Model{Name: name, Classes: classes, In: in, Text: text, Layers: layers}
	m.layout()
	return m
}

// modelKind declares a model: its name and its layers for an input.
type modelKind struct {
	name   string
	layers func(m *Model, input Input) ([]Layer, error) // m holds the input shape
}

// flat puts a flatten before dense layers that read images.
func flat(image bool, rest ...Layer) []Layer {
	if image {
		return append([]Layer{Flatten{}}, rest...)
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
	{"lenet", func(m *Model, input Input) ([]Layer, error) {
		if in := m.In; !in.Spatial || in.H != in.W || in.H > 32 || (32-in.H)%2 != 0 {
			return nil, fmt.Errorf("lenet needs square images of side 28 or 32, not %v", input.Shape)
		}
		return []Layer{Conv2d{6, 5, (32 - m.In.H) / 2}, MaxPool2{}, ReLU{}, Conv2d{16, 5, 0}, MaxPool2{}, ReLU{},
			Flatten{}, Linear{120}, ReLU{}, Linear{84}, ReLU{}, Dropout{0.5}, Linear{input.Classes}}, nil
	}},
	{"cnn", func(m *Model, input Input) ([]Layer, error) {
		if in := m.In; !in.Spatial || in.H != 28 || in.W != 28 {
			return nil, fmt.Errorf("cnn is the EMNIST model for 28x28 images, not %v", input.Shape)
		}
		return []Layer{Conv2d{32, 3, 0}, ReLU{}, Conv2d{64, 3, 0}, MaxPool2{}, ReLU{}, Dropout{0.25},
			Flatten{}, Linear{128}, ReLU{}, Dropout{0.5}, Linear{input.Classes}}, nil
	}},
	{"embedding-bag", func(m *Model, input Input) ([]Layer, error) {
		if !m.Text {
			return nil, fmt.Errorf("embedding-bag reads token bags, not inputs of shape %v", input.Shape)
		}
		return []Layer{EmbeddingBag{input.Vocab, 64}, Linear{input.Classes}, Dropout{0.5}}, nil
	}},
	{"mlp", func(m *Model, input Input) ([]Layer, error) {
		return flat(m.In.Spatial, Linear{200}, ReLU{}, Linear{input.Classes}), nil
	}},
	{"logreg", func(m *Model, input Input) ([]Layer, error) {
		return flat(m.In.Spatial, Linear{input.Classes}), nil
	}},
}

// layout computes each layer's input shape and parameter offset.
func (m *Model) layout() {
	s := m.In
	for _, l := range m.Layers {
		m.Shapes = append(m.Shapes, s)
		m.Offsets = append(m.Offsets, m.Params)
		m.Params += l.Params(s)
		s = l.Out(s)
	}
	m.Shapes = append(m.Shapes, s)
	m.Offsets = append(m.Offsets, m.Params)
}

// Init fills p with the initial parameters: PyTorch's defaults
// (Kaiming-uniform for Conv2d and Linear, N(0,1) for EmbeddingBag) drawn
// from the stream (seed, "init").
func (m *Model) Init(p []float32, seed uint64) {
	r := rng.New(seed, "init")
	for i, l := range m.Layers {
		l.init(m.Param(p, i), m.Shapes[i], r)
	}
}

func (m *Model) Param(p []float32, i int) []float32 { return p[m.Offsets[i]:m.Offsets[i+1]] }

// Activations is the number of float32s one sample's forward pass holds:
// every layer's input and the logits.
func (m *Model) Activations() int {
	n := 0
	for _, s := range m.Shapes {
		n += s.Size()
	}
	return n
}

// FLOPs estimates the floating-point operations of one training sample
// (forward and backward GEMMs: 2 per multiply-add, the first layer without
// its input gradient).
func (m *Model) FLOPs() float64 {
	total := 0.0
	for i, l := range m.Layers {
		in, out := m.Shapes[i], m.Shapes[i+1]
		var macs float64
		switch l := l.(type) {
		case Conv2d:
			macs = float64(out.C * in.C * l.K * l.K * out.H * out.W)
		case Linear:
			macs = float64(out.C * in.Size())
		default:
			continue
		}
		passes := 3.0
		if i == 0 {
			passes = 2
		}
		total += float64(2 * macs * passes)
	}
	return total
}
