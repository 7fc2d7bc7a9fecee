package engines

import (
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestExactTrainsOnlyWhatHasSamples: with --exact-gpu (Exact), a data-set
// cell of the CPU engine trains in a device cohort, while the quadratic
// task, which no engine trains, never does, whatever its algorithm; without
// Exact no CPU engine's cell does (issue 102, item 11).
func TestExactTrainsOnlyWhatHasSamples(t *testing.T) {
	parse := func(src string) *manifests.Manifest {
		t.Helper()
		plan, err := manifests.Parse("m.yaml", []byte("version: 1\nname: m\nrounds: 3\nlr: 0.1\n"+src))
		if err != nil {
			t.Fatal(err)
		}
		return &plan.Cells[0].Config
	}
	mnist := parse("task: {dataset: mnist}\nalgorithm: {name: d-sum}\n")
	quadratic := parse("task: {dataset: quadratic}\nlocal_steps: 1\nalgorithm: {name: d2}\n")
	exact, plain := Set{Exact: true}, Set{}
	if exact.CohortKey(mnist) == "" {
		t.Error("with Exact, an MNIST cell of the CPU engine has no cohort key")
	}
	if k := exact.CohortKey(quadratic); k != "" {
		t.Errorf("with Exact, a quadratic cell has cohort key %q; it never trains on a device", k)
	}
	if err := exact.Check(quadratic); err != nil {
		t.Errorf("with Exact, a quadratic cell is refused: %v", err)
	}
	if k := plain.CohortKey(mnist); k != "" {
		t.Errorf("without Exact, an MNIST cell of the CPU engine has cohort key %q", k)
	}
}

// TestMemoryNeedOfTheQuadratic: a quadratic cell's peak is every worker's
// state vectors of its dimension, named by task.quadratic.dim, and grows
// with the workers and the dimension alike (issue 102, item 11).
func TestMemoryNeedOfTheQuadratic(t *testing.T) {
	need := func(workers, dim int) float64 {
		t.Helper()
		cfg := &manifests.Manifest{Workers: workers, Task: manifests.Task{Dataset: "quadratic",
			Quadratic: &manifests.Quadratic{Dim: dim}}}
		bytes, field, err := Set{}.MemoryNeed(cfg, nil)
		if err != nil || field != "task.quadratic.dim" {
			t.Fatalf("MemoryNeed: %g bytes, field %q, %v", bytes, field, err)
		}
		return bytes
	}
	if got := need(10, 1000); got != 10*1000*stateVectors*4 {
		t.Errorf("10 workers of 1,000 dimensions need %g bytes, want %d", got, 10*1000*stateVectors*4)
	}
	if need(20, 1000) != 2*need(10, 1000) || need(10, 2000) != 2*need(10, 1000) {
		t.Error("the need does not grow with the workers and the dimension alike")
	}
}
