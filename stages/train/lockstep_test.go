package train

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
)

// fakeCohort records the rounds it runs: which slots were active, with
// which Round numbers; each active cell's losses are its slot number.
type fakeCohort struct {
	mu     sync.Mutex
	rounds [][]int // per round: the Round of each slot, -1 when frozen
	fail   error
	evals  int
	states map[int]map[string][][]float32
	closed bool
}

func (f *fakeCohort) Round(cells []nn.CellRound) ([][]float64, []bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, nil, f.fail
	}
	var rounds []int
	losses, finite := make([][]float64, len(cells)), make([]bool, len(cells))
	for i, c := range cells {
		if !c.Active {
			rounds = append(rounds, -1)
			continue
		}
		rounds = append(rounds, c.Round)
		losses[i], finite[i] = []float64{float64(i)}, true
	}
	f.rounds = append(f.rounds, rounds)
	return losses, finite, nil
}

func (f *fakeCohort) Evaluate() ([]nn.CellScores, error) {
	f.evals++
	return make([]nn.CellScores, 3), nil
}

func (f *fakeCohort) EvaluateCell(int) (nn.CellScores, error) { return nn.CellScores{}, nil }

func (f *fakeCohort) State(c int) (map[string][][]float32, error) { return f.states[c], nil }

func (f *fakeCohort) SetState(c int, v map[string][][]float32) error {
	f.states[c] = v
	return nil
}

func (f *fakeCohort) Close() { f.closed = true }

func fakeLockstep(size int, f *fakeCohort) *Lockstep {
	return NewLockstep(size, func(*datasets.Dataset, nn.CohortShape) (nn.Cohort, error) { return f, nil })
}

func gpuCell() *manifests.Manifest {
	return &manifests.Manifest{Engine: "gpu", Task: manifests.Task{Dataset: "mnist", Model: "lenet"},
		Algorithm: manifests.Algorithm{Name: "d-sum"}, Workers: 2, LocalSteps: 1, BatchSize: 8}
}

// onDevice are engines with a cohort program for both kinds: the GPU
// engine's and, as where engines.Set is Exact, the CPU engine's.
var onDevice = testEngines{cohorts: []string{"gpu", ""}}

// TestCohortKeysSeparateTheEngines: a cell trains in a cohort only where
// the engines have a cohort program of its engine's kind, and cells of
// the two kinds never share one (the CPU engine's cohorts are exact).
func TestCohortKeysSeparateTheEngines(t *testing.T) {
	cpuCell := gpuCell()
	cpuCell.Engine = ""
	if k := CohortKey(testEngines{cohorts: []string{"gpu"}}, cpuCell); k != "" {
		t.Errorf("a CPU engine's cell has cohort key %q without a cohort program of its kind", k)
	}
	gpu, cpu := CohortKey(onDevice, gpuCell()), CohortKey(onDevice, cpuCell)
	if gpu == "" || cpu == "" || gpu == cpu {
		t.Errorf("cohort keys %q (the GPU engine's cell) and %q (the CPU engine's): want two, apart", gpu, cpu)
	}
	compressed := gpuCell()
	compressed.Compression = &manifests.Compression{Codec: "efsign"}
	if k := CohortKey(onDevice, compressed); k != "" {
		t.Errorf("a cell with compressed communication has cohort key %q: it exchanges on the host", k)
	}
}

// eventually waits until cond holds (another goroutine gets there).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestLockstepWaitsForReservedCells: a round runs only once every member
// has submitted and every reserved seat has joined or been released; a
// member's result is its own slot's; the last member out closes the
// cohort.
func TestLockstepWaitsForReservedCells(t *testing.T) {
	f := &fakeCohort{states: map[int]map[string][][]float32{}}
	l := fakeLockstep(3, f)
	key := CohortKey(onDevice, gpuCell())
	if key == "" {
		t.Fatal("a GPU data-set cell has no cohort key")
	}
	seats := []*Seat{l.Reserve(key), l.Reserve(key), l.Reserve(key)}
	a, err := seats[0].Join(nil, nn.CohortShape{}, map[string][][]float32{"x": {{1}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := seats[1].Join(nil, nn.CohortShape{}, map[string][][]float32{"x": {{2}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []float64, 2)
	go func() { l, _, _, _ := a.Round(nn.CellRound{Round: 0}, false); done <- l }()
	go func() { l, _, _, _ := b.Round(nn.CellRound{Round: 4}, false); done <- l }()
	time.Sleep(20 * time.Millisecond)
	if len(done) != 0 || len(f.rounds) != 0 {
		t.Fatal("a round ran while a reserved cell was still on its way")
	}
	seats[2].Release() // that cell was a cache hit: it never joins
	got := [][]float64{<-done, <-done}
	slices.SortFunc(got, func(x, y []float64) int { return int(x[0] - y[0]) })
	if !slices.Equal(got[0], []float64{0}) || !slices.Equal(got[1], []float64{1}) {
		t.Errorf("members got losses %v, want their own slots' [0] and [1]", got)
	}
	if want := [][]int{{0, 4, -1}}; !slices.EqualFunc(f.rounds, want, slices.Equal) {
		t.Errorf("rounds ran %v, want %v (each cell's own round, the empty slot frozen)", f.rounds, want)
	}
	if s, _ := b.State(); s["x"][0][0] != 2 {
		t.Errorf("member b's state %v, want what it joined with", s)
	}
	a.Leave()
	if _, _, _, err := b.Round(nn.CellRound{Round: 5}, false); err != nil {
		t.Fatal(err)
	}
	if last := f.rounds[len(f.rounds)-1]; !slices.Equal(last, []int{-1, 5, -1}) {
		t.Errorf("after a left, the round ran %v, want only b's", last)
	}
	b.Leave()
	if !f.closed {
		t.Error("the cohort stayed open after its last member left")
	}
}

// TestLockstepSharesAnError: a failed round is every waiting member's
// error, and the next round runs again.
func TestLockstepSharesAnError(t *testing.T) {
	f := &fakeCohort{states: map[int]map[string][][]float32{}, fail: errors.New("device lost")}
	l := fakeLockstep(2, f)
	key := CohortKey(onDevice, gpuCell())
	a, _ := l.Reserve(key).Join(nil, nn.CohortShape{}, nil)
	b, _ := l.Reserve(key).Join(nil, nn.CohortShape{}, nil)
	errs := make(chan error, 2)
	for _, m := range []*Member{a, b} {
		go func() { _, _, _, err := m.Round(nn.CellRound{}, false); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err == nil || err.Error() != "device lost" {
			t.Errorf("member's error %v, want the device's", err)
		}
	}
	f.fail = nil
	go func() { _, _, _, err := a.Round(nn.CellRound{}, true); errs <- err }()
	eventually(t, "a's submission", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return a.g.submitted == 1 })
	if _, _, scores, err := b.Round(nn.CellRound{}, false); err != nil || scores != nil {
		t.Errorf("b after the error: scores %v, %v", scores, err)
	}
	if err := <-errs; err != nil || f.evals != 1 {
		t.Errorf("a: %v; %d evaluations, want 1 (a asked)", err, f.evals)
	}
}

// TestCohortKeysHoldTheProgramsShape: cells share a cohort key exactly when
// they share the round program's shape (data set, model, algorithm,
// workers, K, batch size); their seeds, learning rates and partitions,
// the program's inputs, do not part them (issue 102, item 11).
func TestCohortKeysHoldTheProgramsShape(t *testing.T) {
	base := CohortKey(onDevice, gpuCell())
	for what, change := range map[string]func(m *manifests.Manifest){
		"the data set":   func(m *manifests.Manifest) { m.Task.Dataset = "fashion-mnist" },
		"the model":      func(m *manifests.Manifest) { m.Task.Model = "mlp" },
		"the algorithm":  func(m *manifests.Manifest) { m.Algorithm.Name = "gt-dsum" },
		"the workers":    func(m *manifests.Manifest) { m.Workers = 3 },
		"K":              func(m *manifests.Manifest) { m.LocalSteps = 2 },
		"the batch size": func(m *manifests.Manifest) { m.BatchSize = 16 },
	} {
		m := gpuCell()
		change(m)
		if k := CohortKey(onDevice, m); k == base || k == "" {
			t.Errorf("another %s: cohort key %q, want one apart from %q", what, k, base)
		}
	}
	for what, change := range map[string]func(m *manifests.Manifest){
		"another seed": func(m *manifests.Manifest) { m.Seed = 7 },
		"another lr":   func(m *manifests.Manifest) { m.LR = 0.5 },
		"a partition":  func(m *manifests.Manifest) { m.Partition = &manifests.Partition{Kind: "dirichlet"} },
	} {
		m := gpuCell()
		change(m)
		if k := CohortKey(onDevice, m); k != base {
			t.Errorf("%s: cohort key %q, want the same program's %q", what, k, base)
		}
	}
}
