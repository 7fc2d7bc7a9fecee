package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestTableNumbers: the table's decimals, scientific notation from 1e6 on.
func TestTableNumbers(t *testing.T) {
	g := &Grid{Spec: manifests.Table{Digits: 4}}
	for v, want := range map[float64]string{0.96831: "0.9683", 999999.5: "999999.5000", 2.3096e35: "2.3096e+35", -3.488e7: "-3.4880e+07"} {
		if got := g.number(v); got != want {
			t.Errorf("number(%g) = %q, want %q", v, got, want)
		}
	}
	if got := g.Text(Entry{Mean: 0.5, Std: 0.25, Seeds: 3}, "±"); got != "0.5000 ± 0.2500" {
		t.Errorf("text = %q", got)
	}
}

// TestEntriesAreProvisionalUntilEveryChoiceFinishes: with only one of two
// learning rates run, each entry shows its figure marked † and no entry
// is bold; once both have run, none is provisional.
func TestEntriesAreProvisionalUntilEveryChoiceFinishes(t *testing.T) {
	plan := parse(t, strings.Replace(smallManifest, "sweep:\n", "sweep:\n  lr: [0.01, 0.02]\n", 1)+"table: {rows: [algorithm], value: objective_gap, select: lr}\n")
	s := openTestStore(t)
	var first []int // the cells of lr=0.01
	for i, c := range plan.Cells {
		if c.Label["lr"] == "0.01" {
			first = append(first, i)
		}
	}
	grid := func() *Grid {
		reg, err := s.FindManifest(plan.Hash)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Report(reg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := s.Grid(context.Background(), rep, Layout(plan))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if _, err := (&Runner{Store: s, Stages: DefaultStages(), Cells: first}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	g := grid()
	if !strings.Contains(g.Legend(), "† provisional: other values of lr still run") {
		t.Errorf("the legend does not explain †: %s", g.Legend())
	}
	if e := g.Entries[0][0]; !e.Provisional || e.Select != "0.01" || !strings.HasSuffix(g.Text(e, "±"), " †") || g.BestRows()[0] != -1 {
		t.Errorf("with lr=0.02 not run: entry %+v, text %q, best rows %v; want provisional, marked †, not bold", e, g.Text(e, "±"), g.BestRows())
	}
	if _, err := (&Runner{Store: s, Stages: DefaultStages()}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if g := grid(); g.Entries[0][0].Provisional || g.BestRows()[0] != 0 || strings.Contains(g.Legend(), "†") {
		t.Errorf("with every lr run: entry %+v, best rows %v; want final, in bold", g.Entries[0][0], g.BestRows())
	}
}
