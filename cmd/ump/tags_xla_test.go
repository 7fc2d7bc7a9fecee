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
