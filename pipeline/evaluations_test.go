package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
)

// TestAManifestGetsTheEvaluationsItAsksFor: evaluate.every stays out of
// the train stage's key, but a cached training serves a manifest only
// where it evaluated every round the manifest asks for. Every 5 does not
// serve every 1: the cell is computed again, to the same model bits, with
// 20 evaluated rounds; every 1 then serves every 5, without a stage run.
func TestAManifestGetsTheEvaluationsItAsksFor(t *testing.T) {
	every := func(n string) string {
		return strings.NewReplacer("rounds: 40", "rounds: 20", "evaluate: {every: 2}", "evaluate: {every: "+n+"}").
			Replace(smallManifest)
	}
	s := openTestStore(t)
	var progress strings.Builder
	r := &Runner{
		Log:      s.Log,
		Blobs:    s.Blobs,
		Dir:      s.Path,
		Stages:   cellStages(nil),
		Engines:  engines.Set{},
		Progress: &progress,
	}
	run := func(src string, wantRows int) *artifacts.Table {
		t.Helper()
		plan := parse(t, src)
		if out, err := r.Run(context.Background(), plan); err != nil || out.Completed != 2 {
			t.Fatalf("run: %+v %v", out, err)
		}
		rounds := exportTable(t, s, plan.Hash, "rounds")
		if rounds.Rows() != 2*wantRows {
			t.Fatalf(
				"evaluate every %s: the rounds table has %d rows, want 2 cells x %d evaluated rounds",
				src[strings.Index(src, "every: ")+7:][:1],
				rounds.Rows(),
				wantRows,
			)
		}
		return rounds
	}
	five := run(every("5"), 4)
	started := countKind(t, s, eventlog.StageStarted)
	one := run(every("1"), 20)
	if n := countKind(t, s, eventlog.StageStarted) - started; n != 4 {
		t.Errorf("every 1 after every 5 started %d stages, want the 2 cells' training and evaluation again", n)
	}
	if !strings.Contains(
		progress.String(),
		"the cached result evaluated every 5 rounds, and this manifest asks for every 1",
	) {
		t.Errorf("the recomputation was not explained:\n%s", progress.String())
	}
	for _, round := range []int64{5, 10, 15,
		20} { // the same model bits: every round both evaluated has the same figures
		sameTables(
			t,
			withoutColumn(five.Select(rowsOf(five, round)), "manifest"),
			withoutColumn(one.Select(rowsOf(one, round)), "manifest"),
		)
	}
	started = countKind(t, s, eventlog.StageStarted)
	src := strings.Replace(every("5"), "name: small", "name: small-again", 1) // a new manifest of the same cells
	run(src, 20)
	if n := countKind(t, s, eventlog.StageStarted) - started; n != 0 {
		t.Errorf("every 5 after every 1 started %d stages, want none (every 1 serves every 5)", n)
	}
}

// rowsOf are the rows of a rounds table at round.
func rowsOf(t *artifacts.Table, round int64) []int {
	var rows []int
	for r, v := range t.Column("round").Ints {
		if v == round {
			rows = append(rows, r)
		}
	}
	return rows
}

// withoutColumn is t without its column name.
func withoutColumn(t *artifacts.Table, name string) *artifacts.Table {
	out := &artifacts.Table{}
	for _, c := range t.Columns {
		if c.Name != name {
			out.Columns = append(out.Columns, c)
		}
	}
	return out
}
