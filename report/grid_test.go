package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of testdata/grid.txt from what the code gives (then read the diff)")

// gridCase is one case of testdata/grid.txt, in the style of pebble's
// datadriven files:
//
//	# what it shows
//	grid
//	MANIFEST (YAML, with its table block)
//	finals
//	CELL STATUS [FIGURE=VALUE ...]   one line per cell of the plan, from 1
//	----
//	EXPECTED (the Markdown, LaTeX and CSV of the table)
//	end
type gridCase struct {
	line     int // of its "grid" line
	comment  []string
	manifest string
	finals   []string
	want     string
}

func readGridCases(t *testing.T, path string) []gridCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []gridCase
	var comment []string // the lines above the next case
	var c *gridCase
	part := ""
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case c == nil && line == "":
		case c == nil && strings.HasPrefix(line, "#"):
			comment = append(comment, line)
		case c == nil && line == "grid":
			cases = append(cases, gridCase{line: n + 1, comment: comment})
			c, comment, part = &cases[len(cases)-1], nil, "manifest"
		case c == nil:
			t.Fatalf("%s:%d: %q outside a case; a case starts with a line \"grid\"", path, n+1, line)
		case part == "manifest" && line == "finals":
			part = "finals"
		case part == "manifest":
			c.manifest += line + "\n"
		case part == "finals" && line == "----":
			part = "want"
		case part == "finals":
			c.finals = append(c.finals, line)
		case part == "want" && line == "end":
			c = nil
		case part == "want":
			c.want += line + "\n"
		}
	}
	if c != nil {
		t.Fatalf("%s: the case at line %d has no \"end\"", path, c.line)
	}
	return cases
}

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
// direction, diverged (*), missing and provisional (†) entries.
func TestGridGolden(t *testing.T) {
	const path = "testdata/grid.txt"
	cases := readGridCases(t, path)
	var out strings.Builder
	for _, c := range cases {
		at := fmt.Sprintf("%s:%d", path, c.line)
		plan, err := manifests.Parse("grid.yaml", []byte(c.manifest))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		g, err := NewGrid(plan, Layout(plan), finalsOf(t, at, c.finals, len(plan.Cells)))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		var csv bytes.Buffer
		if err := artifacts.WriteCSV(&csv, g.Table()); err != nil {
			t.Fatal(err)
		}
		got := "markdown:\n" + g.Markdown() + "latex:\n" + g.LaTeX() + "csv:\n" + csv.String()
		if !*rewrite && got != c.want {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", at, strings.Join(c.comment, " "), got, c.want)
		}
		for _, l := range c.comment {
			out.WriteString(l + "\n")
		}
		out.WriteString("grid\n" + c.manifest + "finals\n" + strings.Join(c.finals, "\n") + "\n----\n" + got + "end\n\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("%s holds no case", path)
	}
}
