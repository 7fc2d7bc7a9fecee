package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/report"
)

// TestEntriesAreProvisionalUntilEveryChoiceFinishes: with only one of two
// learning rates run, each entry shows its figure marked † and no entry
// is bold; once both have run, none is provisional.
func TestEntriesAreProvisionalUntilEveryChoiceFinishes(t *testing.T) {
	plan := parse(
		t,
		strings.Replace(
			smallManifest,
			"sweep:\n",
			"sweep:\n  lr: [0.01, 0.02]\n",
			1,
		)+"table: {rows: [algorithm], value: objective_gap, select: lr}\n",
	)
	s := openTestStore(t)
	var first []int // the cells of lr=0.01
	for i, c := range plan.Cells {
		if c.Label["lr"] == "0.01" {
			first = append(first, i)
		}
	}
	grid := func() *report.Grid {
		reg, err := s.Source().FindManifest(plan.Hash)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Source().Report(reg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := report.ReadGrid(context.Background(), s.Source(), rep, report.Layout(plan))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{},
		Cells: first}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	g := grid()
	if !strings.Contains(g.Legend(), "† provisional: other values of lr still run") {
		t.Errorf("the legend does not explain †: %s", g.Legend())
	}
	if e := g.Entries[0][0]; !e.Provisional || e.Select != "0.01" || !strings.HasSuffix(g.Text(e, "±"), " †") ||
		g.BestRows()[0] != -1 {
		t.Errorf(
			"with lr=0.02 not run: entry %+v, text %q, best rows %v; want provisional, marked †, not bold",
			e,
			g.Text(e, "±"),
			g.BestRows(),
		)
	}
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if g := grid(); g.Entries[0][0].Provisional || g.BestRows()[0] != 0 || strings.Contains(g.Legend(), "†") {
		t.Errorf("with every lr run: entry %+v, best rows %v; want final, in bold", g.Entries[0][0], g.BestRows())
	}
}
