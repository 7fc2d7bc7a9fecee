package evaluate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// Stage records the final figures of a cell.
type Stage struct{}

var _ stages.Step[Params] = Stage{}
var _ stages.FormerlyKeyed = Stage{}

func (Stage) Name() string             { return stages.Evaluate }
func (Stage) Version() int             { return 1 }
func (Stage) Inputs() []stages.Output  { return []stages.Output{stages.Rounds} }
func (Stage) Outputs() []stages.Output { return []stages.Output{stages.Final} }

// Params is empty: the final figures are a function of train's rounds
// table alone, whose digest the key holds.
type Params struct{}

func (Stage) Params(*manifests.Manifest) Params { return Params{} }

// FormerParams are what the key held before stages declared exactly what
// they read: the cell's task, workers and seed (none of which Run reads).
func (Stage) FormerParams(cfg *manifests.Manifest) json.RawMessage {
	return manifests.CanonicalJSON(struct {
		Task    manifests.Task `json:"task"`
		Workers int            `json:"workers"`
		Seed    int            `json:"seed"`
	}{cfg.Task, cfg.Workers, cfg.Seed})
}

func (Stage) Run(ctx context.Context, _ Params, env *stages.Env) (*stages.Result, error) {
	rounds, err := stages.ReadTable(ctx, env, stages.Rounds)
	if err != nil {
		return nil, err
	}
	n := rounds.Rows()
	if n == 0 {
		return nil, fmt.Errorf("evaluate: train's rounds table has no rows")
	}
	final := &artifacts.Table{}
	for _, c := range rounds.Columns {
		last := artifacts.Column{Name: c.Name}
		switch {
		case c.Ints != nil:
			last.Ints = c.Ints[n-1:]
		case c.Floats != nil:
			last.Floats = c.Floats[n-1:]
		default:
			return nil, fmt.Errorf("evaluate: train's rounds table has a column %q that is not numeric", c.Name)
		}
		final.Columns = append(final.Columns, last)
	}
	out, err := stages.PutTable(ctx, env.Store, final)
	if err != nil {
		return nil, err
	}
	return &stages.Result{
		Outputs:  map[string]artifacts.Ref{stages.Final.Name: out},
		Diverged: env.Upstream[stages.Train].Diverged,
	}, nil
}
