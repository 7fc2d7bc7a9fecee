//go:build xla

package main

import (
	"cmp"
	"encoding/csv"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/nn/gpu"
)

// buildTags are the tags the tests build ump with: those they are built with.
var buildTags = []string{"-tags", "xla"}

// TestGPUEngineThroughThePipeline trains a synthetic sweep with --engine
// gpu on $GOMLX_BACKEND (XLA/CUDA on a GPU host), else GoMLX's pure-Go
// backend, and with the CPU engine: both complete, the engine enters the
// hash and the cell keys, and the final accuracies agree closely (the
// engines differ in rounding only); doctor names the backend.
func TestGPUEngineThroughThePipeline(t *testing.T) {
	t.Parallel()
	backend := cmp.Or(os.Getenv("GOMLX_BACKEND"), gpu.GoBackend)
	env := []string{"GOMLX_BACKEND=" + backend}
	m := writeFile(t, "s.yaml", strings.Replace(inspectManifest, "DATASET", "synthetic", 1))
	store := t.TempDir()
	gpu := umpEnv(t, env, store, "run", "--engine", "gpu", m)
	cpu := umpEnv(t, env, store, "run", m)
	if gpu.code != 0 || cpu.code != 0 {
		t.Fatalf("gpu run: exit %d %s\ncpu run: exit %d %s", gpu.code, gpu.stderr, cpu.code, cpu.stderr)
	}
	hg, hc := hashOf(t, gpu), hashOf(t, cpu)
	if hg == hc {
		t.Fatal("--engine gpu kept the manifest hash")
	}
	acc := func(hash string) float64 {
		rows, err := csv.NewReader(strings.NewReader(exportCSV(t, store, hash, "final"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(rows[0], "test_acc_mean")
		v, err := strconv.ParseFloat(rows[1][col], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if a, b := acc(hg), acc(hc); a < 0.3 || b < 0.3 || a-b > 0.02 || b-a > 0.02 {
		t.Errorf("final test_acc_mean: gpu engine %.4f, cpu engine %.4f", a, b)
	}
	want := "gpu: works: gomlx-float32/v5 SimpleGo"
	if !strings.HasPrefix(backend, "go") {
		want = "gpu: works: gomlx-float32/v5 xla "
	}
	if r := umpEnv(t, env, store, "doctor"); !strings.Contains(r.stdout, want) {
		t.Errorf("doctor with GOMLX_BACKEND=%s, want %q:\n%s", backend, want, r.stdout)
	}
}

// exactManifest is a small sweep of the CPU engine (two algorithms, one
// of them with a worker's batch cut short at each epoch's end).
const exactManifest = `version: 1
name: exact
task: {dataset: synthetic}
workers: 4
rounds: 3
local_steps: 2
batch_size: 24
lr: 0.1
partition: {kind: dirichlet, alpha: 0.5}
topology: {kind: ring, weights: metropolis-hastings}
algorithm: {name: d-sum}
sweep: {algorithm: [{name: d-sum}, {name: local-sgd-m}]}
evaluate: {every: 1}
`

// TestGPUExactCellIsTheCPUs trains the CPU engine's cells on the device
// with --exact-gpu ($GOMLX_BACKEND, else GoMLX's pure-Go backend): they
// keep the CPU engine's hash and cell keys and have its bits, so ump
// verify, recomputing them on the CPU, finds every output's digest equal,
// and ump run on the CPU finds them cached. The run's record names the
// device.
func TestGPUExactCellIsTheCPUs(t *testing.T) {
	t.Parallel()
	env := []string{"GOMLX_BACKEND=" + cmp.Or(os.Getenv("GOMLX_BACKEND"), gpu.GoBackend)}
	m := writeFile(t, "exact.yaml", exactManifest)
	store, cpuStore := t.TempDir(), t.TempDir()
	exact := umpEnv(t, env, store, "--exact-gpu", "run", m)
	cpu := umpEnv(t, nil, cpuStore, "run", m)
	if exact.code != 0 || cpu.code != 0 {
		t.Fatalf("--exact-gpu run: exit %d %s\ncpu run: exit %d %s", exact.code, exact.stderr, cpu.code, cpu.stderr)
	}
	hash := hashOf(t, exact)
	if hash != hashOf(t, cpu) {
		t.Fatal("--exact-gpu changed the manifest hash")
	}
	if show := umpEnv(t, nil, store, "show", "--events", hash); !strings.Contains(
		show.stdout,
		"cohorts in the exact program on ",
	) {
		t.Errorf("show does not say the cells trained in the exact program:\n%s", show.stdout)
	}
	if v := umpEnv(t, nil, store, "verify", hash); v.code != 0 || strings.Count(v.stdout, ": ok,") != 2 {
		t.Errorf("verify on the CPU: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
	if again := umpEnv(t, nil, store, "run", m); again.code != 0 ||
		!strings.Contains(again.stderr, "(2 fully cached)") {
		t.Errorf("run on the CPU after --exact-gpu: exit %d, want every cell cached:\n%s", again.code, again.stderr)
	}
	if a, b := exportCSV(t, store, hash, "rounds"), exportCSV(t, cpuStore, hash, "rounds"); a != b {
		t.Errorf("the rounds tables differ:\n--exact-gpu:\n%s\ncpu:\n%s", a, b)
	}
}
