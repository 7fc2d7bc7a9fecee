package dashboard

import (
	"testing"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
)

// TestBestEntryEndsWithItsTunedValue: the dashboard's best entry reads
// "mean ± std, row, column header, lr=VALUE", the value its select path
// was tuned to last; nothing before any result.
func TestBestEntryEndsWithItsTunedValue(t *testing.T) {
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"workers"},
			Value:   "test_acc_mean",
			Best:    "max",
			Digits:  2,
			Select:  "lr",
		},
		RowLabels: [][]string{{"a"}, {"b"}},
		ColLabels: [][]string{{"4"}},
		Entries: [][]report.Entry{
			{{Mean: 0.5, Std: 0.1, Seeds: 3, Select: "0.1"}},
			{{Mean: 0.75, Std: 0.25, Seeds: 3, Select: "0.01"}},
		},
	}
	if got, want := bestOf(g), "0.75 ± 0.25, b, workers=4, lr=0.01"; got != want {
		t.Errorf("best %q, want %q", got, want)
	}
	g.Entries[0][0].Missing, g.Entries[1][0].Missing = true, true
	if got := bestOf(g); got != "" {
		t.Errorf("best before any result %q, want none", got)
	}
}
