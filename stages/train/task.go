package train

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/stages"
)

// task is what the training loop needs from the quadratic objective or a
// data set with its model.
type task interface {
	x0() []float32
	// grads returns the gradient function of round t (K local steps).
	grads(t, k int) algorithms.Grads
	// diverged reports a blown-up round: parameters that are not finite,
	// or (data sets) a mean mini-batch loss above the bound.
	diverged(x [][]float32) bool
	metrics(round int, x [][]float32) ([]float64, error)
}

func newTask(ctx context.Context, env *stages.Env, cfg *Params, engines Engines) (task, error) {
	if q := cfg.Task.Quadratic; !cfg.Task.Kind().Samples {
		return &quadratic{q: datasets.NewQuadratic(cfg.Workers, q.Dim, q.Zeta, q.Kappa, q.Sigma, uint64(cfg.Seed))}, nil
	}
	data, samplers, held, err := loadPartition(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	newEngine, err := engines.Host(cfg.Engine)
	if err != nil {
		return nil, err
	}
	engine, err := newEngine(cfg.Task.Model, data, uint64(cfg.Seed), env.Procs)
	if err != nil {
		return nil, err
	}
	t := &neural{engine: engine, data: data, samplers: samplers, batches: make([][]int, cfg.Workers),
		losses: make([]float64, cfg.Workers), lossBound: lossBound(data)}
	if cfg.Validation {
		val := data.Train.Subset(held, data.Shape)
		t.val = &val
	}
	return t, nil
}

// loadPartition loads a cell's data set and its workers' samplers from the
// partition stage's assignment: the samples each worker trains on, and
// those held out for validation (held, every worker's, in the
// assignment's order), which no sampler ever yields.
func loadPartition(
	ctx context.Context,
	env *stages.Env,
	cfg *Params,
) (data *datasets.Dataset, samplers []*sampler, held []int, err error) {
	if data, err = stages.LoadData(cfg.Task, env.Data); err != nil {
		return nil, nil, nil, err
	}
	tab, err := stages.ReadTable(ctx, env, stages.Assignment)
	if err != nil {
		return nil, nil, nil, err
	}
	workers, samples, validation := tab.Column("worker"), tab.Column("sample"), tab.Column(stages.ValidationColumn)
	if workers == nil || samples == nil {
		return nil, nil, nil, fmt.Errorf("train: the partition's assignment table lacks worker or sample columns")
	}
	parts := make([][]int, cfg.Workers)
	for r, w := range workers.Ints {
		if w < 0 || int(w) >= cfg.Workers {
			return nil, nil, nil, fmt.Errorf("train: the partition assigns a sample to worker %d of %d", w, cfg.Workers)
		}
		if validation != nil && validation.Ints[r] == 1 {
			held = append(held, int(samples.Ints[r]))
			continue
		}
		parts[w] = append(parts[w], int(samples.Ints[r]))
	}
	for i, p := range parts {
		if len(p) == 0 {
			return nil, nil, nil, fmt.Errorf(
				"train: worker %d holds no training samples; use fewer workers or another partition",
				i,
			)
		}
		samplers = append(samplers, &sampler{seed: uint64(cfg.Seed), worker: i, samples: p, size: cfg.BatchSize})
	}
	return data, samplers, held, nil
}

// lossBound is the mean mini-batch loss above which a data-set round has
// diverged: lossBoundFactor times the loss of a uniform guess.
func lossBound(data *datasets.Dataset) float64 {
	return lossBoundFactor * math.Log(float64(data.Classes))
}

// quadratic is the heterogeneous quadratic of docs/algorithms.md.
type quadratic struct{ q *datasets.Quadratic }

func (t *quadratic) x0() []float32 { return make([]float32, t.q.Dim) }

func (t *quadratic) grads(round, _ int) algorithms.Grads {
	return func(step int, x, g [][]float32) error {
		for i := range x {
			t.q.Grad(i, round, step, x[i], g[i])
		}
		return nil
	}
}

func (t *quadratic) diverged(x [][]float32) bool { return !finite(x) }

func (t *quadratic) metrics(round int, x [][]float32) ([]float64, error) {
	return evalQuadratic(t.q, round, x), nil
}

// lossBoundFactor sets the divergence bound of a data-set cell: a round
// whose mean mini-batch loss exceeds this many times the loss of a uniform
// guess, ln(classes), has diverged.
const lossBoundFactor = 100

// neural trains a model of package nn, on an engine of the cell's kind, on a partitioned data set.
type neural struct {
	engine    nn.Engine
	data      *datasets.Dataset
	val       *datasets.Split // the samples the workers hold out (validation), or nil
	samplers  []*sampler
	batches   [][]int
	losses    []float64
	lossSum   float64 // over the current round's workers and local steps
	lossCount int
	lossBound float64
}

func (t *neural) x0() []float32 {
	p := make([]float32, t.engine.Params())
	t.engine.Init(p)
	return p
}

func (t *neural) grads(round, k int) algorithms.Grads {
	t.lossSum, t.lossCount = 0, 0
	return func(step int, x, g [][]float32) error {
		for i, s := range t.samplers {
			t.batches[i] = s.batch(round*k + step)
		}
		if err := t.engine.Gradients(nn.Step{Round: round, Local: step}, x, g, t.batches, t.losses); err != nil {
			return err
		}
		for _, l := range t.losses {
			t.lossSum += l
		}
		t.lossCount += len(t.losses)
		return nil
	}
}

// trainLoss is the current round's mean mini-batch loss.
func (t *neural) trainLoss() float64 { return t.lossSum / float64(t.lossCount) }

func (t *neural) diverged(x [][]float32) bool {
	l := t.trainLoss()
	return !(l <= t.lossBound) || !finite(x)
}

func (t *neural) metrics(round int, x [][]float32) ([]float64, error) {
	row, err := evalNeural(t.engine, &t.data.Test, round, t.trainLoss(), x)
	if err != nil || t.val == nil {
		return row, err
	}
	v, err := evalValidation(t.engine, t.val, x)
	return append(row, v...), err
}

// sampler yields one worker's mini-batches: its samples reshuffled every
// local epoch from the stream (seed, "batches", worker, epoch) and cut into
// batches of size (an epoch's last batch may be smaller). batch(s) depends
// only on the step count s, so resuming needs no sampler state.
type sampler struct {
	seed    uint64
	worker  int
	samples []int
	size    int
	epoch   int
	perm    []int // the epoch's order; nil until the first batch
}

func (s *sampler) batch(step int) []int {
	per := (len(s.samples) + s.size - 1) / s.size
	epoch, b := step/per, step%per
	if s.perm == nil || epoch != s.epoch {
		// A new array each epoch: a batch handed out earlier stays as it
		// was (a round's K batches are gathered before any is used).
		s.perm = slices.Clone(s.samples)
		r := rng.New(s.seed, "batches", uint64(s.worker), uint64(epoch))
		r.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		s.epoch = epoch
	}
	return s.perm[b*s.size : min((b+1)*s.size, len(s.perm))]
}

func finite(x [][]float32) bool {
	for _, v := range x {
		for _, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return false
			}
		}
	}
	return true
}

// learningRate is eta for round t (from 0) under the cell's schedule.
func learningRate(cfg *Params, t int) float64 {
	sc := cfg.LRSchedule
	if sc == nil {
		return cfg.LR
	}
	if t < sc.Warmup {
		return cfg.LR * float64(t+1) / float64(sc.Warmup)
	}
	switch sc.Kind {
	case "step":
		lr := cfg.LR
		for _, m := range sc.Milestones {
			if t >= m {
				lr *= *sc.Gamma
			}
		}
		return lr
	case "cosine":
		return cfg.LR * 0.5 * (1 + math.Cos(math.Pi*float64(t-sc.Warmup)/float64(cfg.Rounds-sc.Warmup)))
	}
	return cfg.LR
}
