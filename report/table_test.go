package report

import (
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

// TestBestEntryFollowsTheDirection: the best entry over a table's columns
// (status's "best" line) is the largest mean under best: max and the
// smallest under best: min.
func TestBestEntryFollowsTheDirection(t *testing.T) {
	for best, want := range map[string]struct {
		row  string
		mean float64
	}{"max": {"a", 0.9}, "min": {"b", 0.2}} {
		g := &Grid{Spec: manifests.Table{Best: best, Columns: []string{"partition.alpha"}},
			RowLabels: [][]string{{"a"}, {"b"}}, ColLabels: [][]string{{"0.1"}, {"1"}},
			Entries: [][]Entry{{{Mean: 0.5, Seeds: 1}, {Mean: 0.9, Seeds: 1}}, {{Mean: 0.7, Seeds: 1}, {Mean: 0.2, Seeds: 1}}}}
		label, e, ok := g.Best()
		if !ok || e.Mean != want.mean || !strings.HasPrefix(label, want.row+", ") {
			t.Errorf("best: %s: %q %v (ok %v); want row %s at %v", best, label, e.Mean, ok, want.row, want.mean)
		}
	}
}
