package report

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// TestAnInfiniteFinalIsDiverged: a cell whose final figure is +Inf or
// -Inf, though recorded as completed, makes its entry diverged (*), as a
// NaN does; a finite one does not.
func TestAnInfiniteFinalIsDiverged(t *testing.T) {
	plan, err := manifests.Parse(
		"s.yaml",
		[]byte("version: 1\nname: s\ntask: {dataset: quadratic}\nrounds: 2\nlr: 0.1\nalgorithm: {name: d-sum}\n"+
			"sweep:\n  topology.kind: [ring, full, star, exponential]\n  seed: [1, 2]\n"),
	)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]float64{"ring": 0.5, "full": math.Inf(1), "star": math.Inf(-1), "exponential": math.NaN()}
	finals := make([]Final, len(plan.Cells))
	for i, c := range plan.Cells {
		v := 0.25
		if c.Config.Seed == 2 {
			v = last[c.Config.Topology.Kind]
		}
		finals[i] = Final{Status: eventlog.Completed, Figures: map[string]float64{"objective_gap": v}}
	}
	g, err := NewGrid(plan, Layout(plan), finals)
	if err != nil {
		t.Fatal(err)
	}
	for r, l := range g.RowLabels {
		if got, want := g.Entries[r][0].Diverged, l[0] != "ring"; got != want {
			t.Errorf("%s, a seed's final %g: diverged %v, want %v", l[0], last[l[0]], got, want)
		}
	}
}

// TestBaselineRowIsNotComparedWithItself: with --compare ROW, every other
// row's entries say their difference to ROW's; ROW's own say nothing.
func TestBaselineRowIsNotComparedWithItself(t *testing.T) {
	e := func(vs ...float64) Entry {
		return Entry{Mean: (vs[0] + vs[1] + vs[2]) / 3, Std: 0.1, Seeds: 3, Values: vs}
	}
	g := &Grid{Spec: manifests.Table{Rows: []string{"algorithm"}, Value: "test_acc_mean", Best: "max", Digits: 2},
		RowLabels: [][]string{{"a"}, {"b"}}, ColLabels: [][]string{{}}, Baseline: []string{"a"},
		Entries: [][]Entry{{e(0.5, 0.6, 0.7)}, {e(0.7, 0.8, 0.9)}}}
	if got := g.comparisonText(0, 0); got != "" {
		t.Errorf("the baseline row compared with itself: %q", got)
	}
	if got := g.comparisonText(1, 0); got == "" {
		t.Error("the other row is not compared with the baseline")
	}
}
