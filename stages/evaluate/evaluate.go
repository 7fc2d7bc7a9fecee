// Package evaluate computes a cell's metrics: the functions the train stage
// calls every evaluate.every rounds (Quadratic, Neural), and the stage that
// loads the final checkpoint of training and records the cell's final
// metrics as a one-row Arrow table ("final") with the same columns as the
// rounds table.
package evaluate

import (
	"context"
	"fmt"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
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
	up, ok := env.Upstream["train"]
	if !ok {
		return nil, fmt.Errorf("evaluate: train has not run")
	}
	ref := up.Outputs["checkpoint"]
	data, err := env.Store.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	st, err := stages.DecodeTrainState(data)
	if err != nil {
		return nil, err
	}
	x, ok := st.Vectors["x"]
	if !ok {
		return nil, fmt.Errorf("evaluate: checkpoint %s holds no parameters x", ref.Digest)
	}
	var table *artifacts.Table
	if cfg.Task.Dataset == "quadratic" {
		table = Table(QuadraticColumns, [][]float64{Quadratic(stages.NewQuadratic(cfg), st.Round, x)})
	} else {
		d, err := stages.LoadData(cfg, env.Data)
		if err != nil {
			return nil, err
		}
		engine, err := stages.NewEngine(cfg, d)
		if err != nil {
			return nil, err
		}
		if len(st.Rows) == 0 || int(st.Rows[len(st.Rows)-1][0]) != st.Round {
			return nil, fmt.Errorf("evaluate: checkpoint %s has no metrics row for its round %d", ref.Digest, st.Round)
		}
		trainLoss := st.Rows[len(st.Rows)-1][1] // the last round's mini-batch loss
		table = Table(NeuralColumns, [][]float64{Neural(engine, &d.Test, st.Round, trainLoss, x)})
	}
	out, err := stages.PutTable(ctx, env.Store, table)
	if err != nil {
		return nil, err
	}
	return &stages.Result{Outputs: map[string]artifacts.Ref{"final": out}, Diverged: up.Diverged}, nil
}
