// Package evaluate is the stage that loads the final checkpoint of training
// and computes the cell's final metrics, recorded as a one-row Arrow table
// ("final") with the same columns as the rounds table.
package evaluate

import (
	"context"
	"fmt"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
)

// Stage evaluates the final model of a cell.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "evaluate" }
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
		return nil, fmt.Errorf("evaluate: this version evaluates only the quadratic task, not %s", cfg.Task.Dataset)
	}
	up, ok := env.Upstream["train"]
	if !ok {
		return nil, fmt.Errorf("evaluate: train has not run")
	}
	data, err := env.Store.Get(ctx, up.Outputs["checkpoint"])
	if err != nil {
		return nil, err
	}
	st, err := train.DecodeState(data)
	if err != nil {
		return nil, err
	}
	x, ok := st.Vectors["x"]
	if !ok {
		return nil, fmt.Errorf("evaluate: checkpoint %s holds no parameters x", up.Outputs["checkpoint"].Digest)
	}
	row := train.QuadraticMetrics(train.NewQuadratic(cfg), st.Round, x)
	ref, err := stages.PutTable(ctx, env.Store, train.MetricsTable(train.QuadraticColumns, [][]float64{row}))
	if err != nil {
		return nil, err
	}
	return &stages.Result{Outputs: map[string]artifacts.Ref{"final": ref}, Diverged: up.Diverged}, nil
}
