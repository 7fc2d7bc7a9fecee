package train

import (
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
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/topology"
)

// Stage trains a cell.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string             { return stages.Train }
func (Stage) Version() int             { return 3 }
func (Stage) Inputs() []stages.Output  { return []stages.Output{stages.Assignment, stages.Mixing} }
func (Stage) Outputs() []stages.Output { return []stages.Output{stages.Rounds, stages.LastCheckpoint} }

// Params is the whole cell configuration (a manifests.Manifest) but its
// name and how often to evaluate and checkpoint, which reach Run as
// Env.Every: they cannot change the trained model's bits.
func (Stage) Params(cfg *manifests.Manifest) any {
	c := *cfg
	c.Name, c.Evaluate, c.Checkpoint = "", manifests.Evaluate{}, manifests.Checkpoint{}
	return c
}

// config is the cell configuration a running train stage was given.
func config(env *stages.Env) *manifests.Manifest {
	cfg := env.Params.(manifests.Manifest)
	return &cfg
}

// Summary is the stage's JSON summary.
type Summary struct {
	Rounds        int `json:"rounds"` // rounds completed
	DivergedRound int `json:"diverged_round,omitempty"`
	// Cohort is the size of the GPU cohort the cell trained in: a GPU's
	// float rounding depends on the program's shape, so ump verify
	// recomputes the cell in a cohort of this size.
	Cohort int `json:"cohort,omitempty"`
	// EvaluateEvery is the evaluate.every the cell ran with: its rounds
	// table holds those rounds, and ump verify recomputes it so. (It is
	// not in the cache key: a manifest asking for another reuses the cell.)
	EvaluateEvery int `json:"evaluate_every,omitempty"`
}

// algorithmConfig is the optimizer's configuration of a cell.
func algorithmConfig(cfg *manifests.Manifest) algorithms.Config {
	return algorithms.Config{Name: cfg.Algorithm.Name, Params: cfg.Algorithm.Params, WeightDecay: cfg.WeightDecay}
}

// exchangeConfig is the exchange's configuration of a cell (codec none
// without a compression block).
func exchangeConfig(cfg *manifests.Manifest) compress.Config {
	if c := cfg.Compression; c != nil {
		return compress.Config{Spec: compress.Spec{Codec: c.Codec, Params: c.Params}, Seed: uint64(cfg.Seed)}
	}
	return compress.Config{Spec: compress.Spec{Codec: "none"}, Seed: uint64(cfg.Seed)}
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := config(env)
	if env.Every.Evaluate < 1 || env.Every.Checkpoint < 1 {
		return nil, fmt.Errorf("train: Env.Every is %+v; the runner must say how often to evaluate and checkpoint (stages.EveryOf)", env.Every)
	}
	tab, err := stages.ReadTable(ctx, env, stages.Mixing)
	if err != nil {
		return nil, err
	}
	mixings, err := topology.ReadMixings(tab, cfg.Workers)
	if err != nil {
		return nil, err
	}
	var tr trainer
	if CohortKey(cfg) != "" {
		tr, err = newDeviceTrainer(ctx, env)
	} else {
		tr, err = newHostTrainer(ctx, env)
	}
	if err != nil {
		return nil, err
	}
	defer tr.close()
	// An interrupt lets the round end and checkpoints it; a round still
	// running roundGrace later is abandoned at its next local step (the
	// cell resumes from its last checkpoint).
	var abandon atomic.Bool
	defer context.AfterFunc(ctx, func() { time.AfterFunc(roundGrace, func() { abandon.Store(true) }) })()
	st := &TrainState{Columns: stages.Columns(cfg)}
	if env.Resume != nil {
		data, err := env.Store.Get(ctx, env.Resume.Ref)
		if err != nil {
			return nil, err
		}
		saved, err := DecodeTrainState(data)
		if err != nil {
			return nil, err
		}
		if err := tr.restore(saved); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", env.Resume.Ref.Digest, err)
		}
		st.Round, st.Rows, st.Diverged = saved.Round, saved.Rows, saved.Diverged
	}
	var lastCheckpoint artifacts.Ref
	diverged := st.Diverged // a resumed run may restore a diverged state
	last := time.Now()
	for t := st.Round; t < cfg.Rounds && !diverged; t++ {
		evaluate := (t+1)%env.Every.Evaluate == 0 || t+1 == cfg.Rounds
		step := func(tau int) error {
			if abandon.Load() {
				return stages.ErrInterrupted
			}
			if env.Step != nil {
				env.Step(t+1, tau+1, cfg.LocalSteps)
			}
			return nil
		}
		if err := tr.round(t, learningRate(cfg, t), mixings.At(t+1), evaluate, step); errors.Is(err, stages.ErrInterrupted) {
			return nil, stages.ErrInterrupted
		} else if err != nil {
			return nil, fmt.Errorf("round %d: %w", t+1, err)
		}
		st.Round = t + 1
		diverged = tr.diverged()
		st.Diverged = diverged
		interrupted := ctx.Err() != nil
		report := record.RoundReport{Round: st.Round, Rounds: cfg.Rounds}
		if evaluate || diverged {
			row, err := tr.metrics(st.Round)
			if err != nil {
				return nil, fmt.Errorf("round %d: %w", st.Round, err)
			}
			st.Rows = append(st.Rows, row)
			report.Metrics = map[string]record.Metric{}
			for k, name := range st.Columns[1:] {
				report.Metrics[name] = record.Metric(row[k+1])
			}
		}
		if st.Round%env.Every.Checkpoint == 0 || st.Round == cfg.Rounds || diverged || interrupted {
			if st.Vectors, st.Counters, err = tr.state(); err != nil {
				return nil, fmt.Errorf("checkpoint after round %d: %w", st.Round, err)
			}
			ref, err := env.Store.Put(ctx, st.Encode())
			if err != nil {
				return nil, fmt.Errorf("writing checkpoint after round %d: %w", st.Round, err)
			}
			lastCheckpoint, report.Checkpoint = ref, &ref
		}
		if report.Metrics != nil || report.Checkpoint != nil {
			now := time.Now()
			report.Seconds, last = now.Sub(last).Seconds(), now
			if err := env.Report(report); err != nil {
				return nil, err
			}
		} else if env.Tick != nil {
			env.Tick(st.Round, cfg.Rounds)
		}
		if interrupted && !diverged && st.Round < cfg.Rounds {
			return nil, stages.ErrInterrupted
		}
	}
	if lastCheckpoint.Digest == "" { // resumed from the final checkpoint
		lastCheckpoint = env.Resume.Ref
	}
	rounds, err := stages.PutTable(ctx, env.Store, metricsTable(st.Columns, st.Rows))
	if err != nil {
		return nil, err
	}
	sum := Summary{Rounds: st.Round, Cohort: tr.cohort(), EvaluateEvery: env.Every.Evaluate}
	if diverged {
		sum.DivergedRound = st.Round
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{Outputs: map[string]artifacts.Ref{stages.Rounds.Name: rounds, stages.LastCheckpoint.Name: lastCheckpoint},
		Summary: summary, Diverged: diverged}, nil
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

func newHostTrainer(ctx context.Context, env *stages.Env) (*hostTrainer, error) {
	cfg := config(env)
	tk, err := newTask(ctx, env)
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
	return h.opt.Round(&algorithms.Round{T: t, K: h.k, LR: lr, Mix: mix, Comm: h.exchange, Grad: func(tau int, x, g [][]float32) error {
		if err := step(tau); err != nil {
			return err
		}
		return grads(tau, x, g)
	}})
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

// deviceKey is the context key of WithDevice.
type deviceKey struct{}

// onDevice is what WithDevice gives the train stage.
type onDevice struct {
	device *gpu.Device
	seat   *Seat
}

// WithDevice returns ctx carrying where GPU cells train (nil where none is
// configured) and the cell's seat in a cohort (nil: a cohort of its own),
// for the train stage's Run; the other stages need neither.
func WithDevice(ctx context.Context, device *gpu.Device, seat *Seat) context.Context {
	return context.WithValue(ctx, deviceKey{}, onDevice{device, seat})
}

// deviceOf is what WithDevice put in ctx.
func deviceOf(ctx context.Context) onDevice {
	d, _ := ctx.Value(deviceKey{}).(onDevice)
	return d
}

// CohortKey is what cells must share to train in one cohort, or "" for a
// cell that trains otherwise (the CPU engine, the quadratic task, or
// compressed communication, which exchanges on the host).
func CohortKey(cfg *manifests.Manifest) string {
	if !cfg.OnGPU() || !cfg.Task.Kind().Samples || (cfg.Compression != nil && cfg.Compression.Codec != "none") {
		return ""
	}
	return fmt.Sprintf("%s %s %s w%d k%d b%d", cfg.Task.Dataset, cfg.Task.Model, cfg.Algorithm.Name, cfg.Workers, cfg.LocalSteps, cfg.BatchSize)
}

// CheckDevice refuses, before anything runs, a cell that a GPU cohort
// would train (CohortKey) with an algorithm its round program cannot run
// (algorithms.OnDevice); nil for any other cell.
func CheckDevice(cfg *manifests.Manifest) error {
	if CohortKey(cfg) == "" {
		return nil
	}
	if err := algorithms.OnDevice(algorithms.Config{Name: cfg.Algorithm.Name, Params: cfg.Algorithm.Params}, cfg.LocalSteps); err != nil {
		return &manifests.Error{Problems: []string{fmt.Sprintf("field \"algorithm\": %v", err)}}
	}
	return nil
}
