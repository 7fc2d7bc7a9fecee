// Package train is the stage that runs the cell's algorithm round by round:
// K local steps on every worker (mini-batches from each worker's partition
// for data sets; the quadratic's gradients otherwise), then communication
// with the round's mixing matrix through the cell's compress.Exchange
// (exact, or compressed with the bits counted), at the round's learning
// rate. It records metrics every evaluate.every rounds (and at the last),
// the exchange's bits and compression figures with them, writes a
// checkpoint every checkpoint.every rounds (and at the end, on divergence
// and on interruption), resumes from the pipeline's last checkpoint, and
// outputs the per-round metrics table ("rounds") and the final checkpoint
// ("checkpoint"). A round with non-finite parameters, or a data-set round
// whose mean mini-batch loss exceeds 100 ln(classes), stops the run as
// diverged.
package train

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/compress"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/topology"
)

// Stage trains a cell.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "train" }
func (Stage) Version() int { return 3 }

// Params is the whole cell configuration but its name.
func (Stage) Params(cfg *manifests.Manifest) any {
	c := *cfg
	c.Name = ""
	return c
}

// Summary is the stage's JSON summary.
type Summary struct {
	Rounds        int `json:"rounds"` // rounds completed
	DivergedRound int `json:"diverged_round,omitempty"`
}

// algorithmConfig turns the manifest's algorithm block into the
// optimizer's configuration.
func algorithmConfig(cfg *manifests.Manifest) algorithms.Config {
	a := cfg.Algorithm
	return algorithms.Config{Name: a.Name, Alpha: orZero(a.Alpha), Beta: orZero(a.Beta), Lambda: orZero(a.Lambda),
		TrackerInit: a.TrackerInit, Nesterov: orZero(a.Nesterov), Mu: orZero(a.Mu),
		BaseBeta: orZero(a.BaseBeta), SlowBeta: orZero(a.SlowBeta), SlowAlpha: orZero(a.SlowAlpha), WeightDecay: cfg.WeightDecay}
}

// orZero is *p, or the zero value when p is nil.
func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// exchangeConfig turns the manifest's compression block into the
// exchange's configuration (codec none without one).
func exchangeConfig(cfg *manifests.Manifest) compress.Config {
	c := cfg.Compression
	if c == nil {
		return compress.Config{Spec: compress.Spec{Codec: "none"}}
	}
	return compress.Config{Spec: compress.Spec{Codec: c.Codec, Ratio: orZero(c.Ratio), Tau: orZero(c.Tau), Levels: orZero(c.Levels),
		Bucket: orZero(c.Bucket), Rank: orZero(c.Rank)}, Gamma: orZero(c.Gamma),
		Residual: c.Memory == "residual", Seed: uint64(cfg.Seed)}
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := &env.Cell.Config
	tk, err := newTask(ctx, env)
	if err != nil {
		return nil, err
	}
	tab, err := stages.ReadTable(ctx, env, "topology", "mixing")
	if err != nil {
		return nil, err
	}
	mixings, err := topology.ReadMixings(tab, cfg.Workers)
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
	st := &stages.TrainState{Columns: append(tk.columns(), compress.Columns...)}
	if env.Resume != nil {
		if err := restore(ctx, env, opt, exchange, st); err != nil {
			return nil, err
		}
	}
	var lastCheckpoint artifacts.Ref
	diverged := st.Diverged // a resumed run may restore a diverged state
	last := time.Now()
	for t := st.Round; t < cfg.Rounds && !diverged; t++ {
		round := &algorithms.Round{T: t, K: cfg.LocalSteps, LR: learningRate(cfg, t), Mix: mixings.At(t + 1),
			Grad: tk.grads(t, cfg.LocalSteps), Comm: exchange}
		if err := opt.Round(round); err != nil {
			return nil, fmt.Errorf("round %d: %w", t+1, err)
		}
		st.Round = t + 1
		diverged = tk.diverged(opt.X())
		st.Diverged = diverged
		interrupted := ctx.Err() != nil
		report := stages.RoundReport{Round: st.Round, Rounds: cfg.Rounds}
		if st.Round%cfg.Evaluate.Every == 0 || st.Round == cfg.Rounds || diverged {
			row := append(tk.metrics(st.Round, opt.X()), exchange.Row()...)
			st.Rows = append(st.Rows, row)
			report.Metrics = map[string]stages.Metric{}
			for k, name := range st.Columns[1:] {
				report.Metrics[name] = stages.Metric(row[k+1])
			}
		}
		if st.Round%cfg.Checkpoint.Every == 0 || st.Round == cfg.Rounds || diverged || interrupted {
			st.Vectors = opt.State()
			maps.Copy(st.Vectors, exchange.State())
			st.Counters = exchange.Counters()
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
		}
		if interrupted && !diverged && st.Round < cfg.Rounds {
			return nil, stages.ErrInterrupted
		}
	}
	if lastCheckpoint.Digest == "" { // resumed from the final checkpoint
		lastCheckpoint = env.Resume.Ref
	}
	rounds, err := stages.PutTable(ctx, env.Store, evaluate.Table(st.Columns, st.Rows))
	if err != nil {
		return nil, err
	}
	sum := Summary{Rounds: st.Round}
	if diverged {
		sum.DivergedRound = st.Round
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{Outputs: map[string]artifacts.Ref{"rounds": rounds, "checkpoint": lastCheckpoint},
		Summary: summary, Diverged: diverged}, nil
}

func restore(ctx context.Context, env *stages.Env, opt algorithms.Optimizer, exchange *compress.Exchange, st *stages.TrainState) error {
	data, err := env.Store.Get(ctx, env.Resume.Ref)
	if err != nil {
		return err
	}
	saved, err := stages.DecodeTrainState(data)
	if err != nil {
		return err
	}
	for name, dst := range opt.State() {
		src, ok := saved.Vectors[name]
		if !ok || len(src) != len(dst) {
			return fmt.Errorf("checkpoint %s lacks state %q for %d workers", env.Resume.Ref.Digest, name, len(dst))
		}
		for i := range dst {
			if len(src[i]) != len(dst[i]) {
				return fmt.Errorf("checkpoint %s: state %q has dimension %d, want %d", env.Resume.Ref.Digest, name, len(src[i]), len(dst[i]))
			}
			copy(dst[i], src[i])
		}
	}
	if err := exchange.Restore(saved.Vectors, saved.Counters); err != nil {
		return fmt.Errorf("checkpoint %s: %w", env.Resume.Ref.Digest, err)
	}
	st.Round, st.Rows, st.Diverged = saved.Round, saved.Rows, saved.Diverged
	return nil
}
