package algorithms

import (
	"math"
	"runtime"
	"testing"
)

func ringMixing(t testing.TB, n int) Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i], w[i][(i+1)%n], w[i][(i+n-1)%n] = 1.0/3, 1.0/3, 1.0/3
	}
	m, err := NewMixing(w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// run trains a small quadratic and returns the final x of every worker.
func run(t *testing.T, cfg Config, procs int) [][]float32 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	const n, dim = 7, 33
	opt, err := New(cfg, n, make([]float32, dim))
	if err != nil {
		t.Fatal(err)
	}
	grad := func(i, step int, x, g []float32) error {
		for j := range g {
			g[j] = float32(1+(i+j)%3) * (x[j] - float32(math.Cos(float64(i+2*j))))
		}
		return nil
	}
	for r := 0; r < 20; r++ {
		if err := opt.Round(&Round{T: r, K: 3, LR: 0.05, Grad: grad, Mix: ringMixing(t, n)}); err != nil {
			t.Fatal(err)
		}
	}
	return opt.X()
}

func TestResultsDoNotDependOnParallelism(t *testing.T) {
	for _, cfg := range []Config{{Name: "d-sum", Alpha: 2, Beta: 0.9}, {Name: "gt-dsum", Alpha: 2, Beta: 0.5, Lambda: 0.8, TrackerInit: "unbiased"}} {
		a, b := run(t, cfg, 1), run(t, cfg, 4)
		for i := range a {
			for k := range a[i] {
				if math.Float32bits(a[i][k]) != math.Float32bits(b[i][k]) {
					t.Fatalf("%s: worker %d x[%d] = %v with 1 thread, %v with 4", cfg.Name, i, k, a[i][k], b[i][k])
				}
			}
		}
	}
}

func TestNewMixingRejectsBadMatrices(t *testing.T) {
	for name, w := range map[string][][]float64{
		"row sum":    {{0.5, 0.4}, {0.4, 0.6}},
		"asymmetric": {{0.5, 0.5}, {0.4, 0.6}},
		"negative":   {{1.5, -0.5}, {-0.5, 1.5}},
		"ragged":     {{1}, {0.5, 0.5}},
	} {
		if _, err := NewMixing(w); err == nil {
			t.Errorf("%s: accepted %v", name, w)
		}
	}
}

func TestUnknownAlgorithm(t *testing.T) {
	if _, err := New(Config{Name: "adam"}, 2, make([]float32, 3)); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if _, err := New(Config{Name: "gt-dsum", TrackerInit: "zero"}, 2, make([]float32, 3)); err == nil {
		t.Error("unknown tracker_init accepted")
	}
}
