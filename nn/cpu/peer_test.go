//go:build peer

package cpu

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/nntest"
)

var peerModels = flag.String(
	"peer.models",
	"lenet-mnist,lenet-cifar10,cnn-emnist,embedding-bag-agnews",
	"the models to compare",
)

// work is a round to time: n workers, K local steps of batch B, plain
// SGD, random data; Rounds of them after a warm-up.
type work struct {
	Workers, LocalSteps, Batch, Rounds, Vocab, BagLen int
}

// workload is the round the engine and the PyTorch peer both time.
var workload = work{10, 10, 128, 5, 95812, 40}

// goWorkload is the round the go path times: a tenth of the samples (one
// local step) and 2 rounds, since it runs tens of times slower; its rate
// per sample is the same measure.
var goWorkload = work{10, 1, 128, 2, 95812, 40}

// workloads pairs the peer's model names with the engine's model and a
// data set of the right shape.
var workloads = []struct {
	peer, model string
	shape       []int
	classes     int
}{
	{"lenet-mnist", "lenet", []int{1, 28, 28}, 10},
	{"lenet-cifar10", "lenet", []int{3, 32, 32}, 10},
	{"cnn-emnist", "cnn", []int{1, 28, 28}, 62},
	{"embedding-bag-agnews", "embedding-bag", nil, 4},
}

// engineRates times rounds of w on the CPU engine: samples/s of each
// round after a warm-up round.
func engineRates(t testing.TB, model string, data *datasets.Dataset, w work) ([]float64, *nn.Model) {
	e, err := New(model, data, 1)
	if err != nil {
		t.Fatal(err)
	}
	return roundRates(e, w, data), e.model
}

// roundRates times rounds of w's workers on an engine: K local steps of
// batch B, each a Gradients call then an SGD update of every worker (in
// parallel); samples/s of each round after a warm-up round.
func roundRates(e nn.Engine, w work, data *datasets.Dataset) []float64 {
	n := w.Workers
	params, grads := make([][]float32, n), make([][]float32, n)
	for i := range params {
		params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(params[i])
	}
	losses := make([]float64, n)
	batches := make([][]int, n)
	r := rng.New(1, "peer-batches")
	for i := range batches {
		batches[i] = r.Perm(data.Train.Len())[:w.Batch]
	}
	var rates []float64
	for round := 0; round <= w.Rounds; round++ {
		start := time.Now()
		for k := 0; k < w.LocalSteps; k++ {
			e.Gradients(nn.Step{Round: round, Local: k}, params, grads, batches, losses)
			var wg sync.WaitGroup
			for i := range params {
				wg.Go(func() {
					for j, g := range grads[i] {
						params[i][j] -= 0.01 * g
					}
				})
			}
			wg.Wait()
		}
		if round > 0 {
			rates = append(rates, float64(n*w.LocalSteps*w.Batch)/time.Since(start).Seconds())
		}
	}
	return rates
}

// gemmCeiling measures one core's GFLOP/s of the engine's own matrix
// product (the kernel path in use) on large square matrices.
func gemmCeiling() float64 {
	const n = 1024
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(i%7), float32(i%5)
	}
	var best time.Duration
	for rep := 0; rep < 5; rep++ {
		start := time.Now()
		gemm(false, false, n, n, n, a, n, b, n, false, c, n)
		if d := time.Since(start); rep == 0 || d < best {
			best = d
		}
	}
	return 2 * n * n * n / best.Seconds() / 1e9
}

// torchRates runs the PyTorch peer on one model: samples/s of each round
// after a warm-up round.
func torchRates(name string) ([]float64, error) {
	cfg, _ := json.Marshal(
		map[string]any{"threads": procs(), "workers": workload.Workers, "local_steps": workload.LocalSteps,
			"batch": workload.Batch, "rounds": workload.Rounds, "vocab": workload.Vocab, "bag_len": workload.BagLen,
			"models": []string{name}},
	)
	cmd := exec.Command("/usr/bin/python3", "peerbench/torch_peer.py", string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var line struct {
		Rates []float64 `json:"samples_per_s"`
	}
	if err := json.Unmarshal(out, &line); err != nil {
		return nil, fmt.Errorf("peer output %q: %w", out, err)
	}
	return line.Rates, nil
}

// BenchmarkPeerComparison prints the engine against PyTorch on the same
// workload, model by model (PyTorch, then the engine, so both meet the
// machine in the same state); `make bench` runs it once (-benchtime 1x).
func BenchmarkPeerComparison(b *testing.B) {
	for b.Loop() {
		comparePeers(b)
	}
}

func comparePeers(t testing.TB) {
	ceiling := gemmCeiling()
	vector := Kernels()
	fmt.Printf(
		"\nengine %s (kernels %s, %s) vs PyTorch (python3-torch, torch.set_num_threads(%d), one nn.Module per "+
			"worker)\n",
		Name(),
		vector,
		KernelSource(),
		procs(),
	)
	fmt.Printf(
		"workload: %d workers x %d local steps x batch %d, random data, SGD; medians of %d rounds after a warm-up\n",
		workload.Workers,
		workload.LocalSteps,
		workload.Batch,
		workload.Rounds,
	)
	fmt.Printf(
		"the go path (Go loops, the same bits): %d local step, medians of %d rounds\n",
		goWorkload.LocalSteps,
		goWorkload.Rounds,
	)
	fmt.Printf(
		"gemm ceiling: %.1f GFLOP/s per core (1024^3, kernels %s), %d cores; each path's share is of %.0f GFLOP/s\n\n",
		ceiling,
		vector,
		procs(),
		ceiling*float64(procs()),
	)
	fmt.Printf(
		"%-22s %14s %15s %7s %9s %6s %14s %9s %6s %9s\n",
		"model",
		"ump samples/s",
		"torch samples/s",
		"ratio",
		"GFLOP/s",
		"share",
		"go samples/s",
		"GFLOP/s",
		"share",
		"vs go",
	)
	share := func(gflops float64) string { return fmt.Sprintf("%.1f%%", 100*gflops/(ceiling*float64(procs()))) }
	for _, pm := range workloads {
		if !slices.Contains(strings.Split(*peerModels, ","), pm.peer) {
			continue
		}
		torch, ratio := "n/a", "n/a"
		peerRates, err := torchRates(pm.peer)
		data := nntest.RandomData(pm.shape, pm.classes, 4*workload.Batch, workload.Vocab, workload.BagLen)
		rates, m := engineRates(t, pm.model, data, workload)
		ours := median(rates)
		gflops := ours * m.FLOPs() / 1e9
		if err != nil {
			fmt.Printf("(PyTorch peer failed: %v; install Debian's python3-torch)\n", err)
		} else {
			torch, ratio = fmt.Sprintf("%.0f", median(peerRates)), fmt.Sprintf("%.2fx", ours/median(peerRates))
		}
		goRate, goFlops, goShare, versus := "n/a", "n/a", "n/a", "n/a"
		if vector != "go" {
			UseKernels("go")
			rates, _ := engineRates(t, pm.model, data, goWorkload)
			UseKernels(vector)
			g := median(rates)
			goRate, goFlops, goShare, versus = fmt.Sprintf(
				"%.0f",
				g,
			), fmt.Sprintf(
				"%.2f",
				g*m.FLOPs()/1e9,
			), share(
				g*m.FLOPs()/1e9,
			), fmt.Sprintf(
				"%.1fx",
				ours/g,
			)
		}
		fmt.Printf(
			"%-22s %14.0f %15s %7s %9.1f %6s %14s %9s %6s %9s\n",
			pm.peer,
			ours,
			torch,
			ratio,
			gflops,
			share(gflops),
			goRate,
			goFlops,
			goShare,
			versus,
		)
	}
	if slices.Contains(strings.Split(*peerModels, ","), "lenet-mnist") {
		round, eval := evaluationCost(t)
		fmt.Printf(
			"%-22s %.3f s, %.0f%% of the 5 rounds it follows (%.3f s a round)\n",
			"lenet-mnist evaluation",
			eval,
			100*eval/(5*round),
			round,
		)
	}
}

// evaluationCost times, for LeNet on MNIST-shaped data, a round of the
// workload and an evaluation as a cell does one every 5 rounds: 11 models
// (10 workers' and their average) on a 10,000-sample test split; seconds,
// medians of 5.
func evaluationCost(t testing.TB) (round, eval float64) {
	rates, _ := engineRates(t, "lenet", nntest.RandomData([]int{1, 28, 28}, 10, 4*workload.Batch, 0, 0), workload)
	e, params, test := lenetEvaluation(t)
	var times []float64
	for range 6 {
		start := time.Now()
		e.Evaluate(params, test)
		times = append(times, time.Since(start).Seconds())
	}
	return float64(workload.Workers*workload.LocalSteps*workload.Batch) / median(rates), median(times[1:])
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func procs() int { return runtime.GOMAXPROCS(0) }
