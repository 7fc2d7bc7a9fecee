package train

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/compress"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/mixing"
	"github.com/ump-lab/ump/tasks"
)

// Stage trains a cell on the engine of its kind among Engines (a GPU
// cell without compression in the cohort of its Env.Seat, or in one of
// its own).
type Stage struct {
	Engines Engines
}

var _ stages.Step[Params] = Stage{}
var _ stages.FormerlyKeyed = Stage{}

func (Stage) Name() string             { return stages.Train }
func (Stage) Version() int             { return 3 }
func (Stage) Inputs() []stages.Output  { return []stages.Output{stages.Assignment, stages.Mixing} }
func (Stage) Outputs() []stages.Output { return []stages.Output{stages.Rounds, stages.LastCheckpoint} }

// Params is what the stage reads of a cell: its fields keep the
// manifest's names and JSON keys. The partition (the share validation
// holds out among them) and the topology come as their stages' outputs;
// how often to evaluate and checkpoint comes as Env.Every, which cannot
// change the trained model's bits.
type Params struct {
	Task        manifests.Task         `json:"task"`
	Engine      string                 `json:"engine,omitempty"`
	Workers     int                    `json:"workers"`
	Rounds      int                    `json:"rounds"`
	LocalSteps  int                    `json:"local_steps"`
	BatchSize   int                    `json:"batch_size,omitempty"`
	LR          float64                `json:"lr"`
	LRSchedule  *manifests.Schedule    `json:"lr_schedule,omitempty"`
	Algorithm   manifests.Algorithm    `json:"algorithm"`
	WeightDecay float64                `json:"weight_decay,omitempty"`
	Compression *manifests.Compression `json:"compression,omitempty"`
	Seed        int                    `json:"seed"`
	// Validation says whether workers hold samples out, which adds the
	// validation columns.
	Validation bool `json:"validation,omitempty"`
}

func (Stage) Params(cfg *manifests.Manifest) Params {
	return Params{
		Task:        cfg.Task,
		Engine:      cfg.Engine,
		Workers:     cfg.Workers,
		Rounds:      cfg.Rounds,
		LocalSteps:  cfg.LocalSteps,
		BatchSize:   cfg.BatchSize,
		LR:          cfg.LR,
		LRSchedule:  cfg.LRSchedule,
		Algorithm:   cfg.Algorithm,
		WeightDecay: cfg.WeightDecay,
		Compression: cfg.Compression,
		Seed:        cfg.Seed,
		Validation:  cfg.Validation != nil,
	}
}

// FormerParams are what the key held before stages declared exactly what
// they read: the whole cell configuration but its name and how often to
// evaluate and checkpoint.
func (Stage) FormerParams(cfg *manifests.Manifest) json.RawMessage {
	c := *cfg
	c.Name, c.Evaluate, c.Checkpoint = "", manifests.Evaluate{}, manifests.Checkpoint{}
	return manifests.CanonicalJSON(c)
}

// Summary is the stage's JSON summary.
type Summary struct {
	Rounds        int `json:"rounds"` // rounds completed
	DivergedRound int `json:"diverged_round,omitempty"`
	stages.RunSettings
}

// algorithmConfig is the optimizer's configuration of a cell.
func algorithmConfig(cfg *Params) algorithms.Config {
	return algorithms.Config{Name: cfg.Algorithm.Name, Params: cfg.Algorithm.Params, WeightDecay: cfg.WeightDecay}
}

// exchangeConfig is the exchange's configuration of a cell (codec none
// without a compression block).
func exchangeConfig(cfg *Params) compress.Config {
	if c := cfg.Compression; c != nil {
		return compress.Config{Spec: compress.Spec{Codec: c.Codec, Params: c.Params}, Seed: uint64(cfg.Seed)}
	}
	return compress.Config{Spec: compress.Spec{Codec: "none"}, Seed: uint64(cfg.Seed)}
}

func (s Stage) Run(ctx context.Context, params Params, env *stages.Env) (*stages.Result, error) {
	cfg := &params
	if env.Every.Evaluate < 1 || env.Every.Checkpoint < 1 {
		return nil, fmt.Errorf(
			"train: Env.Every is %+v; the runner must say how often to evaluate and checkpoint (stages.EveryOf)",
			env.Every,
		)
	}
	tab, err := stages.ReadTable(ctx, env, stages.Mixing)
	if err != nil {
		return nil, err
	}
	tg := &training{env: env, cfg: cfg, st: &TrainState{Columns: stages.Columns(cfg.Task, cfg.Validation)}}
	if tg.mixings, err = mixing.Read(tab, cfg.Workers); err != nil {
		return nil, err
	}
	if cohortKey(s.Engines, cfg) != "" {
		tg.tr, err = newDeviceTrainer(ctx, env, cfg, s.Engines)
	} else {
		tg.tr, err = newHostTrainer(ctx, env, cfg, s.Engines)
	}
	if err != nil {
		return nil, err
	}
	defer tg.tr.close()
	// An interrupt lets the round end and checkpoints it; a round still
	// running roundGrace later is abandoned at its next local step (the
	// cell resumes from its last checkpoint).
	defer context.AfterFunc(ctx, func() { time.AfterFunc(roundGrace, func() { tg.abandon.Store(true) }) })()
	if err := tg.resume(ctx); err != nil {
		return nil, err
	}
	st := tg.st
	diverged := st.Diverged // a resumed run may restore a diverged state
	tg.last = time.Now()
	for t := st.Round; t < cfg.Rounds && !diverged; t++ {
		var interrupted bool
		if diverged, interrupted, err = tg.round(ctx, t); err != nil {
			return nil, err
		}
		if interrupted && !diverged && st.Round < cfg.Rounds {
			return nil, stages.ErrInterrupted
		}
	}
	return tg.result(ctx, diverged)
}

// training is a cell's training under way.
type training struct {
	env            *stages.Env
	cfg            *Params
	mixings        *mixing.Mixings
	tr             trainer
	st             *TrainState
	abandon        atomic.Bool   // set roundGrace after an interrupt: the round stops at its next local step
	last           time.Time     // when the last report was made
	lastCheckpoint artifacts.Ref // the last checkpoint saved
}

// resume restores the runner's checkpoint (Env.Resume), if any, unless
// its rows lack a round this run evaluates: training then starts afresh.
func (tg *training) resume(ctx context.Context) error {
	env := tg.env
	if env.Resume == nil {
		return nil
	}
	data, err := env.Store.Get(ctx, env.Resume.Ref)
	if err != nil {
		return err
	}
	saved, err := DecodeTrainState(data)
	if err != nil {
		return err
	}
	if !evaluated(saved, env.Every.Evaluate) { // a checkpoint of an ump that did not record how often its run evaluated
		return nil
	}
	if err := tg.tr.restore(saved); err != nil {
		return fmt.Errorf("checkpoint %s: %w", env.Resume.Ref.Digest, err)
	}
	st := tg.st
	st.Round, st.Rows, st.Diverged = saved.Round, saved.Rows, saved.Diverged
	return nil
}

// evaluated reports whether a checkpoint's rows hold every round up to
// its own that a run evaluating every evaluate rounds evaluates.
func evaluated(saved *TrainState, evaluate int) bool {
	have := map[float64]bool{}
	for _, row := range saved.Rows {
		have[row[0]] = true
	}
	for r := evaluate; r <= saved.Round; r += evaluate {
		if !have[float64(r)] {
			return false
		}
	}
	return true
}

// round runs round t (from 0), evaluates it and saves a checkpoint when
// due, and reports it; interrupted says the context was cancelled.
func (tg *training) round(ctx context.Context, t int) (diverged, interrupted bool, err error) {
	cfg, env, st := tg.cfg, tg.env, tg.st
	evaluate := (t+1)%env.Every.Evaluate == 0 || t+1 == cfg.Rounds
	step := func(tau int) error {
		if tg.abandon.Load() {
			return stages.ErrInterrupted
		}
		if env.Step != nil {
			env.Step(t+1, tau+1, cfg.LocalSteps)
		}
		return nil
	}
	if err := tg.tr.round(t, learningRate(cfg, t), tg.mixings.At(t+1), evaluate, step); errors.Is(
		err,
		stages.ErrInterrupted,
	) {
		return false, false, stages.ErrInterrupted
	} else if err != nil {
		return false, false, fmt.Errorf("round %d: %w", t+1, err)
	}
	st.Round = t + 1
	diverged = tg.tr.diverged()
	st.Diverged = diverged
	interrupted = ctx.Err() != nil
	report := record.RoundReport{Round: st.Round, Rounds: cfg.Rounds, EvaluateEvery: env.Every.Evaluate}
	if evaluate || diverged {
		row, err := tg.tr.metrics(st.Round)
		if err != nil {
			return false, false, fmt.Errorf("round %d: %w", st.Round, err)
		}
		st.Rows = append(st.Rows, row)
		report.Metrics = map[string]record.Metric{}
		for k, name := range st.Columns[1:] {
			report.Metrics[name] = record.Metric(row[k+1])
		}
	}
	if st.Round%env.Every.Checkpoint == 0 || st.Round == cfg.Rounds || diverged || interrupted {
		if st.Vectors, st.Counters, err = tg.tr.state(); err != nil {
			return false, false, fmt.Errorf("checkpoint after round %d: %w", st.Round, err)
		}
		ref, err := env.Store.Put(ctx, st.Encode())
		if err != nil {
			return false, false, fmt.Errorf("writing checkpoint after round %d: %w", st.Round, err)
		}
		tg.lastCheckpoint, report.Checkpoint = ref, &ref
	}
	if report.Metrics != nil || report.Checkpoint != nil {
		now := time.Now()
		report.Seconds, tg.last = now.Sub(tg.last).Seconds(), now
		if err := env.Report(report); err != nil {
			return false, false, err
		}
	} else if env.Tick != nil {
		env.Tick(st.Round, cfg.Rounds)
	}
	return diverged, interrupted, nil
}

// result stores the rounds table and returns the stage's result.
func (tg *training) result(ctx context.Context, diverged bool) (*stages.Result, error) {
	if tg.lastCheckpoint.Digest == "" { // resumed from the final checkpoint
		tg.lastCheckpoint = tg.env.Resume.Ref
	}
	rounds, err := stages.PutTable(ctx, tg.env.Store, metricsTable(tg.st.Columns, tg.st.Rows))
	if err != nil {
		return nil, err
	}
	sum := Summary{
		Rounds:      tg.st.Round,
		RunSettings: stages.RunSettings{Cohort: tg.tr.cohort(), EvaluateEvery: tg.env.Every.Evaluate},
	}
	if diverged {
		sum.DivergedRound = tg.st.Round
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{
		Outputs:  map[string]artifacts.Ref{stages.Rounds.Name: rounds, stages.LastCheckpoint.Name: tg.lastCheckpoint},
		Summary:  summary,
		Diverged: diverged,
	}, nil
}

// roundGrace is how long an interrupted round may go on before it is
// abandoned.
const roundGrace = 2 * time.Second

// trainer advances a cell's training round by round: on the host (the
// optimizers of package algorithms over an engine's gradients), or in a
// device cohort (the GPU engine).
type trainer interface {
	// round runs round t (from 0); evaluate says metrics will be asked
	// for after it. step is called before each local step on the host (an
	// error from it ends the round with that error).
	round(t int, lr float64, mix algorithms.Mixing, evaluate bool, step func(tau int) error) error
	// diverged reports whether the last round blew up: parameters that
	// are not finite, or (data sets) a mean mini-batch loss above the
	// bound.
	diverged() bool
	// metrics is the row after round (columns, then the exchange's).
	metrics(round int) ([]float64, error)
	// state returns every state vector by name and the exchange's counters.
	state() (map[string][][]float32, map[string]float64, error)
	// restore continues from a checkpoint's vectors and counters.
	restore(saved *TrainState) error
	// cohort is the size of the device cohort it trains in (0 on the host).
	cohort() int
	close()
}

// hostTrainer runs an algorithms.Optimizer on the host over a task's
// gradients, communicating through the exchange.
type hostTrainer struct {
	tk       task
	opt      algorithms.Optimizer
	exchange *compress.Exchange
	k        int
}

func newHostTrainer(ctx context.Context, env *stages.Env, cfg *Params, engines Engines) (*hostTrainer, error) {
	tk, err := newTask(ctx, env, cfg, engines)
	if err != nil {
		return nil, err
	}
	x0 := tk.x0()
	opt, err := algorithms.New(algorithmConfig(cfg), cfg.Workers, x0)
	if err != nil {
		return nil, err
	}
	exchange, err := compress.NewExchange(exchangeConfig(cfg), cfg.Workers, len(x0))
	if err != nil {
		return nil, err
	}
	return &hostTrainer{tk: tk, opt: opt, exchange: exchange, k: cfg.LocalSteps}, nil
}

func (h *hostTrainer) round(t int, lr float64, mix algorithms.Mixing, _ bool, step func(tau int) error) error {
	grads := h.tk.grads(t, h.k)
	return h.opt.Round(
		&algorithms.Round{
			T:    t,
			K:    h.k,
			LR:   lr,
			Mix:  mix,
			Comm: h.exchange,
			Grad: func(tau int, x, g [][]float32) error {
				if err := step(tau); err != nil {
					return err
				}
				return grads(tau, x, g)
			},
		},
	)
}

func (h *hostTrainer) diverged() bool { return h.tk.diverged(h.opt.X()) }

func (h *hostTrainer) metrics(round int) ([]float64, error) {
	row, err := h.tk.metrics(round, h.opt.X())
	if err != nil {
		return nil, err
	}
	return append(row, h.exchange.Row()...), nil
}

func (h *hostTrainer) state() (map[string][][]float32, map[string]float64, error) {
	vectors := h.opt.State()
	maps.Copy(vectors, h.exchange.State())
	return vectors, h.exchange.Counters(), nil
}

func (h *hostTrainer) restore(saved *TrainState) error {
	if err := restoreVectors(h.opt.State(), saved.Vectors); err != nil {
		return err
	}
	return h.exchange.Restore(saved.Vectors, saved.Counters)
}

func (h *hostTrainer) cohort() int { return 0 }

func (h *hostTrainer) close() {}

// restoreVectors copies a checkpoint's vectors into the optimizer's.
func restoreVectors(dst, src map[string][][]float32) error {
	for name, d := range dst {
		s, ok := src[name]
		if !ok || len(s) != len(d) {
			return fmt.Errorf("lacks state %q for %d workers", name, len(d))
		}
		for i := range d {
			if len(s[i]) != len(d[i]) {
				return fmt.Errorf("state %q has dimension %d, want %d", name, len(s[i]), len(d[i]))
			}
			copy(d[i], s[i])
		}
	}
	return nil
}

// CohortKey is what cells must share to train in one cohort, or "" for a
// cell that trains otherwise: on the host (the engines have no cohort
// program of its engine's kind), the quadratic task, or compressed
// communication (which exchanges on the host).
func CohortKey(e Engines, cfg *manifests.Manifest) string {
	p := Stage{}.Params(cfg)
	return cohortKey(e, &p)
}

func cohortKey(e Engines, p *Params) string {
	if e.Cohort(p.Engine) == nil || !p.Task.Kind().Samples ||
		(p.Compression != nil && p.Compression.Codec != "none") {
		return ""
	}
	return fmt.Sprintf(
		"%s %s %s %s w%d k%d b%d",
		cmp.Or(p.Engine, tasks.CPU),
		p.Task.Dataset,
		p.Task.Model,
		p.Algorithm.Name,
		p.Workers,
		p.LocalSteps,
		p.BatchSize,
	)
}
