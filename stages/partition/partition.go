package partition

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/split"
	"github.com/ump-lab/ump/stages"
)

// Stage records the partition of a cell's data over its workers.
type Stage struct{}

var _ stages.Step[Params] = Stage{}

// Version 3: Dirichlet draws with rng.Normal and fmath.Exp and Log, the
// same bits on every machine (2: math/rand's NormFloat64 and math).

func (Stage) Name() string             { return stages.Partition }
func (Stage) Version() int             { return 3 }
func (Stage) Inputs() []stages.Output  { return nil }
func (Stage) Outputs() []stages.Output { return []stages.Output{stages.Assignment, stages.Histogram} }

// Params is what the partition depends on: the data (not the model), the
// workers, the seed, the kind and the validation share.
type Params struct {
	Task       manifests.Task        `json:"task"`
	Workers    int                   `json:"workers"`
	Seed       int                   `json:"seed"`
	Partition  *manifests.Partition  `json:"partition,omitempty"`
	Validation *manifests.Validation `json:"validation,omitempty"`
}

func (Stage) Params(cfg *manifests.Manifest) Params {
	task := cfg.Task
	task.Model = ""
	return Params{task, cfg.Workers, cfg.Seed, cfg.Partition, cfg.Validation}
}

// Summary is the stage's JSON summary.
type Summary struct {
	Samples        int `json:"samples"`
	MinWorkerSize  int `json:"min_worker_size"`
	MaxWorkerSize  int `json:"max_worker_size"`
	DirichletDraws int `json:"dirichlet_draws,omitempty"`
	Validation     int `json:"validation,omitempty"` // samples held out, over all workers
}

func (Stage) Run(ctx context.Context, cfg Params, env *stages.Env) (*stages.Result, error) {
	n := cfg.Workers
	if !cfg.Task.Kind().Samples {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		ref, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
			{Name: "worker", Ints: ids}, {Name: "sample", Ints: ids}}})
		if err != nil {
			return nil, err
		}
		return &stages.Result{Outputs: map[string]artifacts.Ref{stages.Assignment.Name: ref}}, nil
	}
	data, err := stages.LoadData(cfg.Task, env.Data)
	if err != nil {
		return nil, err
	}
	parts, draws, err := split.Assign(
		cfg.Partition.Kind,
		cfg.Partition.Params,
		data.Train.Labels,
		data.Classes,
		n,
		uint64(cfg.Seed),
	)
	if err != nil {
		return nil, err
	}
	var val [][]int // held out, per worker
	if v := cfg.Validation; v != nil {
		if parts, val, err = split.HoldOut(parts, data.Train.Labels, data.Classes, v.Fraction, uint64(
			cfg.Seed)); err != nil {
			return nil, err
		}
	}
	sum := Summary{Samples: data.Train.Len(), MinWorkerSize: math.MaxInt, DirichletDraws: draws}
	var worker, sample, hw, hc, count []int64
	var held []int64
	for i, p := range parts {
		sum.MinWorkerSize, sum.MaxWorkerSize = min(sum.MinWorkerSize, len(p)), max(sum.MaxWorkerSize, len(p))
		hist := make([]int64, data.Classes)
		for _, s := range p {
			worker, sample, held = append(worker, int64(i)), append(sample, int64(s)), append(held, 0)
			hist[data.Train.Labels[s]]++
		}
		if val != nil {
			sum.Validation += len(val[i])
			for _, s := range val[i] {
				worker, sample, held = append(worker, int64(i)), append(sample, int64(s)), append(held, 1)
			}
		}
		for c, k := range hist {
			hw, hc, count = append(hw, int64(i)), append(hc, int64(c)), append(count, k)
		}
	}
	if v := cfg.Validation; v != nil && sum.Validation == 0 {
		return nil, fmt.Errorf(
			"%w: field \"validation.fraction\": %g holds out no sample: each of the %d workers holds %d to %d "+
				"samples, and %g of them rounds to none; "+
				"use a fraction of at least %.2g (or fewer workers)",
			stages.ErrBadInput,
			v.Fraction,
			len(parts),
			sum.MinWorkerSize,
			sum.MaxWorkerSize,
			v.Fraction,
			0.5/float64(sum.MaxWorkerSize),
		)
	}
	cols := []artifacts.Column{{Name: "worker", Ints: worker}, {Name: "sample", Ints: sample}}
	if val != nil {
		cols = append(cols, artifacts.Column{Name: stages.ValidationColumn, Ints: held})
	}
	assignment, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: cols})
	if err != nil {
		return nil, err
	}
	histogram, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
		{Name: "worker", Ints: hw}, {Name: "class", Ints: hc}, {Name: "count", Ints: count}}})
	if err != nil {
		return nil, err
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{
		Outputs: map[string]artifacts.Ref{stages.Assignment.Name: assignment, stages.Histogram.Name: histogram},
		Summary: summary,
	}, nil
}
