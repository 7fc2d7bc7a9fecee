// Package partition is the stage that assigns data to workers and records
// the assignment as an Arrow table (worker, shard, samples). For the
// quadratic task worker i owns objective f_i: shard i, no samples.
package partition

import (
	"context"
	"fmt"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// Stage records the partition of a cell's data over its workers.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "partition" }
func (Stage) Version() int { return 1 }

func (Stage) Params(cfg *manifests.Manifest) any {
	return struct {
		Task    manifests.Task `json:"task"`
		Workers int            `json:"workers"`
		Seed    int            `json:"seed"`
	}{cfg.Task, cfg.Workers, cfg.Seed}
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := &env.Cell.Config
	if cfg.Task.Dataset != "quadratic" {
		return nil, fmt.Errorf("partition: no partitioner for data set %q", cfg.Task.Dataset)
	}
	n := cfg.Workers
	worker, shard, samples := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range worker {
		worker[i], shard[i] = int64(i), int64(i)
	}
	ref, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
		{Name: "worker", Ints: worker}, {Name: "shard", Ints: shard}, {Name: "samples", Ints: samples}}})
	if err != nil {
		return nil, err
	}
	return &stages.Result{Outputs: map[string]artifacts.Ref{"partition": ref}}, nil
}
