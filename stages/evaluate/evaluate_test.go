package evaluate

import (
	"context"
	"math"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/stages"
)

// TestFinalIsTheLastRoundsRow: the final table is the rounds table's last
// row, column for column, and a diverged train result stays diverged.
func TestFinalIsTheLastRoundsRow(t *testing.T) {
	ctx := context.Background()
	mem := artifacts.NewMemory()
	rounds := &artifacts.Table{Columns: []artifacts.Column{
		{Name: "round", Ints: []int64{2, 4, 5}},
		{Name: "train_loss", Floats: []float64{1.5, 0.75, math.Inf(1)}},
	}}
	ref, err := stages.PutTable(ctx, mem, rounds)
	if err != nil {
		t.Fatal(err)
	}
	env := &stages.Env{Store: mem, Upstream: map[string]*stages.Result{
		stages.Train: {Outputs: map[string]artifacts.Ref{stages.Rounds.Name: ref}, Diverged: true}}}
	res, err := Stage{}.Run(ctx, Params{}, env)
	if err != nil {
		t.Fatal(err)
	}
	env.Upstream = map[string]*stages.Result{stages.Evaluate: res}
	final, err := stages.ReadTable(ctx, env, stages.Final)
	if err != nil {
		t.Fatal(err)
	}
	if final.Rows() != 1 || final.Column("round").Ints[0] != 5 ||
		!math.IsInf(final.Column("train_loss").Floats[0], 1) ||
		!res.Diverged {
		t.Errorf("final %+v (diverged %v); want round 5 with an infinite loss, diverged", final.Columns, res.Diverged)
	}
}
