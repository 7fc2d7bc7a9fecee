package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"
)

// TestPaperTableLayouts lays out every embedded paper manifest's table on
// a store where no cell has run: the layout covers the sweep and has the
// paper's rows and columns, every entry not run yet.
func TestPaperTableLayouts(t *testing.T) {
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	shape := map[string][2]int{ // name prefix -> rows x columns
		"paper/table1-": {5, 3}, "paper/table2-": {2, 10}, "paper/fig-local-steps-": {3, 5},
		"paper/fig-momentum-": {3, 5}, "paper/fig-workers-": {3, 4}, "paper/compression-": {6, 2}, "quickstart": {5, 1},
		"paper/gt-dsum-readings-": {15, 5},
		// the paper's five rows and D-SUM and GT-DSUM under the favoured reading
		// (and the honest-tuning variant of each, paper/table1-mnist-honest)
		"paper/table1-mnist": {7, 3}, "paper/table1-fashion-mnist": {7, 3},
	}
	laid := 0
	for _, name := range manifests.Embedded() {
		var want [2]int
		longest := ""
		for prefix, sh := range shape {
			if strings.HasPrefix(name, prefix) && len(prefix) > len(longest) {
				want, longest = sh, prefix
			}
		}
		if want == [2]int{} {
			continue
		}
		plan, err := manifests.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		reg := &state.Registration{Plan: *plan}
		for i := range plan.Cells {
			reg.CellKeys = append(reg.CellKeys, fmt.Sprintf("never-run-%d", i))
		}
		rep, err := s.Source().Report(reg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := report.ReadGrid(context.Background(), s.Source(), rep, *plan.Manifest.Table)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(g.RowLabels) != want[0] || len(g.ColLabels) != want[1] {
			t.Errorf(
				"%s: %d x %d table (rows %v, columns %v); want %d x %d",
				name,
				len(g.RowLabels),
				len(g.ColLabels),
				g.RowLabels,
				g.ColLabels,
				want[0],
				want[1],
			)
		}
		for _, row := range g.Entries {
			for _, e := range row {
				if !e.Missing {
					t.Errorf("%s: an entry of a table with no cell run is not missing: %+v", name, e)
				}
			}
		}
		laid++
	}
	if laid != 28 {
		t.Errorf(
			"laid out %d tables; want the 27 paper manifests (4 of them honest-tuning variants) and the quickstart",
			laid,
		)
	}
}
