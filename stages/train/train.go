// Package train is the stage that runs the cell's algorithm round by round:
// K local steps on every worker, then communication with the round's mixing
// matrix. It reports metrics every evaluate.every rounds, writes a
// checkpoint every checkpoint.every rounds (and at the end, on divergence and
// on interruption), resumes from the pipeline's last checkpoint, and
// outputs the per-round metrics table ("rounds") and the final checkpoint
// ("checkpoint"). Non-finite parameters stop the run as diverged.
package train

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/topology"
)

// Stage trains a cell.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "train" }
func (Stage) Version() int { return 1 }

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

// QuadraticColumns are the metric columns of the quadratic task.
var QuadraticColumns = []string{"round", "train_loss", "consensus_distance", "objective_gap", "grad_norm_sq"}

// NewQuadratic builds the cell's quadratic task.
func NewQuadratic(cfg *manifests.Manifest) *datasets.Quadratic {
	q := cfg.Task.Quadratic
	return datasets.NewQuadratic(cfg.Workers, q.Dim, q.Zeta, q.Kappa, q.Sigma, uint64(cfg.Seed))
}

// QuadraticMetrics computes one metrics row (QuadraticColumns) after round.
func QuadraticMetrics(q *datasets.Quadratic, round int, x [][]float32) []float64 {
	n := len(x)
	xbar := make([]float64, q.Dim)
	loss := 0.0
	for i := range x {
		for k, v := range x[i] {
			xbar[k] += float64(v)
		}
		loss += q.Loss(i, x[i])
	}
	for k := range xbar {
		xbar[k] /= float64(n)
	}
	cd := 0.0
	for i := range x {
		for k, v := range x[i] {
			d := float64(v) - xbar[k]
			cd += d * d
		}
	}
	return []float64{float64(round), loss / float64(n), cd / float64(n), q.Gap(xbar), q.GradNormSq(xbar)}
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := &env.Cell.Config
	if cfg.Task.Dataset != "quadratic" {
		return nil, fmt.Errorf("train: this version trains only the quadratic task, not %s; `ump run --until topology` inspects its partition and topology", cfg.Task.Dataset)
	}
	q := NewQuadratic(cfg)
	tab, err := stages.ReadTable(ctx, env, "topology", "mixing")
	if err != nil {
		return nil, err
	}
	mixings, err := topology.ReadMixings(tab, cfg.Workers)
	if err != nil {
		return nil, err
	}
	a := cfg.Algorithm
	acfg := algorithms.Config{Name: a.Name, Alpha: orZero(a.Alpha), Beta: orZero(a.Beta), Lambda: orZero(a.Lambda), TrackerInit: a.TrackerInit}
	opt, err := algorithms.New(acfg, cfg.Workers, make([]float32, q.Dim))
	if err != nil {
		return nil, err
	}
	st := &State{Columns: QuadraticColumns}
	if env.Resume != nil {
		if err := restore(ctx, env, opt, st); err != nil {
			return nil, err
		}
	}
	var lastCheckpoint artifacts.Ref
	diverged := !finite(opt.X()) // a resumed run may restore a diverged state
	last := time.Now()
	for t := st.Round; t < cfg.Rounds && !diverged; t++ {
		round := &algorithms.Round{T: t, K: cfg.LocalSteps, LR: cfg.LR, Mix: mixings.At(t + 1),
			Grad: func(i, step int, x, g []float32) error { q.Grad(i, t, step, x, g); return nil }}
		if err := opt.Round(round); err != nil {
			return nil, fmt.Errorf("round %d: %w", t+1, err)
		}
		st.Round = t + 1
		diverged = !finite(opt.X())
		interrupted := ctx.Err() != nil
		report := stages.RoundReport{Round: st.Round, Rounds: cfg.Rounds}
		if st.Round%cfg.Evaluate.Every == 0 || st.Round == cfg.Rounds || diverged {
			row := QuadraticMetrics(q, st.Round, opt.X())
			st.Rows = append(st.Rows, row)
			report.Metrics = map[string]stages.Metric{}
			for k, name := range st.Columns[1:] {
				report.Metrics[name] = stages.Metric(row[k+1])
			}
		}
		if st.Round%cfg.Checkpoint.Every == 0 || st.Round == cfg.Rounds || diverged || interrupted {
			st.Vectors = opt.State()
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
	rounds, err := stages.PutTable(ctx, env.Store, MetricsTable(st.Columns, st.Rows))
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

func restore(ctx context.Context, env *stages.Env, opt algorithms.Optimizer, st *State) error {
	data, err := env.Store.Get(ctx, env.Resume.Ref)
	if err != nil {
		return err
	}
	saved, err := DecodeState(data)
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
	st.Round, st.Rows = saved.Round, saved.Rows
	return nil
}

// orZero reads a parameter the algorithm may not take.
func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
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

// MetricsTable turns metric rows into a table: "round" as int64, the
// other columns as float64.
func MetricsTable(columns []string, rows [][]float64) *artifacts.Table {
	t := &artifacts.Table{}
	for k, name := range columns {
		if name == "round" {
			c := artifacts.Column{Name: name, Ints: make([]int64, len(rows))}
			for r, row := range rows {
				c.Ints[r] = int64(row[k])
			}
			t.Columns = append(t.Columns, c)
			continue
		}
		c := artifacts.Column{Name: name, Floats: make([]float64, len(rows))}
		for r, row := range rows {
			c.Floats[r] = row[k]
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}
