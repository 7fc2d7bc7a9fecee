//go:build xla

package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/optimizers"
	"github.com/ump-lab/ump/stages"
)

// testBackend is the GoMLX backend the cohort tests run on:
// $GOMLX_BACKEND (on a GPU host, xla:/abs/path/xla_cuda_plugin.so), else
// GoMLX's pure-Go backend with its ops run one after another (run in
// parallel, its worker pool can deadlock). testDevice opens it once.
var (
	testBackend = cmp.Or(os.Getenv("GOMLX_BACKEND"), gpu.GoBackend)
	testDevice  = gpu.NewDevice(testBackend)
)

// onGoBackend: the tests run on GoMLX's pure-Go backend, where a cell's
// numbers do not depend on its cohort's size; on a GPU they do, at float
// rounding (cuBLAS picks kernels by shape).
func onGoBackend() bool { return strings.HasPrefix(testBackend, "go") }

// TestMain sets the GPU engine's environment, as ump's main does, and says
// which backend the cohort tests run on.
func TestMain(m *testing.M) {
	gpu.SetEnvironment()
	fmt.Fprintf(os.Stderr, "pipeline: GPU cohort tests on GoMLX backend %q\n", testBackend)
	os.Exit(m.Run())
}

// cohortManifest is a GPU sweep of three cells that share their shapes
// (LR is replaced per test).
const cohortManifest = `version: 1
name: cohort
task: {dataset: synthetic, model: mlp}
engine: gpu
workers: 4
rounds: 12
local_steps: 2
batch_size: 16
lr: 0.1
topology: {kind: ring}
partition: {kind: dirichlet, alpha: 1}
algorithm: {name: gt-dsum, alpha: 2, beta: 0.5, lambda: 0.8}
evaluate: {every: 3}
checkpoint: {every: 2}
sweep:
  lr: LRS
`

// runCohort runs a plan on a fresh store with cohorts of size cells (on
// testBackend) and returns the store.
func runCohort(t *testing.T, plan *manifests.Plan, size int, ctx context.Context) (*Store, Outcome, error) {
	t.Helper()
	s := openTestStore(t)
	r := &Runner{
		Log:     s.Log,
		Blobs:   s.Blobs,
		Dir:     s.Path,
		Stages:  cellStages(testDevice),
		Engines: engines.Set{Device: testDevice},
		Data:    datasets.NewLibrary(t.TempDir()),
		Cohort:  size,
	}
	out, err := r.Run(ctx, plan)
	return s, out, err
}

// trainDigests are each cell's train output digests (rounds table and
// final checkpoint), "" for a cell without them.
func trainDigests(t *testing.T, s *Store, hash string) []string {
	t.Helper()
	var out []string
	for _, c := range reportOf(t, s, hash).Cells {
		rounds, ok1 := c.Output(stages.Rounds)
		checkpoint, ok2 := c.Output(stages.LastCheckpoint)
		if !ok1 || !ok2 {
			out = append(out, "")
			continue
		}
		out = append(out, rounds.Digest+" "+checkpoint.Digest)
	}
	return out
}

// TestCohortCellsEqualCellsAlone: three GPU cells trained in one cohort
// record exactly the tables and checkpoints (same digests, same cell
// keys) they record one at a time (on GoMLX's Go backend; on a GPU they
// differ at float rounding), and ump verify (which recomputes each cell in
// a cohort of the size it trained in) agrees.
func TestCohortCellsEqualCellsAlone(t *testing.T) {
	plan := parse(t, strings.Replace(cohortManifest, "LRS", "[0.05, 0.1, 0.2]", 1))
	together, out, err := runCohort(t, plan, 3, context.Background())
	if err != nil || out.Completed != 3 {
		t.Fatalf("cohort of 3: %+v %v", out, err)
	}
	alone, out, err := runCohort(t, plan, 1, context.Background())
	if err != nil || out.Completed != 3 {
		t.Fatalf("one at a time: %+v %v", out, err)
	}
	a, b := trainDigests(t, together, plan.Hash), trainDigests(t, alone, plan.Hash)
	for i := range a {
		if a[i] == "" || (onGoBackend() && a[i] != b[i]) {
			t.Errorf("cell %d: train outputs %q in a cohort, %q alone", i+1, a[i], b[i])
		}
	}
	for i, c := range reportOf(t, together, plan.Hash).Cells { // the runner's seats put them in one
		var ran stages.RunSettings
		if st := c.Stage(stages.Train); st == nil || st.Result == nil ||
			json.Unmarshal(st.Result.Summary, &ran) != nil ||
			ran.Cohort != 3 {
			t.Errorf("cell %d trained in a cohort of %d; want 3, the runner's", i+1, ran.Cohort)
		}
	}
	reg, err := together.Source().FindManifest(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := (&Runner{Log: together.Log, Blobs: together.Blobs, Stages: cellStages(testDevice),
		Engines: engines.Set{Device: testDevice}, Data: datasets.NewLibrary(t.TempDir())}).Verify(
		context.Background(),
		reg,
		nil,
		false,
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Err != nil {
			t.Errorf("verify cell %d: %v", c.Index+1, c.Err)
		}
		for _, o := range c.Checks {
			if o.Recorded != o.Got {
				t.Errorf(
					"verify cell %d: %s/%s recomputed as %s, recorded %s",
					c.Index+1,
					o.Stage,
					o.Output,
					o.Got,
					o.Recorded,
				)
			}
		}
	}
}

// TestCohortFreezesADivergedCell: a cell that diverges in a cohort is
// recorded as diverged while the others finish with exactly the results
// they get in a cohort of the same size beside a cell that does not.
func TestCohortFreezesADivergedCell(t *testing.T) {
	plan := parse(t, strings.Replace(cohortManifest, "LRS", "[0.05, 1000, 0.2]", 1))
	s, out, err := runCohort(t, plan, 3, context.Background())
	if err != nil || out.Completed != 2 || out.Diverged != 1 {
		t.Fatalf("cohort with a diverging cell: %+v %v", out, err)
	}
	ref := parse(t, strings.Replace(cohortManifest, "LRS", "[0.05, 0.1, 0.2]", 1))
	beside, out, err := runCohort(t, ref, 3, context.Background())
	if err != nil || out.Completed != 3 {
		t.Fatalf("reference: %+v %v", out, err)
	}
	got, want := trainDigests(t, s, plan.Hash), trainDigests(t, beside, ref.Hash)
	if got[0] != want[0] || got[2] != want[2] {
		t.Errorf("the other cells' outputs changed: %q %q, want %q %q", got[0], got[2], want[0], want[2])
	}
}

// TestCohortResumesEachCellFromItsCheckpoint: a cohort interrupted in the
// middle of training resumes every cell from its own last checkpoint and
// ends with exactly the outputs of an uninterrupted run.
func TestCohortResumesEachCellFromItsCheckpoint(t *testing.T) {
	plan := parse(
		t,
		strings.Replace(strings.Replace(cohortManifest, "LRS", "[0.05, 0.1, 0.2]", 1), "rounds: 12", "rounds: 60", 1),
	)
	s := openTestStore(t)
	lib := datasets.NewLibrary(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // interrupt once some cell has checkpointed after round 4
		defer cancel()
		for ctx.Err() == nil {
			evs, _ := s.Log.ByKind(eventlog.RoundCompleted)
			for _, ev := range evs {
				if ev.Round >= 4 && ev.Outputs["checkpoint"].Digest != "" {
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	r := &Runner{
		Log:     s.Log,
		Blobs:   s.Blobs,
		Dir:     s.Path,
		Stages:  cellStages(testDevice),
		Engines: engines.Set{Device: testDevice},
		Data:    lib,
		Cohort:  3,
	}
	out, err := r.Run(ctx, plan)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("the run was not interrupted (%+v, %v): make it longer", out, err)
	}
	evs, _ := s.Log.ByKind(eventlog.RoundCompleted)
	last := map[string]int{}
	for _, ev := range evs {
		last[ev.Cell] = max(last[ev.Cell], ev.Round)
	}
	unfinished := false
	for _, r := range last {
		unfinished = unfinished || r < 60
	}
	if !unfinished || len(last) == 0 {
		t.Fatalf("interrupted with cells at rounds %v: nothing left to resume", last)
	}
	t.Logf("interrupted with cells at rounds %v", last)
	out, err = r.Run(context.Background(), plan)
	if err != nil || out.Completed != 3 {
		t.Fatalf("resumed run: %+v %v", out, err)
	}
	whole, out, err := runCohort(t, plan, 3, context.Background())
	if err != nil || out.Completed != 3 {
		t.Fatalf("uninterrupted run: %+v %v", out, err)
	}
	got, want := trainDigests(t, s, plan.Hash), trainDigests(t, whole, plan.Hash)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("cell %d: resumed outputs %q, uninterrupted %q", i+1, got[i], want[i])
		}
	}
}

// agreementManifest is a sweep whose small workers wrap their local epoch
// several times (Dirichlet 0.5 over 6 workers, batch 32, K local steps
// per round, 30 rounds), evaluated every round; ENGINE, K and ALGORITHMS
// are filled in.
const agreementManifest = `version: 1
name: agreement
task: {dataset: synthetic, model: mlp, synthetic: {train: 1500, test: 500}}
engine: ENGINE
workers: 6
rounds: 30
local_steps: K
batch_size: 32
lr: 0.05
topology: {kind: ring}
partition: {kind: dirichlet, alpha: 0.5}
algorithm: {name: dpsgd}
evaluate: {every: 1}
checkpoint: {every: 10}
sweep:
  algorithm:
ALGORITHMS`

// familySweep lists, for every given algorithm, a sweep entry for every
// combination of its choice and boolean parameters (the others at their
// defaults; beta 0.5 where the algorithm takes it, so that every GT-DSUM
// reading is stable), split by the local steps each takes: 3, or 1 for
// those defined for one step only.
func familySweep(family []kinds.Kind[*algorithms.Rules]) map[int][]string {
	out := map[int][]string{}
	for _, k := range family {
		entries := []string{"name: " + k.Name}
		if _, ok := k.Param("beta"); ok {
			entries[0] += ", beta: 0.5"
		}
		for _, p := range k.Params {
			var values []string
			switch {
			case p.Type == kinds.String:
				values = p.Choices
			case p.Type == kinds.Bool:
				values = []string{"false", "true"}
			default:
				continue
			}
			var next []string
			for _, e := range entries {
				for _, v := range values {
					next = append(next, fmt.Sprintf("%s, %s: %s", e, p.Name, v))
				}
			}
			entries = next
		}
		steps := 3
		if len(k.Validate(kinds.Values{}, kinds.Cell{LocalSteps: steps})) > 0 {
			steps = 1
		}
		for _, e := range entries {
			out[steps] = append(out[steps], "    - {"+e+"}")
		}
	}
	return out
}

// checkAgreement trains every combination of the algorithms' choices
// (familySweep) for 30 rounds on the agreement manifest on both engines
// (the GPU one in cohorts, on testBackend) and checks every figure
// of every round: within 1e-5 relative (the consensus distance 1e-4). It
// returns the GPU engine's rounds table.
func checkAgreement(t *testing.T, family []kinds.Kind[*algorithms.Rules]) *artifacts.Table {
	var last *artifacts.Table
	for steps, entries := range familySweep(family) {
		src := strings.NewReplacer("K", fmt.Sprint(steps), "ALGORITHMS", strings.Join(entries, "\n")+"\n").
			Replace(agreementManifest)
		run := func(engine string) *artifacts.Table {
			plan := parse(t, strings.Replace(src, "ENGINE", engine, 1))
			s, out, err := runCohort(t, plan, 0, context.Background())
			if err != nil || out.Completed != len(plan.Cells) {
				t.Fatalf("engine %s, K=%d: %+v %v", engine, steps, out, err)
			}
			return exportTable(t, s, plan.Hash, "rounds")
		}
		cpu, gpu := run("cpu"), run("gpu")
		if cpu.Rows() != gpu.Rows() || cpu.Rows() != 30*len(entries) {
			t.Fatalf("K=%d: %d rows on the CPU, %d on the GPU, want %d", steps, cpu.Rows(), gpu.Rows(), 30*len(entries))
		}
		worst := map[string]float64{}
		for _, want := range cpu.Columns {
			got := gpu.Column(want.Name)
			if want.Floats == nil || want.Name == "wall_seconds" {
				continue
			}
			for row, w := range want.Floats {
				g := got.Floats[row]
				if math.IsNaN(w) &&
					math.IsNaN(g) { // a figure the algorithm has not (bits of a vector it does not send)
					continue
				}
				d := math.Abs(g-w) / max(math.Abs(w), 1e-6)
				worst[want.Name] = max(worst[want.Name], d)
				tol := 1e-5
				if want.Name == "consensus_distance" {
					// mean_i |x_i - xbar|^2 of nearly equal models: the
					// engines' rounding of x (1e-7) is amplified by the
					// difference (DSGT: 6e-5 by round 25).
					tol = 1e-4
				}
				if !(d <= tol) {
					t.Errorf(
						"K=%d %s, round %d: %s = %.9g on the GPU, %.9g on the CPU",
						steps,
						entries[row/30],
						row%30+1,
						want.Name,
						g,
						w,
					)
				}
			}
		}
		t.Logf("K=%d: worst relative difference per figure: %v", steps, worst)
		last = gpu
	}
	return last
}

// TestCohortAgreesWithCPUOverWholeRuns: every algorithm of the family,
// under every combination of its choices, trained for 30 rounds on a
// Dirichlet partition whose small workers wrap their epoch several times,
// records the same figures in every evaluated round on the GPU engine as
// on the CPU engine (checkAgreement). Until the samplers handed out a new
// array each epoch, a round whose K batches crossed an epoch's end trained
// the GPU cells on the next epoch's samples (4e-2 from that round on).
func TestCohortAgreesWithCPUOverWholeRuns(t *testing.T) {
	checkAgreement(t, algorithms.Family.Kinds)
}

// dampedGossip is an algorithm that exists only in this test, declared as
// README "Adding an algorithm" says: one kinds.Kind with its parameters and
// its Rules. Heavy-ball steps with a momentum of its own parameter,
// then gossip of x and of the momentum. Its local steps are a plain Go
// loop, which the GPU program unrolls (the family's use s.Steps, a loop
// in the program).
var dampedGossip = kinds.Kind[*algorithms.Rules]{
	Name: "test-damped-gossip", Doc: "heavy ball with a gossiped, damped momentum (a test's)",
	Params: []kinds.Param{{Name: "damping", Type: kinds.Float, Range: "[0, 1)", Default: 0.6, Doc: "the momentum"}},
	New: &algorithms.Rules{
		Vectors: []algorithms.Vector{{Name: "x", FromX0: true}, {Name: "m"}},
		Round: func(s algorithms.Space, k int) {
			damping := s.Num(
				func(c algorithms.Config, _ algorithms.At) float32 { return float32(c.Params.Float("damping")) },
			)
			eta := s.Num(func(_ algorithms.Config, at algorithms.At) float32 { return float32(at.LR) })
			for tau := range k {
				g := algorithms.Gradient(s, tau)
				m := s.Add(s.Scale(damping, s.Get("m")), g)
				s.Set("m", m)
				s.Set("x", s.Sub(s.Get("x"), s.Scale(eta, m)))
			}
			s.Set("x", s.Mix("x", s.Get("x")))
			s.Set("m", s.Mix("m", s.Get("m")))
		},
	},
}

// TestCohortRunsANewAlgorithm: an algorithm declared in optimizers.Family
// and bound to its rules in algorithms.Family (and nowhere else) trains on both engines with the same figures in every
// round, and on the GPU it does train: accuracy rises, the workers' models
// differ, and both vectors it gossips are counted (m, which has no column
// of its own, in bits_sent_per_worker).
func TestCohortRunsANewAlgorithm(t *testing.T) {
	declared, bound := optimizers.Family.Kinds, algorithms.Family.Kinds
	optimizers.Family.Kinds = append(
		slices.Clip(declared),
		kinds.Kind[struct{}]{Name: dampedGossip.Name, Doc: dampedGossip.Doc, Params: dampedGossip.Params},
	)
	algorithms.Family.Kinds = append(slices.Clip(bound), dampedGossip)
	t.Cleanup(func() { optimizers.Family.Kinds, algorithms.Family.Kinds = declared, bound })
	gpu := checkAgreement(t, []kinds.Kind[*algorithms.Rules]{dampedGossip})
	acc, distance := gpu.Column("test_acc_mean").Floats, gpu.Column("consensus_distance").Floats
	if !(acc[len(acc)-1] > acc[0]+0.1) || !(distance[len(distance)-1] > 0) {
		t.Errorf(
			"on the GPU, accuracy went from %.3f to %.3f and the consensus distance ends at %g: it did not train",
			acc[0],
			acc[len(acc)-1],
			distance[len(distance)-1],
		)
	}
	last := len(acc) - 1
	if x, all := gpu.Column("bits_x").Floats[last], gpu.Column("bits_sent_per_worker").Floats[last]; !(x > 0 &&
		all == 2*x) {
		t.Errorf("the GPU engine counted %g bits of x and %g in all: the momentum it gossips is not counted", x, all)
	}
}
