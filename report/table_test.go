package report

import (
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
