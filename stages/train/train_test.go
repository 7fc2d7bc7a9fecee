package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
)

func TestSamplerCoversEachEpochOnce(t *testing.T) {
	samples := []int{3, 8, 11, 12, 20, 21, 40, 41, 42, 99}
	s := &sampler{seed: 7, worker: 2, samples: samples, size: 4}
	var epochs [][]int
	for step := 0; step < 9; step++ { // 3 batches per epoch: 4, 4, 2
		b := s.batch(step)
		if want := []int{4, 4, 2}[step%3]; len(b) != want {
			t.Fatalf("step %d: batch of %d, want %d", step, len(b), want)
		}
		if step%3 == 0 {
			epochs = append(epochs, nil)
		}
		epochs[len(epochs)-1] = append(epochs[len(epochs)-1], b...)
	}
	for e, got := range epochs {
		sorted := slices.Sorted(slices.Values(got))
		if !slices.Equal(sorted, samples) {
			t.Errorf("epoch %d drew %v, want each of %v once", e, got, samples)
		}
	}
	if slices.Equal(epochs[0], epochs[1]) {
		t.Errorf("epochs 0 and 1 have the same order %v", epochs[0])
	}
	// A fresh sampler (a resumed run) gives the same batch for a step.
	fresh := &sampler{seed: 7, worker: 2, samples: samples, size: 4}
	if got, want := fresh.batch(7), s.batch(7); !slices.Equal(got, want) {
		t.Errorf("resumed sampler: step 7 = %v, want %v", got, want)
	}
	other := &sampler{seed: 7, worker: 3, samples: samples, size: 4}
	if slices.Equal(other.batch(0), (&sampler{seed: 7, worker: 2, samples: samples, size: 4}).batch(0)) {
		t.Error("workers 2 and 3 share a shuffle")
	}
}

func TestLearningRateSchedules(t *testing.T) {
	gamma := 0.5
	for _, c := range []struct {
		sc   *manifests.Schedule
		want []float64 // rounds 0..9 at lr 0.1
	}{
		{nil, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}},
		{&manifests.Schedule{Kind: "constant", Warmup: 4}, []float64{0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
			0.1}},
		{&manifests.Schedule{Kind: "step", Milestones: []int{3, 6}, Gamma: &gamma}, []float64{0.1, 0.1, 0.1, 0.05,
			0.05, 0.05, 0.025, 0.025, 0.025, 0.025}},
		{&manifests.Schedule{Kind: "cosine", Warmup: 2}, []float64{0.05, 0.1, 0.1, half(1), half(2), half(3), 0.05,
			half(5), half(6), half(7)}},
	} {
		cfg := &Params{LR: 0.1, Rounds: 10, LRSchedule: c.sc}
		for r, want := range c.want {
			if got := learningRate(cfg, r); math.Abs(got-want) > 1e-15 {
				t.Errorf("%+v round %d: lr %g, want %g", c.sc, r, got, want)
			}
		}
	}
}

// half is the cosine schedule at lr 0.1 k/8 of the way after the warmup.
func half(k int) float64 { return 0.1 * 0.5 * (1 + math.Cos(math.Pi*float64(k)/8)) }

// runTrain runs the stage on cell cfg with the CPU engine, as package
// engines hands it over on a machine without a GPU.
func runTrain(ctx context.Context, cfg *manifests.Manifest, env *stages.Env) (*stages.Result, error) {
	host := func(model string, data *datasets.Dataset, seed uint64, _ int) (nn.Engine, error) {
		return cpu.New(model, data, seed)
	}
	st := Stage{Engines: testEngines{host: host}}
	return st.Run(ctx, st.Params(cfg), env)
}

// quadraticRun parses a one-cell manifest, runs its topology stage in
// memory and returns the cell's configuration and the train stage's
// environment (its store the memory, Report a no-op).
func quadraticRun(t *testing.T, src string) (*manifests.Manifest, *artifacts.Memory, *stages.Env) {
	t.Helper()
	plan, err := manifests.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &plan.Cells[0].Config
	mem := artifacts.NewMemory()
	mixing, err := topology.Stage{}.Run(context.Background(), topology.Stage{}.Params(cfg), &stages.Env{Store: mem})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, mem, &stages.Env{
		Every:    stages.EveryOf(cfg),
		Store:    mem,
		Upstream: map[string]*stages.Result{stages.Topology: mixing},
		Report:   func(record.RoundReport) error { return nil },
	}
}

// TestEvaluatesEveryAndAtTheLastRound runs the stage after the topology
// stage on a quadratic: evaluate.every 2 of 5 rounds gives rows for
// rounds 2, 4 and 5.
func TestEvaluatesEveryAndAtTheLastRound(t *testing.T) {
	ctx := context.Background()
	cfg, _, env := quadraticRun(t, `version: 1
name: t
task: {dataset: quadratic, quadratic: {dim: 5}}
workers: 3
rounds: 5
lr: 0.1
algorithm: {name: d-sum}
evaluate: {every: 2}
`)
	res, err := runTrain(ctx, cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	env.Upstream = map[string]*stages.Result{stages.Train: res}
	rounds, err := stages.ReadTable(ctx, env, stages.Rounds)
	if err != nil {
		t.Fatal(err)
	}
	if got := rounds.Column("round").Ints; !slices.Equal(got, []int64{2, 4, 5}) {
		t.Errorf("evaluated rounds %v; want [2 4 5]", got)
	}
}

// TestDivergedAtAHundredUniformGuesses: a data-set round diverges when
// its mean mini-batch loss passes 100 ln(classes) (README), or its
// parameters are not finite.
func TestDivergedAtAHundredUniformGuesses(t *testing.T) {
	data := &datasets.Dataset{Classes: 10}
	bound := 100 * math.Log(10)
	for _, c := range []struct {
		loss     float64
		x        float32
		diverged bool
	}{{0.99 * bound, 1, false}, {1.01 * bound, 1, true}, {math.NaN(), 1, true}, {1, float32(math.Inf(1)), true}} {
		task := &neural{lossSum: 4 * c.loss, lossCount: 4, lossBound: lossBound(data)}
		if got := task.diverged([][]float32{{0, c.x}}); got != c.diverged {
			t.Errorf(
				"mean loss %.4g (bound %.4g), parameter %v: diverged %v; want %v",
				c.loss,
				bound,
				c.x,
				got,
				c.diverged,
			)
		}
	}
}

// TestRoundsMixWithTheirOwnMatrix: a run on a schedule that switches
// (mesh-to-ring on 4 workers over 4 rounds: the full mesh in rounds 1-2,
// the ring in 3-4) ends in the state of the same algorithm run round by
// round with those matrices, written here by hand (Metropolis-Hastings:
// 1/4 everywhere on the mesh; 1/3 for self and each neighbour on the ring).
func TestRoundsMixWithTheirOwnMatrix(t *testing.T) {
	ctx := context.Background()
	cfg, mem, env := quadraticRun(t, `version: 1
name: t
task: {dataset: quadratic, quadratic: {dim: 6}}
workers: 4
rounds: 4
local_steps: 2
lr: 0.05
topology: {kind: mesh-to-ring, weights: metropolis-hastings}
algorithm: {name: d-sum}
evaluate: {every: 4}
checkpoint: {every: 4}
`)
	got := finalState(t, ctx, mem, cfg, env)
	matrix := func(w [][]float64) algorithms.Mixing {
		m, err := algorithms.NewMixing(w)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	q := 0.25
	mesh := matrix([][]float64{{q, q, q, q}, {q, q, q, q}, {q, q, q, q}, {q, q, q, q}})
	r := 1.0 / 3
	ring := matrix([][]float64{{r, r, 0, r}, {r, r, r, 0}, {0, r, r, r}, {r, 0, r, r}})
	want := optimizerState(t, cfg, []algorithms.Mixing{mesh, mesh, ring, ring}, []float64{0.05, 0.05, 0.05, 0.05})
	sameState(t, got, want, "with the mesh in rounds 1-2 and the ring in 3-4")
}

// finalState runs the train stage of env and decodes its final checkpoint.
func finalState(
	t *testing.T,
	ctx context.Context,
	mem *artifacts.Memory,
	cfg *manifests.Manifest,
	env *stages.Env,
) *TrainState {
	t.Helper()
	res, err := runTrain(ctx, cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	data, err := mem.Get(ctx, res.Outputs[stages.LastCheckpoint.Name])
	if err != nil {
		t.Fatal(err)
	}
	st, err := DecodeTrainState(data)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// optimizerState runs a quadratic cell's optimizer directly, round r
// mixing with mixes[r] at rate lrs[r] (K = cfg's local steps), and returns
// its state.
func optimizerState(
	t *testing.T,
	cfg *manifests.Manifest,
	mixes []algorithms.Mixing,
	lrs []float64,
) map[string][][]float32 {
	t.Helper()
	quad := cfg.Task.Quadratic
	task := datasets.NewQuadratic(cfg.Workers, quad.Dim, quad.Zeta, quad.Kappa, quad.Sigma, uint64(cfg.Seed))
	p := Stage{}.Params(cfg)
	opt, err := algorithms.New(algorithmConfig(&p), cfg.Workers, make([]float32, quad.Dim))
	if err != nil {
		t.Fatal(err)
	}
	for round, mix := range mixes {
		err := opt.Round(
			&algorithms.Round{
				T:   round,
				K:   cfg.LocalSteps,
				LR:  lrs[round],
				Mix: mix,
				Grad: func(step int, x, g [][]float32) error {
					for i := range x {
						task.Grad(i, round, step, x[i], g[i])
					}
					return nil
				},
			},
		)
		if err != nil {
			t.Fatal(err)
		}
	}
	return opt.State()
}

// sameState checks a checkpoint's vectors against an optimizer's, bit for
// bit; how says how the optimizer ran.
func sameState(t *testing.T, got *TrainState, want map[string][][]float32, how string) {
	t.Helper()
	for name, w := range want {
		for i := range w {
			if !slices.Equal(got.Vectors[name][i], w[i]) {
				t.Fatalf("%s of worker %d is %v; %s, %v", name, i, got.Vectors[name][i], how, w[i])
			}
		}
	}
}

// TestResumeFromADivergedCheckpoint: a run that diverges writes a
// checkpoint at its diverged round; resumed from it (a run killed before
// its end was recorded), the stage ends as the uninterrupted run did: the
// same diverged round, rounds table and summary.
func TestResumeFromADivergedCheckpoint(t *testing.T) {
	ctx := context.Background()
	cfg, _, env := quadraticRun(t, `version: 1
name: t
task: {dataset: quadratic, quadratic: {dim: 6}}
workers: 4
rounds: 60
local_steps: 2
lr: 5
algorithm: {name: d-sum}
evaluate: {every: 3}
checkpoint: {every: 4}
`)
	var last record.RoundReport
	env.Report = func(r record.RoundReport) error {
		if r.Checkpoint != nil {
			last = r
		}
		return nil
	}
	whole, err := runTrain(ctx, cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	if !whole.Diverged || last.Round == 0 || last.Round == cfg.Rounds {
		t.Fatalf(
			"the run should diverge before round %d (diverged %v, last checkpoint after round %d); raise lr",
			cfg.Rounds,
			whole.Diverged,
			last.Round,
		)
	}
	env.Resume = &stages.Checkpoint{Round: last.Round, Ref: *last.Checkpoint}
	resumed, err := runTrain(ctx, cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	if !resumed.Diverged || resumed.Outputs[stages.Rounds.Name] != whole.Outputs[stages.Rounds.Name] ||
		string(resumed.Summary) != string(whole.Summary) {
		t.Errorf(
			"resumed after the diverged round %d: diverged %v, rounds %v, summary %s; the whole run: diverged %v, "+
				"rounds %v, summary %s",
			last.Round,
			resumed.Diverged,
			resumed.Outputs[stages.Rounds.Name],
			resumed.Summary,
			whole.Diverged,
			whole.Outputs[stages.Rounds.Name],
			whole.Summary,
		)
	}
}

// TestValidationSamplesNeverReachTraining runs the partition stage with
// validation: {fraction: 0.25} on the synthetic data set and loads the
// train stage's samplers from its assignment: each worker holds out
// round(F × n) of its n samples, no batch of any sampler, over several
// epochs, ever yields one of them, and the held-out samples are what the
// validation split is built from.
func TestValidationSamplesNeverReachTraining(t *testing.T) {
	plan, err := manifests.Parse("v.yaml", []byte(`version: 1
name: v
task: {dataset: synthetic}
workers: 4
rounds: 2
lr: 0.1
batch_size: 16
partition: {kind: dirichlet, alpha: 0.5}
algorithm: {name: d-sum}
validation: {fraction: 0.25}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &plan.Cells[0].Config
	ctx, mem, lib := context.Background(), artifacts.NewMemory(), datasets.NewLibrary("")
	part, err := partition.Stage{}.Run(ctx, partition.Stage{}.Params(cfg), &stages.Env{Store: mem, Data: lib})
	if err != nil {
		t.Fatal(err)
	}
	env := &stages.Env{
		Every:    stages.EveryOf(cfg),
		Store:    mem,
		Data:     lib,
		Upstream: map[string]*stages.Result{stages.Partition: part},
	}
	p := Stage{}.Params(cfg)
	data, samplers, held, err := loadPartition(ctx, env, &p)
	if err != nil {
		t.Fatal(err)
	}
	isHeld := map[int]bool{}
	for _, s := range held {
		isHeld[s] = true
	}
	total := 0
	for _, sp := range samplers {
		n := len(sp.samples)
		for _, s := range sp.samples {
			if isHeld[s] {
				t.Errorf("worker %d trains on sample %d, which is held out", sp.worker, s)
			}
		}
		for step := 0; step < 4*n/sp.size+4; step++ {
			for _, s := range sp.batch(step) {
				if isHeld[s] {
					t.Fatalf("worker %d's batch %d holds sample %d, which is held out", sp.worker, step, s)
				}
			}
		}
		total += n
	}
	if len(held) == 0 || total+len(held) != data.Train.Len() {
		t.Errorf("%d samples train and %d are held out, of %d", total, len(held), data.Train.Len())
	}
	if want := math.Round(0.25 * float64(data.Train.Len())); math.Abs(float64(len(held))-want) > float64(cfg.Workers) {
		t.Errorf(
			"%d held out of %d; want about a quarter (%v, each worker's share rounded)",
			len(held),
			data.Train.Len(),
			want,
		)
	}
}

// TestScheduleTimesTheRounds: with a learning-rate schedule, round t of a
// run trains at the rate the schedule gives round t (warmup 2, milestones
// 2 and 4, gamma 0.5 at lr 0.1: 0.05, 0.1, 0.05, 0.05, 0.025, 0.025,
// written out by hand): the stage's state after six rounds is bit for bit
// the optimizer's, run here at those rates.
func TestScheduleTimesTheRounds(t *testing.T) {
	ctx := context.Background()
	cfg, mem, env := quadraticRun(t, `version: 1
name: t
task: {dataset: quadratic, quadratic: {dim: 6}}
workers: 3
rounds: 6
local_steps: 2
lr: 0.1
lr_schedule: {kind: step, warmup: 2, milestones: [2, 4], gamma: 0.5}
algorithm: {name: dpsgd}
topology: {kind: ring, weights: metropolis-hastings}
evaluate: {every: 6}
checkpoint: {every: 6}
`)
	got := finalState(t, ctx, mem, cfg, env)
	r := 1.0 / 3
	ring, err := algorithms.NewMixing([][]float64{{r, r, r}, {r, r, r}, {r, r, r}})
	if err != nil {
		t.Fatal(err)
	}
	want := optimizerState(
		t,
		cfg,
		[]algorithms.Mixing{ring, ring, ring, ring, ring, ring},
		[]float64{0.05, 0.1, 0.05, 0.05, 0.025, 0.025},
	)
	sameState(t, got, want, "at the schedule's rates, round by round")
}

// TestAnInterruptInTheFinalRoundLetsTheCellFinish: an interrupt that
// comes during the last round lets it end, and the stage completes (its
// result, not ErrInterrupted); one during an earlier round stops after it,
// with ErrInterrupted.
func TestAnInterruptInTheFinalRoundLetsTheCellFinish(t *testing.T) {
	for _, at := range []int{3, 2} {
		cfg, _, env := quadraticRun(t, `version: 1
name: t
task: {dataset: quadratic, quadratic: {dim: 5}}
workers: 3
rounds: 3
local_steps: 2
lr: 0.1
algorithm: {name: d-sum}
`)
		ctx, cancel := context.WithCancel(context.Background())
		env.Step = func(round, step, steps int) {
			if round == at && step == 1 {
				cancel()
			}
		}
		res, err := runTrain(ctx, cfg, env)
		cancel()
		switch {
		case at == 3 && (err != nil || res == nil):
			t.Errorf("interrupted in the final round: %v; want the stage to complete", err)
		case at < 3 && !errors.Is(err, stages.ErrInterrupted):
			t.Errorf("interrupted in round %d of 3: %v; want ErrInterrupted", at, err)
		}
	}
}

// testEngines are the train stage's engines in its tests: host as the CPU
// engine, and a cohort program, never built, for each kind of cohorts.
type testEngines struct {
	host    NewEngine
	cohorts []string
}

func (e testEngines) Host(kind string) (NewEngine, error) {
	if kind != "" || e.host == nil {
		return nil, fmt.Errorf("train: no engine of kind %q in this test", kind)
	}
	return e.host, nil
}

func (e testEngines) Cohort(kind string) NewCohort {
	if !slices.Contains(e.cohorts, kind) {
		return nil
	}
	return func(*datasets.Dataset, nn.CohortShape) (nn.Cohort, error) {
		return nil, errors.New("no cohort program is built in this test")
	}
}
