package paper

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/report"
)

// paperTeX is the paper's LaTeX source where a folder beside the
// repository holds it (paper/ump-paper.tex), as CI's does, or "".
func paperTeX() string {
	found, _ := filepath.Glob(filepath.Join("..", "..", "..", "*", "paper", "ump-paper.tex"))
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// TestPublishedMatchesThePaper reads Tables 1 and 2 out of the paper's
// LaTeX source and checks every entry of published.yaml against them, as
// printed, in the paper's order: a typo in the data file fails here.
func TestPublishedMatchesThePaper(t *testing.T) {
	path := paperTeX()
	if path == "" {
		t.Skip(
			"the paper's LaTeX source is not beside the repository (no ../*/paper/ump-paper.tex; .ci/run installs " +
				"it: CI runs beside the project's shared folder)",
		)
	}
	tex, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := published.Parse(manifests.Published)
	if err != nil {
		t.Fatal(err)
	}
	src := string(tex)
	section := func(from, to string) string {
		s := src[strings.Index(src, from):]
		return s[:strings.Index(s, to)]
	}
	bold := regexp.MustCompile(`\\textbf\{\s*([^}]*?)\s*\}`)
	clean := func(s string) string { return strings.TrimSpace(bold.ReplaceAllString(s, "$1")) }
	var printed [][]string // the paper's rows, in order
	entry1 := regexp.MustCompile(`\$([^$]*?)\\pm([^$]*?)\$`)
	for _, line := range strings.Split(section(`\label{tab:acc}`, `\end{tabular}`), "\n") {
		var row []string
		for _, m := range entry1.FindAllStringSubmatch(line, -1) {
			row = append(row, clean(m[1])+" ± "+clean(m[2]))
		}
		if row != nil {
			printed = append(printed, row)
		}
	}
	entry2 := regexp.MustCompile(`\$([^$]*)\$`)
	for _, line := range strings.Split(section(`\label{tbl:impact_alpha}`, `\end{tabular}`), "\n") {
		if !strings.Contains(line, `\textt{\alg`) && !strings.HasPrefix(strings.TrimSpace(line), "& \\textt") {
			continue
		}
		var row []string
		for _, m := range entry2.FindAllStringSubmatch(line, -1) {
			v := clean(m[1])
			if v == `\star` {
				v = "*"
			}
			row = append(row, v)
		}
		printed = append(printed, row)
	}
	var transcribed [][]string
	for _, tb := range p.Tables {
		for _, r := range tb.Rows {
			if !tb.Drawn {
				transcribed = append(transcribed, r.Values)
			}
		}
	}
	if len(printed) != 28 || len(transcribed) != len(printed) {
		t.Fatalf(
			"the paper's Tables 1 and 2 have %d rows as read here (want 20 + 8); published.yaml has %d",
			len(printed),
			len(transcribed),
		)
	}
	for i := range printed {
		if strings.Join(printed[i], " | ") != strings.Join(transcribed[i], " | ") {
			t.Errorf("row %d: the paper prints %q, published.yaml says %q", i+1, printed[i], transcribed[i])
		}
	}
	for r := range p.Readings {
		if !strings.Contains(src, r) {
			t.Errorf("readings: the paper never prints %q", r)
		}
	}
	lines := strings.Split(src, "\n")
	for _, c := range p.Claims {
		switch {
		case c.Line < 1 || c.Line > len(lines):
			t.Errorf("claim %q: line %d is not a line of the paper's source", c.Claim, c.Line)
		case c.Quote == "" || !strings.Contains(lines[c.Line-1], c.Quote):
			t.Errorf(
				"claim %q: line %d of the paper's source does not say %q:\n%s",
				c.Claim,
				c.Line,
				c.Quote,
				lines[c.Line-1],
			)
		}
	}
}

// TestEveryClaimQuotesThePaper: every claim names the line of the
// paper's source that makes it, and its words (TestPublishedMatchesThePaper
// checks them against the source); a claim whose reading the text leaves
// open says how ump reads it.
func TestEveryClaimQuotesThePaper(t *testing.T) {
	p, err := published.Parse(manifests.Published)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Claims {
		if c.Line == 0 || c.Quote == "" || c.Reading == "" {
			t.Errorf(
				"claim %q: line %d, quote %q, reading %q: every claim quotes the text and says how it is read",
				c.Claim,
				c.Line,
				c.Quote,
				c.Reading,
			)
		}
	}
	if p.Confidence != 0.95 {
		t.Errorf("confidence %g, want the declared 0.95", p.Confidence)
	}
}

// TestPublishedTablesFitTheirManifests: every published table names an
// embedded paper manifest (and variants) whose table layout has each of
// its rows and columns.
func TestPublishedTablesFitTheirManifests(t *testing.T) {
	p, err := published.Parse(manifests.Published)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range p.Tables {
		for _, name := range append([]string{tb.Manifest}, tb.Variants...) {
			plan, err := manifests.Open("paper/" + name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			g, err := report.NewGrid(plan, report.Layout(plan), make([]report.Final, len(plan.Cells)))
			if err != nil {
				t.Fatal(err)
			}
			has := func(labels [][]string, l string) bool {
				for _, x := range labels {
					if strings.Join(x, " / ") == l {
						return true
					}
				}
				return false
			}
			for _, r := range tb.Rows {
				if !has(g.RowLabels, r.Row) {
					t.Errorf("%s: no row %q in the manifest's table (rows: %v)", name, r.Row, g.RowLabels)
				}
			}
			for _, c := range tb.Columns {
				if !has(g.ColLabels, c) {
					t.Errorf("%s: no column %q in the manifest's table (columns: %v)", name, c, g.ColLabels)
				}
			}
		}
	}
}

// TestARowDivergedWhereItRanDecidesNothing: a row whose every entry that
// ran diverged, the others not run, is named as such and decides nothing,
// as a row diverged in every cell is; the other rows decide the claim.
func TestARowDivergedWhereItRanDecidesNothing(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["0.1", "1"]
    rows:
      - {row: "a(x=1)", name: A, values: ["50.0 ± 1.0", "60.0 ± 1.0"]}
      - {row: "c(x=1)", name: C, values: ["50.0 ± 1.0", "60.0 ± 1.0"]}
      - {row: "d(x=1)", name: D, values: ["50.0 ± 1.0", "60.0 ± 1.0"]}
claims:
  - {claim: rises, tables: [toy], rises: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := func(mean float64) report.Entry { return report.Entry{Mean: mean, Std: 0.01, Seeds: 3} }
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"a(x=1)"}, {"c(x=1)"}, {"d(x=1)"}},
		ColLabels: [][]string{{"0.1"}, {"1"}},
		Entries: [][]report.Entry{
			{e(0.60), e(0.70)},
			{e(0.70), e(0.60)},
			{{Diverged: true}, {Missing: true}},
		},
	}
	want := "fails: holds for A; fails for C (C: partition.alpha=0.1 70.00, partition.alpha=1 60.00); D diverged in " +
		"the only cell run (1 entry not run)"
	if got := ComparePaper(p, nil, g, p.Table("toy"), nil).Claims[0].Ours; got != want {
		t.Errorf("ours %q, want %q", got, want)
	}
}

// TestClaimsAreDecided decides each kind of claim on a constructed table
// where the answer is known, on ours and on the paper's numbers.
func TestClaimsAreDecided(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["0.1", "1", "10"]
    rows:
      - {row: "a(x=1)", name: A, values: ["50.0 ± 1.0", "60.0 ± 1.0", "70.0 ± 1.0"]}
      - {row: "b(x=1)", name: B, values: ["40.0 ± 1.0", "61.0 ± 1.0", "*"]}
      - {row: "c(x=1)", name: C, values: ["50.0 ± 1.0", "60.0 ± 1.0", "60.0 ± 1.0"]}
  - manifest: flat
    paper: Flat
    columns: ["0.1", "1"]
    rows:
      - {row: "c(x=1)", name: C, values: ["50.0", "50.0"]}
claims:
  - {claim: A over B, tables: [toy], order: [A, B]}
  - {claim: A over B at 0.1, tables: [toy], order: [A, B], columns: ["0.1"], strict: true}
  - {claim: rises, tables: [toy], rises: true}
  - {claim: A best at 10, tables: [toy], best: {A: "10"}}
  - {claim: B best at 1, tables: [toy], best: {B: "1"}}
  - {claim: A over C at 0.1, tables: [toy], order: [A, C], columns: ["0.1"], strict: true}
  - {claim: flat rises, tables: [flat], rises: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := func(mean float64) report.Entry { return report.Entry{Mean: mean, Std: 0.01, Seeds: 3} }
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"b(x=1)"}, {"a(x=1)"}, {"c(x=1)"}},
		ColLabels: [][]string{{"0.1"}, {"1"}, {"10"}},
		Entries: [][]report.Entry{
			{e(0.45), e(0.58), {Diverged: true}},
			{e(0.40), e(0.62), {Missing: true}},
			{e(0.35), e(0.61), e(0.62)},
		},
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), nil)
	want := []struct{ ours, paper string }{
		{"fails (partition.alpha=0.1: A 40.00, B 45.00)", "fails (partition.alpha=1: A 60.00, B 61.00)"},
		{"fails (partition.alpha=0.1: A 40.00, B 45.00)", "holds"},
		{
			"fails by divergence: not run for A (1 entry missing, e.g. A at partition.alpha=10); fails by divergence " +
				"for B (B: partition.alpha=1 58.00, partition.alpha=10 *); " +
				"not decided for C (1 of 2 comparisons within the noise at 95%, e.g. C: partition.alpha=1 61.00, " +
				"partition.alpha=10 62.00: difference +1.00, 95% interval [-1.27, +3.27])",
			"fails: holds for A; fails by divergence for B (B: partition.alpha=1 61.00, partition.alpha=10 *); fails " +
				"for C (C: partition.alpha=1 60.00, partition.alpha=10 60.00)",
		},
		{"not run (1 entry missing, e.g. A at partition.alpha=10)", "holds"},
		{"holds", "holds"},
		{"holds", "fails (partition.alpha=0.1: A 50.00, C 50.00)"},
	}
	for i, v := range pc.Claims {
		if v.Ours != want[i].ours || v.Paper != want[i].paper {
			t.Errorf(
				"claim %q: ours %q, paper %q; want %q, %q",
				v.Claim.Claim,
				v.Ours,
				v.Paper,
				want[i].ours,
				want[i].paper,
			)
		}
	}
	a := pc.Entries[0][0] // A at 0.1: ours 40 ± 1 (over 3 seeds), the paper's 50
	if math.Abs(a.Diff+10) > 1e-9 || a.Inside || !a.HasInterval {
		t.Errorf("A at 0.1: difference %v, inside %v; want -10, outside", a.Diff, a.Inside)
	}
	if b := pc.Entries[1][0]; math.Abs(b.Diff-5) > 1e-9 || b.Inside {
		t.Errorf("B at 0.1: difference %v, inside %v; want 5, outside", b.Diff, b.Inside)
	}
	if c := pc.Entries[2][1]; !c.Inside { // 61 ± 1 over 3 seeds: [58.5, 63.5]
		t.Errorf("C at 1: the paper's 60 is not inside [%v, %v]", c.Lo, c.Hi)
	}
	// Column 0.1: we rank B > A > C, the paper A = C > B: pairs (A, B)
	// and (B, C) discordant, (A, C) tied in the paper's.
	if tau := pc.Taus[0]; tau.N != 3 || math.Abs(tau.Tau-(-2/math.Sqrt(3*2))) > 1e-12 {
		t.Errorf("column 0.1: tau %+v, want -2/sqrt(6) over 3 rows", tau)
	}
	flat := ComparePaper(p, nil, g, p.Table("flat"), nil)
	if v := flat.Claims[0]; v.Paper != "fails (C: partition.alpha=0.1 50.00, partition.alpha=1 50.00)" {
		t.Errorf("a flat row rises: %q", v.Paper)
	}
	if md := pc.Markdown(); strings.Contains(md, "rovisional:") || strings.Contains(md, "(provisional)") {
		t.Errorf("a comparison without departures is called provisional:\n%s", md)
	}
	pc.Departures = []string{"5 rounds (the manifest's 100)"}
	md := pc.Markdown()
	if !strings.Contains(
		md,
		"Provisional: a variant of "+pc.Paper.Paper+". This run departs from the paper's set-up and protocol (5 "+
			"rounds (the manifest's 100))",
	) ||
		strings.Count(md, "(provisional)") != len(pc.Claims) {
		t.Errorf(
			"a comparison on a departing run does not say it is provisional, at the top and at each claim:\n%s",
			md,
		)
	}
}

// TestClaimKindsOfTheFiguresAreDecided decides worst, column_order, falls
// and widens on the toy table of TestClaimsAreDecided, on ours and on the
// paper's numbers, and a claim on a drawn table on ours alone.
func TestClaimKindsOfTheFiguresAreDecided(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["0.1", "1", "10"]
    rows:
      - {row: "a(x=1)", name: A, values: ["50.0 ± 1.0", "60.0 ± 1.0", "70.0 ± 1.0"]}
      - {row: "b(x=1)", name: B, values: ["40.0 ± 1.0", "61.0 ± 1.0", "*"]}
      - {row: "c(x=1)", name: C, values: ["50.0 ± 1.0", "60.0 ± 1.0", "60.0 ± 1.0"]}
  - manifest: drawn
    paper: Figure D
    drawn: true
    columns: ["0.1", "1", "10"]
    rows:
      - {row: "b(x=1)", name: B}
      - {row: "c(x=1)", name: C}
claims:
  - {claim: C worst at 0.1, tables: [toy], worst: {C: "0.1"}}
  - {claim: B worst at 0.1, tables: [toy], worst: {B: "0.1"}}
  - {claim: C higher at 1 and 10 than at 0.1, tables: [toy], column_order: [["1", "10"], "0.1"], rows: [C]}
  - {claim: all higher at 1 and 10 than at 0.1, tables: [toy], column_order: [["1", "10"], "0.1"]}
  - {claim: B falls, tables: [toy], falls: true, rows: [B]}
  - {claim: B falls from 1, tables: [toy], falls: true, rows: [B], columns: ["1", "10"]}
  - {claim: C's lead over A widens, tables: [toy], widens: [C, A]}
  - {claim: C's lead over B widens, tables: [toy], widens: [C, B]}
  - {claim: C over B, tables: [drawn], order: [C, B], columns: ["1", "10"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := func(mean float64) report.Entry { return report.Entry{Mean: mean, Std: 0.01, Seeds: 3} }
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"b(x=1)"}, {"a(x=1)"}, {"c(x=1)"}},
		ColLabels: [][]string{{"0.1"}, {"1"}, {"10"}},
		Entries: [][]report.Entry{
			{e(0.45), e(0.58), {Diverged: true}},
			{e(0.40), e(0.62), {Missing: true}},
			{e(0.35), e(0.61), e(0.62)},
		},
	}
	want := []struct{ ours, paper string }{
		{"holds", "holds"},
		{
			"fails by divergence (B: partition.alpha=10 *, partition.alpha=0.1 45.00)",
			"fails by divergence (B: partition.alpha=10 *, partition.alpha=0.1 40.00)",
		},
		{"holds", "holds"},
		{
			"fails by divergence: holds for C; not run for A (1 entry missing, e.g. A at partition.alpha=10); fails " +
				"by divergence for B (B: partition.alpha=10 *, partition.alpha=0.1 45.00)",
			"fails by divergence: holds for A and C; fails by divergence for B (B: partition.alpha=10 *, " +
				"partition.alpha=0.1 40.00)",
		},
		{
			"fails (B: partition.alpha=0.1 45.00, partition.alpha=1 58.00)",
			"fails (B: partition.alpha=0.1 40.00, partition.alpha=1 61.00)",
		},
		{"holds by divergence", "holds by divergence"}, // B at 10 diverged: below 58.00 and 61.00
		{
			"not run (1 entry missing, e.g. A at partition.alpha=10)",
			"fails (C − A: partition.alpha=0.1 +0.00, partition.alpha=1 +0.00)",
		},
		{"holds", "fails (C − B: partition.alpha=0.1 +10.00, partition.alpha=1 -1.00)"},
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), nil)
	if len(pc.Claims) != len(want) {
		t.Fatalf("%d claims decided, want %d", len(pc.Claims), len(want))
	}
	for i, v := range pc.Claims {
		if v.Ours != want[i].ours || v.Paper != want[i].paper {
			t.Errorf(
				"claim %q: ours %q, paper %q; want %q, %q",
				v.Claim.Claim,
				v.Ours,
				v.Paper,
				want[i].ours,
				want[i].paper,
			)
		}
	}
	drawn := ComparePaper(p, nil, g, p.Table("drawn"), nil)
	if v := drawn.Claims[0]; v.Ours != "holds" || v.Paper != "no numbers (the paper draws this as a figure)" {
		t.Errorf("a claim on a drawn table: ours %q, paper %q", v.Ours, v.Paper)
	}
	if md := drawn.Markdown(); !strings.Contains(md, "| C | 35.00 ± 1.00 [") || strings.Contains(md, " · ") ||
		!strings.Contains(md, "prints no numbers") ||
		strings.Contains(md, "Rank agreement") {
		t.Errorf("a drawn table's comparison shows more than ours:\n%s", md)
	}
	for _, bad := range []string{
		"tables: [{manifest: d, paper: D, drawn: true, columns: [\"1\"], rows: [{row: a, name: A, values: [\"1\"]}]}]",
		"tables: [{manifest: d, paper: D, columns: [\"1\"], rows: [{row: a, name: A, values: [\"1\"]}]}]\nclaims: " +
			"[{claim: c, tables: [d], widens: [A]}]",
	} {
		if _, err := published.Parse([]byte(bad)); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
}

// TestGroupMeansReadTrendsOnAverage: a column_order read on each group's
// mean (group_means) holds where one entry of the group is below but the
// mean is above, is refuted by a diverged entry in the upper group, and is
// not decided where the interval of the difference of the means holds 0;
// its interval is scipy's (Welch on the terms s²/n/k², 4 degrees of
// freedom here: difference +1.00, 95% [-8.82, +10.82]). The entry-by-entry
// reading of the same columns fails on the first row.
func TestGroupMeansReadTrendsOnAverage(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    drawn: true
    columns: ["0.1", "1", "10"]
    rows:
      - {row: "a(x=1)", name: A}
      - {row: "b(x=1)", name: B}
      - {row: "c(x=1)", name: C}
claims:
  - {claim: on average, tables: [toy], column_order: [["1", "10"], ["0.1"]], group_means: true}
  - {claim: entry by entry, tables: [toy], column_order: [["1", "10"], ["0.1"]], rows: [A]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := func(mean, std float64) report.Entry { return report.Entry{Mean: mean, Std: std, Seeds: 3} }
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"a(x=1)"}, {"b(x=1)"}, {"c(x=1)"}},
		ColLabels: [][]string{{"0.1"}, {"1"}, {"10"}},
		Entries: [][]report.Entry{
			{e(0.65, 0.001), e(0.62, 0.001), e(0.70, 0.001)},
			{e(0.65, 0.001), {Diverged: true}, e(0.90, 0.001)},
			{e(0.65, 0.05), e(0.66, 0.05), e(0.66, 0.05)},
		},
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), nil)
	want := []string{
		"fails by divergence: holds for A; fails by divergence for B (B: the mean at partition.alpha=1, " +
			"partition.alpha=10 *, the mean at partition.alpha=0.1 65.00); " +
			"not decided for C (1 of 1 comparisons within the noise at 95%, e.g. C: the mean at partition.alpha=1, " +
			"partition.alpha=10 66.00, the mean at partition.alpha=0.1 65.00: difference " +
			"+1.00, 95% interval [-8.82, +10.82])",
		"fails (A: partition.alpha=1 62.00, partition.alpha=0.1 65.00)",
	}
	for i, v := range pc.Claims {
		if v.Ours != want[i] {
			t.Errorf("claim %q: ours %q;\nwant %q", v.Claim.Claim, v.Ours, want[i])
		}
	}
	if _, err := published.Parse([]byte("tables: [{manifest: d, paper: D, columns: [\"1\"], rows: [{row: a, name: A, " +
		"values: [\"1\"]}]}]\nclaims: [{claim: c, tables: [d], order: [A], group_means: true}]")); err == nil {
		t.Error("group_means without a column_order accepted")
	}
}

// TestConvergenceIsDecidedOnTheCurves: a converges claim is decided on
// each entry's curve (the first round within the given points of its
// last), not left to the finals; without curves it is undecided.
func TestConvergenceIsDecidedOnTheCurves(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["0.1", "1"]
    rows:
      - {row: "a(x=1)", name: A, values: ["50.0", "60.0"]}
      - {row: "b(x=1)", name: B, values: ["40.0", "61.0"]}
claims:
  - {claim: A fast, tables: [toy], converges: {within: 0.5, fewer: 0.4, faster: [A, B]}}
  - {claim: A faster at all, tables: [toy], converges: {within: 0.5, fewer: 0, faster: [A, B]}}
  - {claim: B fast, tables: [toy], converges: {within: 0.5, fewer: 0, faster: [B, A]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	g := curvesGrid([]string{"a(x=1)", "b(x=1)"}, []string{"0.1", "1"})
	curve := func(means ...float64) figure.Series { return roundCurve(0, means...) }
	curves := []figure.Figure{
		// column 0.1: A within 0.5 points of its last at round 20, B at 40
		{Series: []figure.Series{curve(0.5, 0.896, 0.9, 0.9, 0.9), curve(0.5, 0.6, 0.7, 0.899, 0.9)}},
		// column 1: A at round 30, B at 40 (A not 40% faster here)
		{Series: []figure.Series{curve(0.5, 0.6, 0.9, 0.9, 0.9), curve(0.5, 0.6, 0.7, 0.899, 0.9)}},
	}
	want := []string{
		"fails (partition.alpha=1: A gets within 0.5 points of its final at round 30, B at round 40)",
		"holds",
		"fails (partition.alpha=0.1: B gets within 0.5 points of its final at round 40, A at round 20)",
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), curves)
	for i, v := range pc.Claims {
		if v.Ours != want[i] || v.Paper != "no numbers (the paper draws the curves)" {
			t.Errorf("claim %q: ours %q, paper %q; want %q", v.Claim.Claim, v.Ours, v.Paper, want[i])
		}
	}
	curves[1].Series[1].DivergedSeeds = 1 // B never gets there in column 1
	if v := ComparePaper(p, nil, g, p.Table("toy"), curves).Claims[0]; v.Ours != "holds" {
		t.Errorf("against a diverged row: %q, want holds", v.Ours)
	}
	curves[1].Series[1].DivergedSeeds, curves[1].Series[0].DivergedSeeds = 0, 1 // A never gets there in column 1
	diverged := "fails by divergence " +
		"(partition.alpha=1: A gets within 0.5 points of its final never (it diverged), B at round 40)"
	if v := ComparePaper(p, nil, g, p.Table("toy"), curves).Claims[0]; v.Ours != diverged {
		t.Errorf("a diverged row: %q, want %q", v.Ours, diverged)
	}
	if v := ComparePaper(p, nil, g, p.Table("toy"), nil).Claims[0]; !strings.HasPrefix(v.Ours, "not decided here") {
		t.Errorf("without curves: %q", v.Ours)
	}
	table := "tables: [{manifest: toy, paper: Toy, columns: [\"1\"], rows: [{row: a, name: A, values: [\"1\"]}, " +
		"{row: b, name: B, values: [\"2\"]}]}]\n"
	for _, bad := range []string{"{within: 0, fewer: 0.4, faster: [A, B]}", "{within: 0.5, " +
		"fewer: 1, faster: [A, B]}", "{within: 0.5, fewer: 0.4, faster: [A]}"} {
		if _, err := published.Parse([]byte(table + "claims: [{claim: c, tables: [toy], converges: " + bad +
			"}]")); err == nil ||
			!strings.Contains(err.Error(), "converges needs") {
			t.Errorf("converges: %s accepted (%v)", bad, err)
		}
	}
}

// curvesGrid is a grid of algorithm rows by non-IID columns whose every
// entry is 0.9 over 3 seeds: convergence claims read the curves alone.
func curvesGrid(rows, cols []string) *report.Grid {
	spec := manifests.Table{Rows: []string{"algorithm"}, Columns: []string{"partition.alpha"}, Value: "test_acc_mean"}
	g := &report.Grid{Spec: spec}
	for _, r := range rows {
		g.RowLabels = append(g.RowLabels, []string{r})
		entries := make([]report.Entry, len(cols))
		for c := range entries {
			entries[c] = report.Entry{Mean: 0.9, Seeds: 3}
		}
		g.Entries = append(g.Entries, entries)
	}
	for _, c := range cols {
		g.ColLabels = append(g.ColLabels, []string{c})
	}
	return g
}

// roundCurve is a curve over rounds 10 to 50 of 3 seeds, diverged of them
// diverged.
func roundCurve(diverged int, means ...float64) figure.Series {
	x := []float64{10, 20, 30, 40, 50}
	return figure.Series{X: x, Mean: means, Std: make([]float64, len(x)), Seeds: 3, DivergedSeeds: diverged}
}

// TestConvergenceFailsByDivergenceOnlyWhereEveryFailingRowDoes: D-SUM
// fails on two rounds reached beside a GT-DSUM that diverged, so the
// claim fails, not by divergence (docs/tables.md), whichever pair comes
// first; with D-SUM in time, GT-DSUM's divergence alone decides it.
func TestConvergenceFailsByDivergenceOnlyWhereEveryFailingRowDoes(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["0.1", "10"]
    rows:
      - {row: "g(x=1)", name: GT-DSUM, values: ["50.0", "60.0"]}
      - {row: "d(x=1)", name: D-SUM, values: ["50.0", "60.0"]}
      - {row: "l(x=1)", name: Local, values: ["40.0", "61.0"]}
claims:
  - {claim: fewer rounds, tables: [toy], converges: {within: 0.5, fewer: 0.4, faster: [[D-SUM, GT-DSUM], Local]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	g := curvesGrid([]string{"g(x=1)", "d(x=1)", "l(x=1)"}, []string{"0.1", "10"})
	curve := roundCurve
	fast, slow := []float64{0.5, 0.9, 0.9, 0.9, 0.9}, []float64{0.5, 0.6, 0.7, 0.899, 0.9}
	curves := []figure.Figure{
		// α = 0.1: GT-DSUM diverged; D-SUM within 0.5 points at round 20, Local at 40
		{Series: []figure.Series{curve(1, fast...), curve(0, fast...), curve(0, slow...)}},
		// α = 10: D-SUM at round 40, as Local
		{Series: []figure.Series{curve(0, fast...), curve(0, slow...), curve(0, slow...)}},
	}
	gtDiverged := "(partition.alpha=0.1: GT-DSUM gets within 0.5 points of its final never " +
		"(it diverged), Local at round 40)"
	want := "fails: fails for D-SUM (partition.alpha=10: D-SUM gets within 0.5 points of its final at round 40, " +
		"Local at round 40); fails by divergence for GT-DSUM " + gtDiverged
	if v := ComparePaper(p, nil, g, p.Table("toy"), curves).Claims[0]; v.Ours != want {
		t.Errorf("D-SUM failing beside a diverged GT-DSUM:\n got %q\nwant %q", v.Ours, want)
	}
	curves[1].Series[1] = curve(0, fast...) // D-SUM in time at α = 10
	want = "fails by divergence " + gtDiverged
	if v := ComparePaper(p, nil, g, p.Table("toy"), curves).Claims[0]; v.Ours != want {
		t.Errorf("GT-DSUM failing alone by divergence:\n got %q\nwant %q", v.Ours, want)
	}
}

// TestVerdictsSayWhatTheDataDecide: a comparison inside the noise leaves a
// claim not decided; a row that diverged in every cell a claim reads
// cannot decide it, and the claim says which rows decide it; one seed
// decides nothing. On ours, and on the paper's numbers as printed.
func TestVerdictsSayWhatTheDataDecide(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["1", "5", "10"]
    rows:
      - {row: "a", name: A, values: ["95.0", "98.0", "98.5"]}
      - {row: "b", name: B, values: ["90.0", "97.0", "97.5"]}
      - {row: "c", name: C, values: ["*", "*", "*"]}
      - {row: "d", name: D, values: ["99.0", "99.0", "99.0"]}
claims:
  - {claim: all worst at 1, tables: [toy], worst: {A: "1", B: "1", C: "1"}}
  - {claim: A over B, tables: [toy], order: [A, B]}
  - {claim: C over A, tables: [toy], order: [C, A]}
  - {claim: C falls, tables: [toy], falls: true, rows: [C]}
  - {claim: A and C over B, tables: [toy], order: [[A, C], B]}
  - {claim: D over A at 1, tables: [toy], order: [D, A], columns: ["1"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := func(mean float64) report.Entry { return report.Entry{Mean: mean, Std: 0.01, Seeds: 3} }
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"a"}, {"b"}, {"c"}, {"d"}},
		ColLabels: [][]string{{"1"}, {"5"}, {"10"}},
		Entries: [][]report.Entry{
			{e(0.95), e(0.98), e(0.985)},
			{e(0.90), e(0.97), e(0.975)},
			{{Diverged: true}, {Diverged: true}, {Diverged: true}},
			{{Mean: 0.99, Seeds: 1}, {Mean: 0.99, Seeds: 1}, {Mean: 0.99, Seeds: 1}},
		},
	}
	// 1 point of std over 3 seeds on each side: the difference's 95%
	// interval is ±2.776·√(2/3) = ±2.27 points (Welch, 4 degrees of freedom).
	want := []struct{ ours, paper string }{
		{
			"not decided: holds for A and B; C diverged in all 3 cells",
			"not decided: holds for A and B; C diverged in all 3 cells",
		},
		{
			"not decided (2 of 3 comparisons within the noise at 95%, e.g. partition.alpha=5: A 98.00, B 97.00: " +
				"difference +1.00, 95% interval [-1.27, +3.27])",
			"holds",
		},
		{"cannot be decided: C diverged in all 3 cells", "cannot be decided: C diverged in all 3 cells"},
		{"cannot be decided: C diverged in all 3 cells", "cannot be decided: C diverged in all 3 cells"},
		{
			"not decided: not decided for A (2 of 3 comparisons within the noise at 95%, e.g. partition.alpha=5: A " +
				"98.00, B 97.00: difference +1.00, 95% interval [-1.27, +3.27]); C diverged in all 3 cells",
			"not decided: holds for A; C diverged in all 3 cells",
		},
		{
			"not decided (1 of 1 comparisons within the noise at 95%, e.g. partition.alpha=1: D 99.00, " +
				"A 95.00: one seed, no interval)",
			"holds",
		},
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), nil)
	if len(pc.Claims) != len(want) {
		t.Fatalf("%d claims decided, want %d", len(pc.Claims), len(want))
	}
	for i, v := range pc.Claims {
		if v.Ours != want[i].ours || v.Paper != want[i].paper {
			t.Errorf(
				"claim %q:\nours  %q\npaper %q\nwant  %q\n      %q",
				v.Claim.Claim,
				v.Ours,
				v.Paper,
				want[i].ours,
				want[i].paper,
			)
		}
	}
	// More seeds could decide A over B at 5 and 10, and D over A at 1 (one
	// seed); nothing where C, which diverged throughout, takes part.
	if got, want := pc.NoisyEntries(), [][2]int{{0, 1}, {1, 1}, {0, 2}, {1, 2}, {3, 0}, {0, 0}}; !slices.Equal(
		got,
		want,
	) {
		t.Errorf("entries within the noise %v, want %v", got, want)
	}
	p.Confidence = 0.5 // the t quantile of 4 degrees of freedom at 75%: 0.741, ±0.61 points
	if v := ComparePaper(p, nil, g, p.Table("toy"), nil).Claims[1]; v.Ours != "holds" {
		t.Errorf("A over B at 50%%: %q, want holds", v.Ours)
	}
	if md := pc.Markdown(); !strings.Contains(md, "decided at 95% by Welch's interval") ||
		!strings.Contains(md, "cannot be decided where a row diverged in every cell") {
		t.Errorf("the legend does not define the verdicts:\n%s", md)
	}
}

// TestClaimsSayWhenTheyDependOnAChoiceWithinTheNoise: a claim whose
// verdict changes when an unstable choice of lr is replaced by its
// runner-up says so, and so does an entry whose place inside or outside
// the paper's interval changes; a stable choice is not questioned.
func TestClaimsSayWhenTheyDependOnAChoiceWithinTheNoise(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["1"]
    rows:
      - {row: "a", name: A, values: ["95.0"]}
      - {row: "b", name: B, values: ["92.0"]}
claims:
  - {claim: A over B, tables: [toy], order: [A, B], strict: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	runnerUp := report.Entry{Mean: 0.90, Std: 0.01, Seeds: 3, Select: "0.2"}
	for _, c := range []struct {
		stability   float64
		want, entry string
	}{
		{0.6, "holds (depends on a choice within the noise: with A's runner-up lr=0.2 it is not decided)",
			"| A | 95.00 ± 1.00 [92.52, 97.48] · 95.0 · +0.00 · inside (outside with A's runner-up lr=0.2) |"},
		{0.95, "holds;", "| A | 95.00 ± 1.00 [92.52, 97.48] · 95.0 · +0.00 · inside |"},
	} {
		sel := &report.Selection{RunnerUp: "0.2", Margin: 0.05, Stability: c.stability}
		g := &report.Grid{
			Spec: manifests.Table{
				Rows:    []string{"algorithm"},
				Columns: []string{"partition.alpha"},
				Value:   "test_acc_mean",
				Select:  "lr",
			},
			RowLabels: [][]string{{"a"}, {"b"}},
			ColLabels: [][]string{{"1"}},
			Entries: [][]report.Entry{
				{{Mean: 0.95, Std: 0.01, Seeds: 3, Select: "0.1", Selection: sel, RunnerUpEntry: &runnerUp}},
				{{Mean: 0.92, Std: 0.01, Seeds: 3, Select: "0.1"}},
			},
		}
		md := ComparePaper(p, nil, g, p.Table("toy"), nil).Markdown()
		if !strings.Contains(md, "- A over B: ours "+c.want) {
			t.Errorf("stability %v: want the claim to read %q:\n%s", c.stability, c.want, md)
		}
		if !strings.Contains(md, c.entry+"\n") {
			t.Errorf("stability %v: want A's entry to read %q:\n%s", c.stability, c.entry, md)
		}
	}
}
