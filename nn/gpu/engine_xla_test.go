//go:build xla

package gpu

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/nntest"
)

// TestMain sets the GPU engine's environment, as ump's main does.
func TestMain(m *testing.M) {
	SetEnvironment()
	os.Exit(m.Run())
}

// devices are the tests' devices by config, each opened once per process
// as ump opens its one.
var devices = map[string]*Device{}

func device(config string) *Device {
	if devices[config] == nil {
		devices[config] = NewDevice(config)
	}
	return devices[config]
}

// gpuBackends are the GoMLX devices the agreement tests run on, by the
// name their subtests take (a GPU host runs the "xla" half alone):
// "gomlx-go", GoMLX's pure-Go backend, everywhere, and "xla" where a plugin
// is given (GOMLX_BACKEND=xla:...) or found (FindCUDAPlugin).
func gpuBackends(t *testing.T) map[string]*Device {
	out := map[string]*Device{"gomlx-go": device(GoBackend)}
	if cfg := os.Getenv("GOMLX_BACKEND"); strings.HasPrefix(cfg, "xla:") {
		out["xla"] = device(cfg)
	} else if plugin, err := FindCUDAPlugin(); err == nil && cfg == "" {
		out["xla"] = device("xla:" + plugin)
	} else {
		t.Logf("no XLA backend: the xla half is skipped (GOMLX_BACKEND=%q; %v)", cfg, err)
	}
	return out
}

// textData is a random AG NEWS-shaped set: bags of 0 to 30 tokens.
func textData(vocab, classes, samples int) *datasets.Dataset {
	r := rng.New(2, "text-data")
	d := &datasets.Dataset{Classes: classes, Vocab: make([]string, vocab)}
	s := &d.Train
	s.Offsets = []int64{0}
	for range samples {
		for range r.IntN(31) {
			s.Tokens = append(s.Tokens, int32(r.IntN(vocab)))
		}
		s.Offsets = append(s.Offsets, int64(len(s.Tokens)))
		s.Labels = append(s.Labels, int32(r.IntN(classes)))
	}
	return d
}

// TestGPUEngineMatchesCPU: on the same parameters, batches (of unequal
// sizes) and dropout streams, the GoMLX engine's losses and gradients
// match the CPU engine's to a relative 1e-4, for every model; so do the
// evaluation scores.
func TestGPUEngineMatchesCPU(t *testing.T) {
	cases := []struct {
		name, model string
		data        *datasets.Dataset
	}{
		{"lenet-mnist", "lenet", nntest.RandomData([]int{1, 28, 28}, 10, 64, 0, 0)},
		{"lenet-cifar10", "lenet", nntest.RandomData([]int{3, 32, 32}, 10, 64, 0, 0)},
		{"cnn-emnist", "cnn", nntest.RandomData([]int{1, 28, 28}, 62, 64, 0, 0)},
		{"embedding-bag-agnews", "embedding-bag", textData(500, 4, 64)},
		{"mlp-mnist", "mlp", nntest.RandomData([]int{1, 28, 28}, 10, 64, 0, 0)},
	}
	for backendName, dev := range gpuBackends(t) {
		for _, c := range cases {
			t.Run(backendName+"/"+c.name, func(t *testing.T) {
				cpu, err := cpu.New(c.model, c.data, 7)
				if err != nil {
					t.Fatal(err)
				}
				gpu, err := New(c.model, c.data, 7, dev)
				if err != nil {
					t.Fatal(err)
				}
				const n = 3
				r := rng.New(3, "agreement")
				params := make([][]float32, n)
				for i := range params {
					params[i] = make([]float32, cpu.Params())
					cpu.Init(params[i])
					for k := range params[i] { // workers differ
						params[i][k] *= float32(1 + 0.1*r.NormFloat64())
					}
				}
				batches := [][]int{r.Perm(64)[:16], r.Perm(64)[:16], r.Perm(64)[:11]}
				at := nn.Step{Round: 2, Local: 1}
				grads := func(e nn.Engine) ([][]float32, []float64) {
					g := make([][]float32, n)
					for i := range g {
						g[i] = make([]float32, e.Params())
					}
					losses := make([]float64, n)
					if err := e.Gradients(at, params, g, batches, losses); err != nil {
						t.Fatal(err)
					}
					return g, losses
				}
				gc, lc := grads(cpu)
				gg, lg := grads(gpu)
				for i := range n {
					if d := math.Abs(lc[i]-lg[i]) / math.Abs(lc[i]); d > 1e-4 {
						t.Errorf("worker %d: loss %g (cpu) vs %g (gomlx), relative %g", i, lc[i], lg[i], d)
					}
					var diff, norm float64
					for k := range gc[i] {
						dd := float64(gc[i][k]) - float64(gg[i][k])
						diff += dd * dd
						norm += float64(gc[i][k]) * float64(gc[i][k])
					}
					rel := math.Sqrt(diff / norm)
					if rel > 1e-4 {
						t.Errorf("worker %d: gradients differ by %.3g relative (|g| = %.3g)", i, rel, math.Sqrt(norm))
					}
					t.Logf("worker %d: loss %.6f, gradient relative difference %.2g", i, lc[i], rel)
				}
				split := &c.data.Train
				sc, err := cpu.Evaluate(params, split)
				if err != nil {
					t.Fatal(err)
				}
				sg, err := gpu.Evaluate(params, split)
				if err != nil {
					t.Fatal(err)
				}
				for i := range sc {
					if math.Abs(sc[i].Loss-sg[i].Loss) > 1e-4*math.Abs(sc[i].Loss) ||
						math.Abs(sc[i].Accuracy-sg[i].Accuracy) > 1.5/float64(split.Len()) {
						t.Errorf("model %d: evaluation %+v (cpu) vs %+v (gomlx)", i, sc[i], sg[i])
					}
				}
			})
		}
	}
}

// TestGPUEngineCompilesEveryShapeARunMeets: the per-step engine compiles a
// program for each batch size a call's largest batch takes; 40 sizes,
// beyond GoMLX's default cache of 32 programs, all train.
func TestGPUEngineCompilesEveryShapeARunMeets(t *testing.T) {
	data := nntest.RandomData([]int{1, 28, 28}, 10, 64, 0, 0)
	gpu, err := New("mlp", data, 7, device(GoBackend))
	if err != nil {
		t.Fatal(err)
	}
	params, grads := [][]float32{make([]float32, gpu.Params())}, [][]float32{make([]float32, gpu.Params())}
	gpu.Init(params[0])
	losses := make([]float64, 1)
	for size := 1; size <= 40; size++ {
		if err := gpu.Gradients(nn.Step{}, params, grads, [][]int{rng.New(1, "sizes").Perm(64)[:size]},
			losses); err != nil {
			t.Fatalf("a batch of %d: %v", size, err)
		}
	}
}
