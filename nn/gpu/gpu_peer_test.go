//go:build xla && peer

package gpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/nntest"
)

var (
	gpuCases = flag.String("gpu-cases", "", "comma-separated benchmark cases (default: all but the exact program's)")
	gpuPeers = flag.String(
		"gpu-peers",
		"jax,torch,torch-loop",
		"comma-separated peers to time beside the engine, or none",
	)
	gpuRounds = flag.Int("gpu-rounds", 20, "timed rounds per case (after 2 warm-ups)")
)

// benchCase is one benchmark shape: a model on generated data of a data
// set's shape, a cohort of cells × workers, K = 10 steps of batch b.
type benchCase struct {
	name, model  string
	cells, n, b  int
	data         func() *datasets.Dataset
	peerModel    string // the peers' name for the model
	perWorkerRef bool   // also time today's per-worker PyTorch loop
	exact        bool   // an Exact cohort (the CPU engine's bits)
}

const benchK = 10

func benchCases() []benchCase { // test splits of the real sets' sizes: MNIST's 10,000, AG NEWS' 7,600
	mnist := func() *datasets.Dataset {
		return nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 10, 60000, 0, 0), 10000)
	}
	emnist := func() *datasets.Dataset {
		return nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 62, 60000, 0, 0), 10000)
	}
	agnews := func() *datasets.Dataset { return nntest.WithTest(nntest.RandomData(nil, 4, 120000, 95812, 40), 7600) }
	var out []benchCase
	for _, c := range [][2]int{{1, 10}, {36, 10}, {1, 64}, {180, 10}, {36, 64}, {180, 64}} {
		out = append(
			out,
			benchCase{
				fmt.Sprintf("lenet-c%d-n%d", c[0], c[1]),
				"lenet",
				c[0],
				c[1],
				128,
				mnist,
				"lenet-mnist",
				c[0] == 1,
				false,
			},
		)
	}
	// The exact program, its models in turn (docs/gpu.md): run it alone,
	// with few rounds (-gpu-cases lenet-c1-n10-exact -gpu-rounds 2).
	out = append(out, benchCase{"lenet-c1-n10-exact", "lenet", 1, 10, 128, mnist, "lenet-mnist", false, true})
	tiny := func() *datasets.Dataset {
		return nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 10, 512, 0, 0), 64)
	}
	return append(
		out,
		benchCase{"cnn-c4-n10", "cnn", 4, 10, 128, emnist, "cnn-emnist", false, false},
		benchCase{"embedding-bag-c2-n10", "embedding-bag", 2, 10, 128, agnews, "embedding-bag-agnews", false, false},
		benchCase{
			"lenet-tiny",
			"lenet",
			2,
			2,
			8,
			tiny,
			"lenet-mnist",
			false,
			false,
		},
	) // the bench's own check on GoMLX's Go backend (the kit test)
}

// BenchmarkGPUPeerComparison prints what a reader needs to trust the GPU
// engine's speed — the versions, flags, precision and allocator settings
// it ran under (benchHeader) — then, for each benchmark case, D-SUM
// rounds (K = 10 steps, gossip on a ring, everything on the device but
// the batches' indices and dropout masks): compile time apart from
// execution, XLA's figures for each compiled program, the device memory
// in use after the rounds, each phase of a round (host inputs, upload,
// execute, wait and download: median, p10, p90), samples/s and the
// achieved TFLOP/s, the evaluation's time and executions, the worst
// relative difference from the CPU engine after one round and the
// digests of two runs; then a JAX peer (jit + vmap + lax.scan, donated
// state) and a PyTorch torch.func peer (vmap + functional_call,
// torch.compile) doing the same work on the same GPU, and today's
// per-worker PyTorch loop. TF32 is off on every side. make bench-gpu runs
// it once (-benchtime 1x).
func BenchmarkGPUPeerComparison(b *testing.B) {
	for b.Loop() {
		compareGPUPeers(b)
	}
}

func compareGPUPeers(t testing.TB) {
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		plugin, err := FindCUDAPlugin()
		if err != nil {
			t.Skip(err)
		}
		config = "xla:" + plugin
	}
	dev := device(config)
	backend, err := dev.Backend()
	if err != nil {
		t.Fatal(err)
	}
	compiles := &syncBuffer{}
	logTo(t, compiles, "executable=1")
	benchHeader(config, gpuName(backend))
	python, _ := exec.LookPath("python3")
	for _, bc := range benchCases() {
		if named := strings.Contains(","+*gpuCases+",", ","+bc.name+","); (*gpuCases != "" || bc.exact) && !named {
			continue
		}
		compiles.Reset()
		compiled := 0 // how much of the log printCompiled printed
		r, err := benchCohort(dev, bc, func(r *benchResult) {
			log := compiles.String()
			compiled = len(log)
			r.printCompiled(bc, compileLines(log))
		})
		if err != nil {
			fmt.Printf("%s: %s (the whole error is on stderr)\n", bc.name, firstLine(err))
			fmt.Fprintf(os.Stderr, "%s: %v\n", bc.name, err)
			continue
		}
		r.print(compileLines(compiles.String()[compiled:]))
		if python == "" || *gpuPeers == "none" {
			continue
		}
		ours := median(r.rates)
		fmt.Printf("  %-14s %14s %9s %10s %12s\n", "peer", "samples/s", "vs ump", "compile s", "peak GiB")
		for _, peer := range strings.Split(*gpuPeers, ",") {
			switch {
			case peer == "jax" || peer == "torch":
				peerRow(python, peer+"_cohort.py", bc, ours)
			case peer == "torch-loop" && bc.perWorkerRef:
				perWorkerRow(python, bc, ours)
			}
		}
	}
}

// benchHeader prints the versions, flags and settings the benchmark runs
// under.
func benchHeader(config, engine string) {
	fmt.Printf(
		"\nGPU engine benchmark: D-SUM rounds of K=%d local steps, gossip on a ring; %d timed rounds after 2 "+
			"warm-ups\n",
		benchK,
		*gpuRounds,
	)
	fmt.Printf("engine     %s (backend %q)\n", engine, config)
	if mod, err := os.ReadFile("../../go.mod"); err == nil { // the test runs in nn/gpu/
		for _, line := range strings.Split(string(mod), "\n") {
			if f := strings.Fields(line); len(f) >= 2 &&
				(f[0] == "github.com/gomlx/gomlx" || f[0] == "github.com/gomlx/go-xla") {
				fmt.Printf("module     %s %s\n", f[0], f[1])
			}
		}
	}
	if out, err := exec.Command("nvidia-smi", "--query-gpu=name,driver_version,memory.total",
		"--format=csv,noheader").Output(); err == nil {
		cuda := "?"
		if text, err := exec.Command("nvidia-smi").Output(); err == nil {
			if m := regexp.MustCompile(`CUDA Version: *([0-9.]+)`).FindSubmatch(text); m != nil {
				cuda = string(m[1])
			}
		}
		fmt.Printf("gpu        %s (name, driver, memory); CUDA %s\n", strings.TrimSpace(string(out)), cuda)
	} else {
		fmt.Printf("gpu        none (nvidia-smi: %v)\n", err)
	}
	for _, name := range []string{"XLA_FLAGS", "NVIDIA_TF32_OVERRIDE"} {
		fmt.Printf("env        %s=%q\n", name, os.Getenv(name))
	}
	fmt.Printf(
		"precision  float32 products in float32: every DotGeneral at HIGHEST precision on CUDA (openBackend), " +
			"NVIDIA_TF32_OVERRIDE=0 (cuBLAS)\n",
	)
	fmt.Printf("allocator  PJRT client options %v\n", pjrtOptions)
}

// sizing says how many cells of the case's shape a cohort would hold by
// XLA's figures (CohortCells over the round and evaluation programs of
// its cells, half the device's memory) and by CellBytes, and whether the
// case's cells fit.
func sizing(compiles string, cells int, estimate int64) string {
	memory, _ := DeviceMemory()
	budget := memory / 2
	byEstimate := max(1, budget*int64(cells)/max(estimate, 1))
	figures := map[string]ProgramMemory{}
	name := ""
	for _, line := range strings.Split(compiles, "\n") {
		if _, after, ok := strings.Cut(line, "Compiling "); ok {
			name, _ = strconv.Unquote(strings.TrimSpace(after))
		} else if p, err := ParseProgramMemory(line); err == nil {
			figures[name] = p
		}
	}
	round, okRound := figures["d-sum's round program"]
	eval, okEval := figures["d-sum's evaluation program"]
	if !okRound || !okEval {
		return fmt.Sprintf(
			"no XLA figures for the round and evaluation programs; by CellBytes %d cells fit half the device (%.1f "+
				"GiB)",
			byEstimate,
			float64(budget)/(1<<30),
		)
	}
	fit := CohortCells(round, eval, cells, budget)
	verdict := "the case's cells fit"
	if fit < cells {
		verdict = fmt.Sprintf(
			"the case's %d cells do not: a cohort of this shape would be sized down to %d",
			cells,
			fit,
		)
	}
	return fmt.Sprintf(
		"by XLA's figures %d cells fit half the device (%.1f GiB; round peak %.2f GiB, evaluation peak %.2f GiB for "+
			"%d cells), by CellBytes %d: %s",
		fit,
		float64(budget)/(1<<30),
		float64(round.Peak())/(1<<30),
		float64(eval.Peak())/(1<<30),
		cells,
		byEstimate,
		verdict,
	)
}

// compileLines are the compile lines of GoMLX's XLA backend's log (klog
// V(1) in executable.go: the program's name, compile time, and XLA's
// memory figures for it), trimmed of klog's prefix.
func compileLines(log string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, "] "); i >= 0 &&
			(strings.Contains(line, "Compil") || strings.Contains(line, "Memory usage")) {
			out = append(out, "    "+line[i+2:])
		}
	}
	return strings.Join(out, "\n")
}

// phaseNames are a round's phases as benchCohort times them.
var phaseNames = []string{"host inputs", "upload", "execute", "wait+download", "round"}

// benchResult is what benchCohort measured of a case.
type benchResult struct {
	cells, n, k, b int
	compile        float64     // seconds to compile the round program (PreCompile)
	evalCompile    float64     // and the evaluation program
	phases         [][]float64 // per phase, seconds of each timed round
	rates          []float64   // samples/s of each timed round
	evalSeconds    []float64
	evalModels     int // models scored per evaluation
	evalByChunk    string
	testSamples    int
	flopsPerSample float64
	estimate       int64  // CellBytes × cells
	deviceUsed     string // what nvidia-smi's memory.used said after the rounds
	worst          string // the worst difference from the CPU engine after one round
	digests        [2]string
}

// printCompiled prints what is known once the round and evaluation
// programs are compiled, before any round runs, so that a case cut short
// by a time limit still shows whether its cohort fits: compile times,
// XLA's figures for each program, and the sizing.
func (r benchResult) printCompiled(bc benchCase, compiles string) {
	fmt.Printf("\n%s: %s, %d cells x %d workers, K=%d, batch %d\n", bc.name, bc.model, r.cells, r.n, r.k, r.b)
	fmt.Printf(
		"  compile        %.2f s round program, %.2f s evaluation program (not counted below)\n",
		r.compile,
		r.evalCompile,
	)
	if compiles != "" {
		fmt.Printf("  compiled programs (GoMLX's XLA log):\n%s\n", compiles)
	} else {
		fmt.Printf("  compiled programs: no figures (not the XLA backend)\n")
	}
	fmt.Printf("  sizing         %s\n", sizing(compiles, r.cells, r.estimate))
}

// print prints the rest of the case's figures; later are the compile
// lines of the programs compiled after printCompiled (the evaluation at
// each chunk, the second cohort's).
func (r benchResult) print(later string) {
	if later != "" {
		fmt.Printf("  later programs (GoMLX's XLA log):\n%s\n", later)
	}
	fmt.Printf(
		"  device memory  %s; estimate %.2f GiB (CellBytes x cells)\n",
		r.deviceUsed,
		float64(r.estimate)/(1<<30),
	)
	fmt.Printf("  %-14s %10s %10s %10s   (ms, %d rounds)\n", "phase", "median", "p10", "p90", len(r.rates))
	for i, name := range phaseNames {
		fmt.Printf(
			"  %-14s %10.2f %10.2f %10.2f\n",
			name,
			1e3*median(r.phases[i]),
			1e3*quantile(r.phases[i], 0.1),
			1e3*quantile(r.phases[i], 0.9),
		)
	}
	rate := median(r.rates)
	fmt.Printf(
		"  samples/s      %.0f (median round); %.2f TFLOP/s at %.2f MFLOP per training sample; GB/s not measured "+
			"(needs a profiler)\n",
		rate,
		rate*r.flopsPerSample/1e12,
		r.flopsPerSample/1e6,
	)
	fmt.Printf("  evaluation     %.1f ms median of %d, one execution each (%d models x %d test samples)\n",
		1e3*median(r.evalSeconds), len(r.evalSeconds), r.evalModels, r.testSamples)
	fmt.Printf("  by chunk       %s\n", r.evalByChunk)
	fmt.Printf("  vs CPU engine  %s\n", r.worst)
	same := "identical"
	if r.digests[0] != r.digests[1] {
		same = "DIFFERENT"
	}
	fmt.Printf(
		"  reruns         %s / %s (sha256 of every cell's state after 2 rounds, two fresh cohorts): %s\n",
		r.digests[0][:16],
		r.digests[1][:16],
		same,
	)
}

// median is the middle value (the upper one of an even count).
func median(v []float64) float64 { return quantile(v, 0.5) }

// quantile is the q-quantile of v (nearest rank).
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// benchRound is a case's round r: every cell's batches (indices drawn
// with replacement from the round's stream), the same in every run.
func benchRound(bc benchCase, data *datasets.Dataset, seeds []uint64, cfg algorithms.Config, round int) []nn.CellRound {
	r := rng.New(1, "bench-batches", uint64(round))
	mix := ringOf(bc.n)
	cells := make([]nn.CellRound, bc.cells)
	for c := range cells {
		batches := make([][][]int, bc.n)
		for i := range batches {
			for range benchK {
				batch := make([]int, bc.b)
				for j := range batch {
					batch[j] = r.IntN(data.Train.Len())
				}
				batches[i] = append(batches[i], batch)
			}
		}
		cells[c] = nn.CellRound{
			Active:  true,
			Config:  cfg,
			Seed:    seeds[c],
			Round:   round,
			LR:      0.01,
			Mix:     mix,
			Batches: batches,
		}
	}
	return cells
}

// benchCohort measures a case (benchResult), calling compiled once the
// round and evaluation programs are compiled.
func benchCohort(dev *Device, bc benchCase, compiled func(*benchResult)) (*benchResult, error) {
	data := bc.data()
	m, err := nn.NewModel(bc.model, nn.Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)})
	if err != nil {
		return nil, err
	}
	backend, err := dev.Backend()
	if err != nil {
		return nil, err
	}
	res := &benchResult{cells: bc.cells, n: bc.n, k: benchK, b: bc.b, flopsPerSample: m.FLOPs(),
		estimate: int64(bc.cells) * CellBytes(m, "d-sum", bc.n, bc.b), phases: make([][]float64, len(phaseNames)),
		evalModels: bc.cells * (bc.n + 1), testSamples: data.Test.Len()}
	dsum := algorithms.Config{Name: "d-sum", Params: kinds.Values{"alpha": 2.0, "beta": 0.9}}
	seeds := make([]uint64, bc.cells)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	open := func() (*xlaCohort, error) {
		co, err := NewCohort(
			dev,
			data,
			nn.CohortShape{Model: bc.model, Algorithm: "d-sum", Cells: bc.cells, Workers: bc.n,
				LocalSteps: benchK, Batch: bc.b, Exact: bc.exact},
		)
		if err != nil {
			return nil, err
		}
		x0 := make([]float32, m.Params)
		for c, seed := range seeds {
			m.Init(x0, seed)
			opt, err := algorithms.New(dsum, bc.n, x0)
			if err == nil {
				err = co.SetState(c, opt.State())
			}
			if err != nil {
				co.Close()
				return nil, err
			}
		}
		return co.(*xlaCohort), nil
	}
	co, err := open()
	if err != nil {
		return nil, err
	}
	defer co.Close()
	inputs, err := co.roundInputs(benchRound(bc, data, seeds, dsum, 0))
	if err != nil {
		return nil, err
	}
	args, err := co.roundArgs(inputs, false)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := co.round.PreCompile(args...); err != nil {
		return nil, fmt.Errorf("compiling the round program: %w", err)
	}
	res.compile = time.Since(start).Seconds()
	start = time.Now()
	if err := co.eval.PreCompile(append([]any{co.state[0]}, co.test.args()...)...); err != nil {
		return nil, fmt.Errorf("compiling the evaluation program: %w", err)
	}
	res.evalCompile = time.Since(start).Seconds()
	compiled(res)
	for round := 0; round < *gpuRounds+2; round++ {
		cells := benchRound(bc, data, seeds, dsum, round)
		var at [5]time.Time
		at[0] = time.Now()
		inputs, err := co.roundInputs(cells)
		if err != nil {
			return nil, err
		}
		at[1] = time.Now()
		for _, t := range inputs {
			if err := t.MaterializeOnDevice(backend, false, 0); err != nil {
				return nil, fmt.Errorf("uploading a round's inputs: %w", err)
			}
		}
		at[2] = time.Now()
		out, err := co.execRound(inputs)
		if err != nil {
			return nil, err
		}
		at[3] = time.Now()
		if _, _, err := co.roundResults(out); err != nil {
			return nil, err
		}
		at[4] = time.Now()
		finalize(inputs)
		if round == 0 {
			if res.worst, err = cpuDifference(co, bc, data, cells[0]); err != nil {
				return nil, err
			}
		}
		if round == 1 {
			if res.digests[0], err = stateDigest(co); err != nil {
				return nil, err
			}
		}
		if round < 2 {
			continue
		}
		for i := range 4 {
			res.phases[i] = append(res.phases[i], at[i+1].Sub(at[i]).Seconds())
		}
		took := at[4].Sub(at[0]).Seconds()
		res.phases[4] = append(res.phases[4], took)
		res.rates = append(res.rates, float64(bc.cells*bc.n*benchK*bc.b)/took)
	}
	for range 3 {
		start := time.Now()
		if _, err := co.Evaluate(); err != nil {
			return nil, err
		}
		res.evalSeconds = append(res.evalSeconds, time.Since(start).Seconds())
	}
	if res.evalByChunk, err = evalByChunk(co, backend); err != nil {
		res.evalByChunk = "not measured: " + err.Error() // the case's other figures still count
	}
	res.deviceUsed = "not read (no nvidia-smi)"
	if out, err := exec.Command("nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader").Output(); err == nil {
		res.deviceUsed = strings.TrimSpace(string(out)) + " in use after the rounds (nvidia-smi)"
	}
	again, err := open()
	if err != nil {
		return nil, err
	}
	defer again.Close()
	for round := range 2 {
		if _, _, err := again.Round(benchRound(bc, data, seeds, dsum, round)); err != nil {
			return nil, err
		}
	}
	if res.digests[1], err = stateDigest(again); err != nil {
		return nil, err
	}
	return res, nil
}

// evalByChunk times the cohort's evaluation with each chunk of test
// samples per step of its loop (a power of two up to nn.EvalBatch; the
// cohort's own is evalChunk's): compile seconds and the median of 3
// executions and the largest difference of its scores from the
// cohort's evaluation (relative, for losses), so that one run on a GPU host shows which chunk evaluates
// fastest (its memory: the "evaluation at chunk" programs' XLA figures).
func evalByChunk(co *xlaCohort, backend backends.Backend) (string, error) {
	want, err := co.Evaluate()
	if err != nil {
		return "", err
	}
	var out []string
	for chunk := 16; chunk <= nn.EvalBatch; chunk *= 2 {
		prog, err := graph.NewExec(backend, co.evalGraph(co.shape.Cells, chunk))
		if err != nil {
			return "", err
		}
		prog.WithName(fmt.Sprintf("evaluation at chunk %d", chunk))
		start := time.Now()
		if err := prog.PreCompile(append([]any{co.state[0]}, co.test.args()...)...); err != nil {
			return "", fmt.Errorf("compiling the evaluation at chunk %d: %w", chunk, err)
		}
		compile := time.Since(start).Seconds()
		var took []float64
		var scores []nn.CellScores
		for range 3 {
			start := time.Now()
			if scores, err = co.evaluate(prog, co.state[0], co.shape.Cells); err != nil {
				return "", err
			}
			took = append(took, time.Since(start).Seconds())
		}
		worst := 0.0 // the largest difference from the cohort's own evaluation
		for c, cell := range scores {
			models, wanted := append(
				slices.Clone(cell.Local),
				cell.Consensus,
			), append(
				slices.Clone(want[c].Local),
				want[c].Consensus,
			)
			for i, s := range models {
				worst = max(
					worst,
					math.Abs(s.Loss-wanted[i].Loss)/max(math.Abs(wanted[i].Loss), 1e-30),
					math.Abs(s.Accuracy-wanted[i].Accuracy),
				)
			}
		}
		prog.Finalize()
		mark := ""
		if chunk == evalChunk(co.shape.Cells*(co.shape.Workers+1)) {
			mark = " (the cohort's)"
		}
		out = append(
			out,
			fmt.Sprintf(
				"%d: %.1f ms, compile %.2f s, scores within %.1g%s",
				chunk,
				1e3*median(took),
				compile,
				worst,
				mark,
			),
		)
	}
	return "evaluation by test samples per loop step: " + strings.Join(out, "; "), nil
}

// cpuDifference runs cell 0's first round on the CPU engine and the CPU
// optimizer and reports the worst relative difference of its state
// vectors from the cohort's.
func cpuDifference(co *xlaCohort, bc benchCase, data *datasets.Dataset, cell nn.CellRound) (string, error) {
	cpu, err := cpu.New(bc.model, data, cell.Seed)
	if err != nil {
		return "", err
	}
	x0 := make([]float32, cpu.Params())
	cpu.Init(x0)
	opt, err := algorithms.New(cell.Config, bc.n, x0)
	if err != nil {
		return "", err
	}
	if _, err := cpuRound(cpu, opt, 0, cell.LR, cell.Mix, cell.Batches); err != nil {
		return "", err
	}
	got, err := co.State(0)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, name := range co.names {
		parts = append(parts, fmt.Sprintf("%s %.2g", name, relDiff(opt.State()[name], got[name])))
	}
	return "relative difference of cell 0's state after one round: " + strings.Join(parts, ", "), nil
}

// stateDigest is the sha256 of every cell's state vectors.
func stateDigest(co *xlaCohort) (string, error) {
	h := sha256.New()
	for c := range co.shape.Cells {
		state, err := co.State(c)
		if err != nil {
			return "", err
		}
		for _, name := range co.names {
			for _, v := range state[name] {
				if err := binary.Write(h, binary.LittleEndian, v); err != nil {
					return "", err
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// peerRow runs a cohort peer script on a case and prints its row.
func peerRow(python, script string, bc benchCase, ours float64) {
	cfg, _ := json.Marshal(
		map[string]any{"model": bc.peerModel, "cells": bc.cells, "workers": bc.n, "local_steps": benchK,
			"batch": bc.b, "rounds": *gpuRounds},
	)
	cmd := exec.Command(python, "peerbench/"+script, string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var peer struct {
		Rates   []float64 `json:"samples_per_s"`
		Compile float64   `json:"compile_s"`
		Peak    float64   `json:"peak_bytes"`
		Error   string    `json:"error"`
	}
	if err == nil {
		err = json.Unmarshal(out, &peer)
	}
	name := strings.TrimSuffix(script, "_cohort.py")
	switch {
	case err != nil:
		fmt.Printf("%-22s %-14s %v\n", bc.name, name, err)
	case peer.Error != "":
		fmt.Printf("%-22s %-14s %s\n", bc.name, name, peer.Error)
	default:
		r := median(peer.Rates)
		fmt.Printf(
			"%-22s %-14s %14.0f %8.2fx %10.1f %12.2f\n",
			bc.name,
			name,
			r,
			r/ours,
			peer.Compile,
			peer.Peak/(1<<30),
		)
	}
}

// perWorkerRow times today's per-worker PyTorch loop (one module and
// optimizer per worker, SGD) on the case's workers.
func perWorkerRow(python string, bc benchCase, ours float64) {
	cfg, _ := json.Marshal(map[string]any{"threads": runtime.GOMAXPROCS(0), "workers": bc.n, "local_steps": benchK,
		"batch": bc.b, "rounds": 5, "device": "cuda", "models": []string{bc.peerModel}})
	cmd := exec.Command(python, "../cpu/peerbench/torch_peer.py", string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var peer struct {
		Rates []float64 `json:"samples_per_s"`
	}
	if err == nil {
		err = json.Unmarshal(out, &peer)
	}
	if err != nil {
		fmt.Printf("%-22s %-14s %v\n", bc.name, "torch-loop", err)
		return
	}
	r := median(peer.Rates)
	fmt.Printf("%-22s %-14s %14.0f %8.2fx %10s %12s\n", bc.name, "torch-loop", r, r/ours, "-", "-")
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
