// Package evaluate computes a cell's metrics: the functions the train stage
// calls every evaluate.every rounds and at its last round (Quadratic,
// Neural), and the stage that records the final checkpoint's figures as a
// one-row Arrow table ("final") with the same columns as the rounds table.
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
	// Training evaluates at its last round (also on divergence), so the
	// checkpoint's last row holds the figures of its parameters.
	if len(st.Rows) == 0 || int(st.Rows[len(st.Rows)-1][0]) != st.Round {
		return nil, fmt.Errorf("evaluate: checkpoint %s has no metrics row for its round %d", ref.Digest, st.Round)
	}
	table := Table(st.Columns, st.Rows[len(st.Rows)-1:])
	out, err := stages.PutTable(ctx, env.Store, table)
	if err != nil {
		return nil, err
	}
	return &stages.Result{Outputs: map[string]artifacts.Ref{"final": out}, Diverged: up.Diverged}, nil
}
