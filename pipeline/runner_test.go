package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/report"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
)

const smallManifest = `version: 1
name: small
task: {dataset: quadratic, quadratic: {dim: 50, sigma: 0.1}}
workers: 6
rounds: 40
local_steps: 3
lr: 0.05
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: gt-dsum}]
evaluate: {every: 2}
checkpoint: {every: 10}
`

func TestRerunIsAllCacheHits(t *testing.T) {
	plan := parse(t, smallManifest)
	s := openTestStore(t)
	r := &Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{}}
	if out, err := r.Run(context.Background(), plan); err != nil || out.Completed != 2 || out.Cached != 0 {
		t.Fatalf("first run: %+v %v", out, err)
	}
	before := exportTable(t, s, plan.Hash, "rounds")
	started, total := countKind(t, s, eventlog.StageStarted), countKind(t, s, eventlog.CellCompleted)
	out, err := r.Run(context.Background(), plan)
	if err != nil || out.Cached != 2 || out.Completed != 2 {
		t.Fatalf("rerun: %+v %v", out, err)
	}
	if n := countKind(t, s, eventlog.StageStarted); n != started {
		t.Errorf("rerun started %d stages, want none", n-started)
	}
	if n := countKind(t, s, eventlog.CellCompleted); n != total {
		t.Errorf("rerun appended %d CellCompleted events, want none", n-total)
	}
	sameTables(t, before, exportTable(t, s, plan.Hash, "rounds"))
	if rows := before.Rows(); rows != 2*20 {
		t.Errorf("rounds table has %d rows, want 2 cells x 20 evaluations", rows)
	}
}

func blobPath(s *Store, ref artifacts.Ref) string {
	h := strings.TrimPrefix(ref.Digest, "sha256:")
	return filepath.Join(s.Path, "blobs", "sha256", h[:2], h)
}

func TestCorruptBlobIsDetectedAndRecomputed(t *testing.T) {
	plan := parse(t, smallManifest)
	s := openTestStore(t)
	r := &Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{}}
	if _, err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	before := exportTable(t, s, plan.Hash, "rounds")
	reg, _ := s.Source().FindManifest(plan.Hash)
	rep, _ := s.Source().Report(reg)
	trainOut := rep.Cells[0].Stage("train").Result.Outputs
	// Damage the rounds table and truncate the final checkpoint: train must
	// rerun, resume from the checkpoint after round 30 and reproduce both.
	if err := os.WriteFile(blobPath(s, trainOut["rounds"]), []byte("not arrow"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(blobPath(s, trainOut["checkpoint"]), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blobs.Get(context.Background(), trainOut["rounds"]); !errors.Is(err, artifacts.ErrCorrupt) {
		t.Fatalf("damaged blob not detected: %v", err)
	}
	var progress strings.Builder
	r.Progress = &progress
	started := countKind(t, s, eventlog.StageStarted)
	out, err := r.Run(context.Background(), plan)
	if err != nil || out.Completed != 2 {
		t.Fatalf("rerun: %+v %v", out, err)
	}
	for _, want := range []string{"cached output unusable", "resuming from the checkpoint after round 30"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if n := countKind(t, s, eventlog.StageStarted) - started; n != 1 {
		t.Errorf("rerun started %d stages, want only train of cell 1", n)
	}
	for name, ref := range trainOut {
		if _, err := s.Blobs.Get(context.Background(), ref); err != nil {
			t.Errorf("output %s not restored: %v", name, err)
		}
	}
	sameTables(t, before, exportTable(t, s, plan.Hash, "rounds"))
}

// interruptAt wraps the train stage and cancels the run after a round of
// the cell of an algorithm.
type interruptAt struct {
	train.Stage
	algorithm string
	round     int
	cancel    context.CancelFunc
}

func (s interruptAt) Run(ctx context.Context, p train.Params, env *stages.Env) (*stages.Result, error) {
	if p.Algorithm.Name == s.algorithm {
		report := env.Report
		env.Report = func(r record.RoundReport) error {
			if r.Round == s.round {
				s.cancel()
			}
			return report(r)
		}
	}
	return s.Stage.Run(ctx, p, env)
}

func TestInterruptedRunResumesBitIdentical(t *testing.T) {
	plan := parse(t, smallManifest)
	clean := openTestStore(t)
	if _, err := (&Runner{Log: clean.Log, Blobs: clean.Blobs, Dir: clean.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	s := openTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stgs := cellStages(nil)
	stgs[2] = stages.Of(
		interruptAt{
			Stage:     train.Stage{Engines: engines.Set{}},
			algorithm: "gt-dsum",
			round:     24,
			cancel:    cancel,
		},
	) // cell 2
	_, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: stgs, Engines: engines.Set{}}).Run(ctx, plan)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("run: %v, want ErrInterrupted", err)
	}
	reg, _ := s.Source().FindManifest(plan.Hash)
	rep, _ := s.Source().Report(reg)
	// Cancelled while reporting round 24, training finishes round 25 (the
	// next safe point) and checkpoints there.
	if st := rep.Cells[1].Stage("train"); rep.Cells[1].Status != eventlog.Incomplete || st.Round != 25 {
		t.Fatalf("after interruption cell 2 is %s at round %d, want incomplete at 25", rep.Cells[1].Status, st.Round)
	}
	var progress strings.Builder
	out, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{},
		Progress: &progress}).Run(
		context.Background(),
		plan,
	)
	if err != nil || out.Completed != 2 {
		t.Fatalf("resumed run: %+v %v", out, err)
	}
	if !strings.Contains(progress.String(), "resuming from the checkpoint after round 25") {
		t.Errorf("did not resume from the interruption point:\n%s", progress.String())
	}
	sameTables(t, exportTable(t, clean, plan.Hash, "rounds"), exportTable(t, s, plan.Hash, "rounds"))
	sameTables(t, exportTable(t, clean, plan.Hash, "final"), exportTable(t, s, plan.Hash, "final"))
}

// TestStoreHoldsTwoCheckpointsPerTraining: a run that checkpoints every
// round keeps two checkpoint blobs per training stage (the furthest and
// the one before it), whatever its rounds, so the store does not grow
// with the square of the rounds; interrupted and resumed, it still ends
// with two and the same results, and CheckBlobs finds nothing missing.
func TestStoreHoldsTwoCheckpointsPerTraining(t *testing.T) {
	src := strings.NewReplacer("rounds: 40", "rounds: 120", "checkpoint: {every: 10}", "checkpoint: {every: 1}").
		Replace(smallManifest)
	plan := parse(t, src)
	checkpoints := func(s *Store) (n int, size int64) {
		refs, err := s.Local.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			data, err := s.Local.Get(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(string(data), "UMPCKPT1") {
				n, size = n+1, size+ref.Size
			}
		}
		return n, size
	}
	clean := openTestStore(t)
	if _, err := (&Runner{Log: clean.Log, Blobs: clean.Blobs, Dir: clean.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if n, _ := checkpoints(clean); n != 4 {
		t.Errorf("2 cells of 120 rounds, checkpointed every round, left %d checkpoint blobs; want 4 (two each)", n)
	}
	s := openTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stgs := cellStages(nil)
	stgs[2] = stages.Of(
		interruptAt{
			Stage:     train.Stage{Engines: engines.Set{}},
			algorithm: "gt-dsum",
			round:     70,
			cancel:    cancel,
		},
	)
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: stgs, Engines: engines.Set{}}).Run(ctx,
		plan); !errors.Is(
		err,
		ErrInterrupted,
	) {
		t.Fatalf("run: %v, want ErrInterrupted", err)
	}
	if n, _ := checkpoints(s); n != 4 {
		t.Errorf("interrupted at round 70 of the second cell: %d checkpoint blobs, want 4", n)
	}
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	sameTables(t, exportTable(t, clean, plan.Hash, "rounds"), exportTable(t, s, plan.Hash, "rounds"))
	if n, _ := checkpoints(s); n != 4 {
		t.Errorf("resumed: %d checkpoint blobs, want 4", n)
	}
	reg, err := s.Source().FindManifest(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if _, damaged, err := CheckBlobs(context.Background(), s, reg); err != nil || len(damaged) > 0 {
		t.Errorf("CheckBlobs: %v, damaged %v", err, damaged)
	}
}

func TestDivergedCellIsRecorded(t *testing.T) {
	src := strings.Replace(smallManifest, "lr: 0.05", "lr: 3", 1)
	plan := parse(t, src)
	s := openTestStore(t)
	out, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{}}).Run(
		context.Background(),
		plan,
	)
	if err != nil || out.Diverged != 2 {
		t.Fatalf("run: %+v %v, want 2 diverged cells", out, err)
	}
	final := exportTable(t, s, plan.Hash, "final")
	for r, status := range final.Column("status").Strings {
		gap := final.Column("objective_gap").Floats[r]
		if status != eventlog.Diverged || !(math.IsNaN(gap) || math.IsInf(gap, 0)) {
			t.Errorf("row %d: status %s, gap %v; want diverged with a non-finite gap", r, status, gap)
		}
	}
	rounds := exportTable(t, s, plan.Hash, "rounds").Column("round").Ints
	if last := rounds[len(rounds)-1]; last >= 40 {
		t.Errorf("diverged training ran to round %d, want it stopped early", last)
	}
}

// failFirstCell wraps a stage and fails its first run (cell 1's: cells
// run in plan order).
type failFirstCell struct {
	stages.Stage
	runs *int
}

func (s failFirstCell) Run(ctx context.Context, cfg *manifests.Manifest, env *stages.Env) (*stages.Result, error) {
	if *s.runs++; *s.runs == 1 {
		return nil, errors.New("injected failure")
	}
	return s.Stage.Run(ctx, cfg, env)
}

func TestFailedStageIsRecordedAndOthersRun(t *testing.T) {
	plan := parse(t, smallManifest)
	s := openTestStore(t)
	stgs := cellStages(nil)
	stgs[3] = failFirstCell{stgs[3], new(int)}
	out, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: stgs, Engines: engines.Set{}}).Run(
		context.Background(),
		plan,
	)
	if err != nil || out.Failed != 1 || out.Completed != 1 {
		t.Fatalf("run: %+v %v, want 1 failed and 1 completed", out, err)
	}
	reg, _ := s.Source().FindManifest(plan.Hash)
	rep, _ := s.Source().Report(reg)
	st := rep.Cells[0].Stage("evaluate")
	if rep.Cells[0].Status != eventlog.Failed || st.Status != eventlog.Failed ||
		!strings.Contains(st.Error, "injected failure") {
		t.Fatalf("cell 1: %s, evaluate %s %q", rep.Cells[0].Status, st.Status, st.Error)
	}
	// Fixed code: the rerun reuses train and completes the cell.
	started := countKind(t, s, eventlog.StageStarted)
	out, err = (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{}}).Run(
		context.Background(),
		plan,
	)
	if err != nil || out.Completed != 2 {
		t.Fatalf("rerun: %+v %v", out, err)
	}
	if n := countKind(t, s, eventlog.StageStarted) - started; n != 1 {
		t.Errorf("rerun started %d stages, want 1 (evaluate of cell 1)", n)
	}
}

func TestSecondOpenNamesHolder(t *testing.T) {
	s := openTestStore(t)
	_, err := Open(s.Path, "second")
	if !errors.Is(err, eventlog.ErrBusy) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Open: %v; want ErrBusy naming PID %d", err, os.Getpid())
	}
}

// TestFoldRefusesPayloadsThatDoNotDecode: an event whose payload is not
// its kind's type makes the fold fail, naming the event, instead of
// folding to a wrong state.
func TestFoldRefusesPayloadsThatDoNotDecode(t *testing.T) {
	s := openTestStore(t)
	if err := s.Log.Append(&eventlog.Event{Kind: eventlog.CellStarted, Cell: "c", Payload: []byte(
		`{"go":"go1.26"}`)}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Source().Cell("m", "c"); err != nil || v.Status != eventlog.Incomplete {
		t.Fatalf("a well-formed cell: %+v, %v", v, err)
	}
	if err := s.Log.Append(&eventlog.Event{Kind: eventlog.CellCompleted, Cell: "c", Payload: []byte(
		`"completed"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Source().Cell("m", "c"); err == nil || !strings.Contains(err.Error(), "event 2 (CellCompleted)") {
		t.Errorf("fold of a CellCompleted whose payload is a string: %v; want an error naming event 2", err)
	}
}

// TestStagesReadOnlyDeclaredOutputsOfEarlierStages: every input a default
// stage declares is an output an earlier stage declares, and every table
// export offers is a declared output.
func TestStagesReadOnlyDeclaredOutputsOfEarlierStages(t *testing.T) {
	var declared []stages.Output
	for _, st := range cellStages(nil) {
		for _, in := range st.Inputs() {
			if !slices.Contains(declared, in) {
				t.Errorf("stage %s reads %s, which no earlier stage declares", st.Name(), in)
			}
		}
		for _, out := range st.Outputs() {
			if out.Stage != st.Name() {
				t.Errorf("stage %s declares an output of stage %s", st.Name(), out.Stage)
			}
		}
		declared = append(declared, st.Outputs()...)
	}
	for _, name := range report.CellTableNames() {
		src := report.TableSource(name)
		if !slices.Contains(declared, src) {
			t.Errorf("export table %s comes from %s, which no stage declares", name, src)
		}
	}
}
