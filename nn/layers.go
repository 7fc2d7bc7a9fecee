package nn

import (
	"math"
	"math/rand/v2"

	"github.com/ump-lab/ump/internal/rng"
)

// Shape is one sample's activation shape: C x H x W when Spatial, C
// features when flat (H = W = 1).
type Shape struct {
	C, H, W int
	Spatial bool
}

// Size is the number of float32s of one sample's activation.
func (s Shape) Size() int { return s.C * s.H * s.W }

// Layer is one layer of a model: its configuration (the types below;
// each engine computes them its own way), output shape, parameter count
// and initialisation.
type Layer interface {
	// Out is the layer's output shape for an input shape.
	Out(in Shape) Shape
	// Params is the number of parameters the layer owns.
	Params(in Shape) int
	init(p []float32, in Shape, r *rand.Rand)
}

// kaimingUniform fills weights and biases as PyTorch's Conv2d and Linear
// defaults do: U(-1/sqrt(fanIn), 1/sqrt(fanIn)) for both.
func kaimingUniform(w, b []float32, fanIn int, r *rand.Rand) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = float32(rng.Symmetric(r) * bound)
	}
	for i := range b {
		b[i] = float32(rng.Symmetric(r) * bound)
	}
}

// Conv2d is a 2-D convolution of OutC K x K filters, stride 1, zero padding
// Pad, with a bias per output channel; weights OutC x C x K x K as in PyTorch.
type Conv2d struct{ OutC, K, Pad int }

func (l Conv2d) Out(in Shape) Shape {
	return Shape{C: l.OutC, H: in.H + 2*l.Pad - l.K + 1, W: in.W + 2*l.Pad - l.K + 1, Spatial: true}
}
func (l Conv2d) Params(in Shape) int { return l.OutC*in.C*l.K*l.K + l.OutC }
func (l Conv2d) init(p []float32, in Shape, r *rand.Rand) {
	fan := in.C * l.K * l.K
	kaimingUniform(p[:l.OutC*fan], p[l.OutC*fan:], fan, r)
}

// ConvOrder is the order in which the CPU engine adds a convolution's
// terms (docs/engine.md), which the GPU engine's exact program follows.
type ConvOrder int

const (
	// ConvGEMM: unfolded into columns and multiplied by the engine's gemm.
	ConvGEMM ConvOrder = iota
	// ConvPlanes: directly, each output its bias, then + float32(w·x) for
	// each input channel, filter row and column in order, but for the
	// taps on rows of padding (few taps: conv_plane.go).
	ConvPlanes
	// ConvLanes: directly, in the same order, rows of padding included
	// (16k output channels and short filters: conv_lanes.go).
	ConvLanes
)

// The bounds of the direct orders on C x k x k: LeNet's first layer on
// three channels (ConvPlanes), and beyond which a GEMM has enough inner
// products to run near the machine's peak (ConvLanes; the EMNIST CNN's
// 32 x 3 x 3 = 288).
const PlaneMaxTaps, lanesMaxTaps = 75, 256

// Lanes is the width of the CPU engine's vectors: ConvLanes computes
// Lanes output channels at once, and ConvPlanes' weight gradient keeps
// Lanes running sums per tap, one per column mod Lanes.
const Lanes = 16

// Order is the order the CPU engine's convolution of in adds in.
func (l Conv2d) Order(in Shape) ConvOrder {
	switch taps := in.C * l.K * l.K; {
	case l.Pad >= l.K || l.K > 7: // the direct kernels' input gradient needs pad < k, their registers k <= 7
	case taps <= PlaneMaxTaps:
		return ConvPlanes
	case l.OutC%Lanes == 0 && taps <= lanesMaxTaps:
		return ConvLanes
	}
	return ConvGEMM
}

// MaxPool2 takes the maximum of 2 x 2 windows, stride 2.
type MaxPool2 struct{}

func (MaxPool2) Out(in Shape) Shape                { return Shape{C: in.C, H: in.H / 2, W: in.W / 2, Spatial: true} }
func (MaxPool2) Params(Shape) int                  { return 0 }
func (MaxPool2) init([]float32, Shape, *rand.Rand) {}

// ReLU is max(x, 0).
type ReLU struct{}

func (ReLU) Out(in Shape) Shape                { return in }
func (ReLU) Params(Shape) int                  { return 0 }
func (ReLU) init([]float32, Shape, *rand.Rand) {}

// Dropout drops each unit with probability P in training (inverted: kept
// units are scaled by 1/(1-P)); evaluation passes x through.
type Dropout struct{ P float64 }

func (Dropout) Out(in Shape) Shape                { return in }
func (Dropout) Params(Shape) int                  { return 0 }
func (Dropout) init([]float32, Shape, *rand.Rand) {}

// MaskParams are DropoutMask's threshold (a unit drops when its 16-bit
// draw is below it) and the scale of kept units.
func (l Dropout) MaskParams() (uint64, float32) {
	return uint64(math.Round(l.P * 65536)), float32(1 / (1 - l.P))
}

// DropoutMask fills mask with 0 (dropped) or scale, four units per 64-bit
// draw of r.
func DropoutMask(r *rand.Rand, threshold uint64, scale float32, mask []float32) {
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

// Flatten makes a spatial activation flat in PyTorch's (c, h, w) order.
type Flatten struct{}

func (Flatten) Out(in Shape) Shape                { return Shape{C: in.Size(), H: 1, W: 1} }
func (Flatten) Params(Shape) int                  { return 0 }
func (Flatten) init([]float32, Shape, *rand.Rand) {}

// Linear is y = x W^T + b, W stored OutF x in as in PyTorch.
type Linear struct{ OutF int }

func (l Linear) Out(Shape) Shape     { return Shape{C: l.OutF, H: 1, W: 1} }
func (l Linear) Params(in Shape) int { return l.OutF*in.Size() + l.OutF }
func (l Linear) init(p []float32, in Shape, r *rand.Rand) {
	kaimingUniform(p[:l.OutF*in.Size()], p[l.OutF*in.Size():], in.Size(), r)
}

// EmbeddingBag is the mean of a bag's rows of a Vocab x Dim table: the
// first layer of text models.
type EmbeddingBag struct{ Vocab, Dim int }

func (l EmbeddingBag) Out(Shape) Shape  { return Shape{C: l.Dim, H: 1, W: 1} }
func (l EmbeddingBag) Params(Shape) int { return l.Vocab * l.Dim }

// init draws N(0, 1) as PyTorch's EmbeddingBag does.
func (l EmbeddingBag) init(p []float32, _ Shape, r *rand.Rand) {
	for i := range p {
		p[i] = float32(rng.Normal(r))
	}
}
