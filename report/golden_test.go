package report

import (
	"bytes"
	"flag"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/datadriven"
	"github.com/ump-lab/ump/manifests"
)

var rewrite = flag.Bool(
	"rewrite",
	false,
	"rewrite the expected outputs of testdata/grid.txt from what the code gives (then read the diff)",
)

// finalsOf reads the finals lines: "N STATUS name=value ...".
func finalsOf(t *testing.T, at string, lines []string, cells int) []Final {
	t.Helper()
	finals := make([]Final, cells)
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("%s: finals line %q: want CELL STATUS [FIGURE=VALUE ...]", at, line)
		}
		i, err := strconv.Atoi(f[0])
		if err != nil || i < 1 || i > cells {
			t.Fatalf("%s: finals line %q: cell %q is not one of 1..%d", at, line, f[0], cells)
		}
		finals[i-1].Status = f[1]
		for _, kv := range f[2:] {
			name, value, ok := strings.Cut(kv, "=")
			v, err := strconv.ParseFloat(value, 64)
			if !ok || err != nil {
				t.Fatalf("%s: finals line %q: %q is not FIGURE=NUMBER", at, line, kv)
			}
			if finals[i-1].Figures == nil {
				finals[i-1].Figures = map[string]float64{}
			}
			finals[i-1].Figures[name] = v
		}
	}
	return finals
}

// TestGridGolden lays out given final figures and compares the Markdown,
// LaTeX and CSV with testdata/grid.txt: the aggregation over seeds (mean
// and sample std), the choice of the select path, the best entry's
// direction, diverged (*), missing and provisional (†) entries. A case's
// input is the manifest (with its table block), a line "finals", then one
// line per cell of the plan: CELL STATUS [FIGURE=VALUE ...].
func TestGridGolden(t *testing.T) {
	datadriven.Run(t, *rewrite, "testdata/grid.txt", func(t *testing.T, at string, c datadriven.Case) string {
		if c.Command != "grid" {
			t.Fatalf("%s: command %q; want grid", at, c.Command)
		}
		split := slices.Index(c.Input, "finals")
		if split < 0 {
			t.Fatalf("%s: no line \"finals\" after the manifest", at)
		}
		plan, err := manifests.Parse("grid.yaml", []byte(strings.Join(c.Input[:split], "\n")+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		g, err := NewGrid(plan, Layout(plan), finalsOf(t, at, c.Input[split+1:], len(plan.Cells)))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		var csv bytes.Buffer
		if err := artifacts.WriteCSV(&csv, g.Table()); err != nil {
			t.Fatal(err)
		}
		return "markdown:\n" + g.Markdown() + "latex:\n" + g.LaTeX() + "csv:\n" + csv.String()
	})
}
