package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of testdata/grid.txt from what the code gives (then read the diff)")

// testCase is one case of a testdata file, in the style of pebble's
// datadriven files:
//
//	# what it shows
//	COMMAND
//	INPUT
//	----
//	EXPECTED
//	end
type testCase struct {
	line    int // of its command
	comment []string
	command string
	input   []string
	want    string
}

func readCases(t *testing.T, path string) []testCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []testCase
	var comment []string // the lines above the next case
	var c *testCase
	inWant := false
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case c == nil && line == "":
		case c == nil && strings.HasPrefix(line, "#"):
			comment = append(comment, line)
		case c == nil:
			cases = append(cases, testCase{line: n + 1, comment: comment, command: line})
			c, comment, inWant = &cases[len(cases)-1], nil, false
		case !inWant && line == "----":
			inWant = true
		case !inWant:
			c.input = append(c.input, line)
		case line == "end":
			c = nil
		default:
			c.want += line + "\n"
		}
	}
	if c != nil {
		t.Fatalf("%s: the case at line %d has no \"end\"", path, c.line)
	}
	if len(cases) == 0 {
		t.Fatalf("%s holds no case", path)
	}
	return cases
}

// runCases runs each case of a testdata file through do, which returns
// its output, and compares; with -rewrite it writes the outputs back as
// the expected ones instead.
func runCases(t *testing.T, path string, do func(t *testing.T, at string, c testCase) string) {
	var out strings.Builder
	for _, c := range readCases(t, path) {
		at := fmt.Sprintf("%s:%d", path, c.line)
		got := do(t, at, c)
		if !*rewrite && got != c.want {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", at, strings.Join(c.comment, " "), got, c.want)
		}
		for _, l := range c.comment {
			out.WriteString(l + "\n")
		}
		out.WriteString(c.command + "\n" + strings.Join(append(c.input, "----"), "\n") + "\n" + got + "end\n\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
// direction, diverged (*), missing and provisional (†) entries. A case's
// input is the manifest (with its table block), a line "finals", then one
// line per cell of the plan: CELL STATUS [FIGURE=VALUE ...].
func TestGridGolden(t *testing.T) {
	runCases(t, "testdata/grid.txt", func(t *testing.T, at string, c testCase) string {
		if c.command != "grid" {
			t.Fatalf("%s: command %q; want grid", at, c.command)
		}
		split := slices.Index(c.input, "finals")
		if split < 0 {
			t.Fatalf("%s: no line \"finals\" after the manifest", at)
		}
		plan, err := manifests.Parse("grid.yaml", []byte(strings.Join(c.input[:split], "\n")+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		g, err := NewGrid(plan, Layout(plan), finalsOf(t, at, c.input[split+1:], len(plan.Cells)))
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

// TestFoldGolden folds given events (one JSON event per line, numbered
// in order) into a cell's view and compares it with testdata/fold.txt:
// the status, where its events came from, and each stage's status, round,
// restarts, cache hit and error. A payload that does not decode is an
// error naming the event.
func TestFoldGolden(t *testing.T) {
	runCases(t, "testdata/fold.txt", func(t *testing.T, at string, c testCase) string {
		if c.command != "fold" {
			t.Fatalf("%s: command %q; want fold", at, c.command)
		}
		evs := make([]eventlog.Event, len(c.input))
		for i, line := range c.input {
			if err := json.Unmarshal([]byte(line), &evs[i]); err != nil {
				t.Fatalf("%s: event %d: %v", at, i+1, err)
			}
			evs[i].Seq = uint64(i + 1)
		}
		v, err := FoldCell("c1", evs)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		out := fmt.Sprintf("status: %s\n", v.Status)
		for _, p := range v.Imported {
			out += fmt.Sprintf("imported from %s, attempt %s, signed by %q\n", p.From, p.Attempt, p.Signer)
		}
		for _, st := range v.Stages {
			out += fmt.Sprintf("stage %s: %s, key %s, round %d/%d, restarts %d, cached %v", st.Name, st.Status, st.Key, st.Round, st.Rounds, st.Restarts, st.Cached)
			if st.Error != "" {
				out += ", error " + strconv.Quote(st.Error)
			}
			if st.Result != nil && st.Result.Diverged {
				out += ", diverged"
			}
			out += "\n"
		}
		return out
	})
}
