package algorithms

import (
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/kinds"
)

// runRules runs one round of rules (K=1, gradient 1 everywhere, identity
// mixing) on 2 workers of dimension 3000 (several evaluation chunks) from
// x0 = 0, 1, 2, ... and returns the optimizer.
func runRules(t *testing.T, rules *Rules) Optimizer {
	t.Helper()
	x0 := make([]float32, 3000)
	for k := range x0 {
		x0[k] = float32(k)
	}
	o := newCPU(Config{Name: "test"}, &kinds.Kind[*Rules]{Name: "test", New: rules}, 2, x0)
	grads := func(_ int, _, g [][]float32) error {
		for i := range g {
			for k := range g[i] {
				g[i][k] = 1
			}
		}
		return nil
	}
	if err := o.Round(&Round{K: 1, LR: 0.5, Grad: grads, Mix: identityMixing(t, 2)}); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCPUSpaceAssignsInSequence: Get reads the latest Set, and a commit
// writes every pending Set from the values before it — a swap through a
// temporary, a vector set to another vector that changes in the same
// commit, a mixed value adopted by one vector and copied into another.
func TestCPUSpaceAssignsInSequence(t *testing.T) {
	o := runRules(t, &Rules{
		Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "a"}, {Name: "b", FromX0: true}, {Name: "c"}},
		Round: func(s Space, k int) {
			s.Set("a", s.Scale(s.Num(func(Config, At) float32 { return 2 }), s.Get("x"))) // a = 2 x0
			g := s.Grad(0)                                                                // commits a
			a := s.Get("a")
			s.Set("a", s.Get("b"))                               // a = x0
			s.Set("b", a)                                        // b = 2 x0: a swap of two buffers
			s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(lr), g))) // x = x0 - 0.5
			mixed := s.Mix("x", s.Get("x"))                      // = x0 - 0.5
			s.Set("x", mixed)                                    // adopted
			s.Set("c", s.Add(mixed, s.Get("a")))                 // c = 2 x0 - 0.5
		},
	})
	st := o.State()
	for k := range 3000 {
		x0 := float32(k)
		for i := range 2 {
			got := []float32{st["x"][i][k], st["a"][i][k], st["b"][i][k], st["c"][i][k]}
			if want := []float32{x0 - 0.5, x0, 2 * x0, 2*x0 - 0.5}; !slices.Equal(got, want) {
				t.Fatalf("worker %d entry %d: x, a, b, c = %v, want %v", i, k, got, want)
			}
		}
	}
}

// TestCPUSpaceRefusesAStaleValue: a value read before a gradient and used
// after it panics, naming the vector.
func TestCPUSpaceRefusesAStaleValue(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(
			msg,
			`uses a value of x read before a local step's gradient`,
		) {
			t.Errorf("panic %q", msg)
		}
	}()
	runRules(t, &Rules{
		Vectors: []Vector{{Name: "x", FromX0: true}},
		Round: func(s Space, k int) {
			x := s.Get("x")
			s.Set("x", s.Add(x, x))
			g := s.Grad(0) // x changes here
			s.Set("x", s.Add(x, g))
		},
	})
	t.Error("no panic")
}
