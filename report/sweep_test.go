package report

import (
	"math"
	"slices"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestSweepFigureDrawsTheTable: one series per row through its entries,
// x the column index with the column values as categories, the entries'
// means and stds, NaN (a gap) where an entry diverged or has not run, the
// row's one tuned lr in its legend (or "per entry" when they differ); no
// figure without exactly one column path.
func TestSweepFigureDrawsTheTable(t *testing.T) {
	e := func(mean, std float64, lr string) Entry { return Entry{Mean: mean, Std: std, Seeds: 3, Select: lr} }
	g := &Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"local_steps"},
			Value:   "test_acc_mean",
			Select:  "lr",
			Labels:  map[string]string{"local_steps": "local steps K", "d-sum": "D-SUM"},
		},
		RowLabels: [][]string{{"d-sum"}, {"gt-dsum"}},
		ColLabels: [][]string{{"1"}, {"5"}, {"10"}},
		Entries: [][]Entry{
			{e(0.9, 0.01, "0.1"), e(0.95, 0.02, "0.1"), e(0.97, 0.01, "0.1")},
			{e(0.8, 0.05, "0.1"), {Diverged: true}, e(0.96, 0.01, "0.01")},
		},
	}
	f, ok := g.SweepFigure("fig")
	if !ok {
		t.Fatal("no figure for a table with one column path")
	}
	if !slices.Equal(f.Categories, []string{"1", "5", "10"}) || f.X != "local steps K" || len(f.Series) != 2 {
		t.Fatalf("figure %+v", f)
	}
	d, gt := f.Series[0], f.Series[1]
	if d.Label != "D-SUM" || d.Select != "lr=0.1" || !slices.Equal(d.X, []float64{0, 1, 2}) ||
		!slices.Equal(
			d.Mean,
			[]float64{0.9, 0.95, 0.97},
		) || !slices.Equal(d.Std, []float64{0.01, 0.02, 0.01}) || d.Seeds != 3 {
		t.Errorf("D-SUM's series %+v", d)
	}
	if gt.Label != "gt-dsum (* diverged at 5)" || gt.Select != "lr per entry" || !math.IsNaN(gt.Mean[1]) ||
		gt.Mean[2] != 0.96 {
		t.Errorf("GT-DSUM's series %+v", gt)
	}
	g.Spec.Columns = nil
	if _, ok := g.SweepFigure("fig"); ok {
		t.Error("a figure for a table without a column path")
	}
}

// TestFigureTitleSaysTheRunWasScaled: a figure of a run at --scale says
// how many of the manifest's rounds ran; one in full is the manifest's name.
func TestFigureTitleSaysTheRunWasScaled(t *testing.T) {
	src := "version: 1\nname: q\ntask: {dataset: quadratic}\nrounds: 100\nlr: 0.1\nalgorithm: {name: d-sum}\n"
	full, err := manifests.Parse("q.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := manifests.Parse("q.yaml", []byte(src+"scale: 0.05\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := FigureTitle(full); got != "q" {
		t.Errorf("full run: %q", got)
	}
	if got := FigureTitle(scaled); got != "q (scaled: 5 of 100 rounds)" {
		t.Errorf("scaled run: %q", got)
	}
}
