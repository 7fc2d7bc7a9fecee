package nn

import (
	"slices"
	"testing"

	"github.com/ump-lab/ump/algorithms"
)

// recordingComm records the kinds an optimizer communicates (exactly).
type recordingComm struct{ kinds []string }

func (r *recordingComm) Gossip(_ int, kind string, _ []float32, x [][]float32, m algorithms.Mixing) {
	r.kinds = append(r.kinds, kind)
	out := make([][]float32, len(x))
	for i := range out {
		out[i] = make([]float32, len(x[i]))
	}
	m.Apply(out, x)
	for i := range x {
		copy(x[i], out[i])
	}
}

func (r *recordingComm) Average(_ int, kind string, x, _ [][]float32) {
	r.kinds = append(r.kinds, kind)
	mean := make([]float32, len(x[0]))
	algorithms.Mean(mean, x)
	for i := range x {
		copy(x[i], mean)
	}
}

// TestSendsAndStateNamesMatchTheOptimizers: the GPU engine's declarations
// of what each algorithm sends and keeps are what the CPU optimizers send
// and checkpoint.
func TestSendsAndStateNamesMatchTheOptimizers(t *testing.T) {
	for _, name := range algorithms.Family.Names() {
		cfg := algorithms.Config{Name: name}
		opt, err := algorithms.New(cfg, 3, make([]float32, 4))
		if err != nil {
			t.Fatal(err)
		}
		comm := &recordingComm{}
		grads := func(_ int, _, g [][]float32) error { return nil }
		if err := opt.Round(&algorithms.Round{K: 1, LR: 0.1, Grad: grads, Mix: ringOf3(t), Comm: comm}); err != nil {
			t.Fatal(err)
		}
		sends, err := Sends(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sends, comm.kinds) {
			t.Errorf("%s: Sends %v, the optimizer sent %v", name, sends, comm.kinds)
		}
		names, err := StateNames(name)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for k := range opt.State() {
			want = append(want, k)
		}
		if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: StateNames %v, the optimizer keeps %v", name, names, want)
		}
	}
}

func ringOf3(t *testing.T) algorithms.Mixing {
	m, err := algorithms.NewMixing([][]float64{{0.5, 0.25, 0.25}, {0.25, 0.5, 0.25}, {0.25, 0.25, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
