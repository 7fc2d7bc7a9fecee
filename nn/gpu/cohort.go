package gpu

import (
	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/nn"
)

// CellBytes is the device memory one cell of a cohort takes during a
// round, by the round program's arithmetic (not a measurement; on a GPU
// `make bench-gpu` prints the compiled program's own figures). The local
// steps are a loop, so one step's activations are live at a time: per
// sample its input, every layer's output (the backward pass reads them),
// a padded convolution's padded input, the unfolded patches of a
// convolution of several input channels (one-channel ones are shifted
// multiply-adds, without patches), a dropout mask, and two gradients in
// flight (the largest layer's size, twice). Per worker: the state
// vectors twice (the round's inputs and outputs), its scratch vectors,
// and two more (a step's gradient and an update being formed).
func CellBytes(m *nn.Model, algorithm string, workers, batch int) int64 {
	perSample, largest := m.Shapes[0].Size(), 0
	for i, l := range m.Layers {
		in, out := m.Shapes[i], m.Shapes[i+1]
		perSample += out.Size()
		largest = max(largest, out.Size())
		switch l := l.(type) {
		case nn.Conv2d:
			if l.Pad > 0 {
				perSample += in.C * (in.H + 2*l.Pad) * (in.W + 2*l.Pad)
			}
			if in.C > 1 {
				perSample += in.C * l.K * l.K * out.H * out.W
			}
		case nn.Dropout:
			perSample += out.Size()
		}
	}
	perSample += 2 * largest
	vectors := 2
	if kind, ok := algorithms.Family.Lookup(algorithm); ok {
		for _, v := range kind.New.Vectors {
			if v.Scratch {
				vectors++
			} else {
				vectors += 2
			}
		}
	}
	return 4 * (int64(workers)*int64(batch)*int64(perSample) + int64(vectors)*int64(workers)*int64(m.Params))
}
