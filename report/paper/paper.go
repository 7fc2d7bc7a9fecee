package paper

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/stats"
)

// scaled is vals times k, in a new slice.
func scaled(vals []float64, k float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = v * k
	}
	return out
}

// PaperEntry is one entry of a comparison: ours (in percent) beside the
// paper's.
type PaperEntry struct {
	Ours        report.Entry // Missing when the grid has no such entry
	Lo, Hi      float64      // our 95% interval of the mean (HasInterval)
	HasInterval bool         // two seeds or more
	Paper       published.Value
	Diff        float64 // ours − the paper's mean, in points (when both are numbers)
	Inside      bool    // the paper's mean lies in our interval
	// Depends says where a choice of the select path within the noise
	// decides Inside: "outside with D-SUM's runner-up lr=0.1".
	Depends []string
}

// comparable reports whether both sides are numbers.
func (e PaperEntry) comparable() bool {
	return !e.Ours.Missing && !e.Ours.Diverged && e.Paper.Printed != "" && !e.Paper.Diverged
}

// Tau is the rank agreement of a column: Kendall's tau-b between our
// order of the rows and the paper's, over N rows with both.
type Tau struct {
	Tau float64 // NaN when undefined (fewer than 2 rows, or all tied)
	N   int
}

// Verdict is a claim decided on our results and on the paper's.
type Verdict struct {
	Claim       *published.Claim
	Ours, Paper string // "holds", "fails …", "not decided …", "cannot be decided: …" or "not run …"
	// Depends says how our verdict changes where a choice of the select
	// path within the noise is replaced by its runner-up.
	Depends []string
	noisy   [][2]int // the entries (paper table row, column) our data leave within the noise
}

// NoisyEntries are the grid's entries (row, column) that a claim compares
// within the noise on our results: where more seeds could decide it.
func (pc *PaperComparison) NoisyEntries() [][2]int {
	var out [][2]int
	for _, v := range pc.Claims {
		for _, at := range v.noisy {
			r, c := pc.Grid.RowLabeled(pc.Paper.Rows[at[0]].Row), pc.Grid.ColumnLabeled(pc.Paper.Columns[at[1]])
			if r >= 0 && c >= 0 && !slices.Contains(out, [2]int{r, c}) {
				out = append(out, [2]int{r, c})
			}
		}
	}
	return out
}

// PaperComparison is a results table beside the paper's.
type PaperComparison struct {
	Grid       *report.Grid
	Paper      *published.Table
	Entries    [][]PaperEntry // [published row][published column]
	Taus       []Tau          // per published column; none where the paper draws a figure
	Claims     []Verdict
	Confidence float64 // of each comparison a claim makes
	// Departures are how the run departs from the paper's protocol
	// (Plan.ChangesFromEmbedded): when there are any, the comparison is provisional.
	Departures []string
}

// percent is the factor from the value's fraction to the paper's percent.
const percent = 100

// ComparePaper sets the grid's entries beside the published table t's
// (by row and column label; entries the grid lacks are Missing) and
// decides the claims that name t, on the grid of plan's results; curves
// (the grid's figures per round, one per column, Curves) decide the
// claims on convergence, which without them are left undecided.
func ComparePaper(
	p *published.Results,
	plan *manifests.Plan,
	g *report.Grid,
	t *published.Table,
	curves []figure.Figure,
) *PaperComparison {
	pc := &PaperComparison{
		Grid:       g,
		Paper:      t,
		Confidence: p.Confidence,
		Departures: plan.ChangesFromEmbedded(),
		Entries:    paperEntries(p, g, t),
	}
	for c := range t.Columns {
		if t.Drawn {
			break // no numbers to rank
		}
		var x, y []float64
		for r := range t.Rows {
			if e := pc.Entries[r][c]; e.comparable() && !e.Ours.Provisional {
				x, y = append(x, e.Ours.Mean), append(y, e.Paper.Mean)
			}
		}
		pc.Taus = append(pc.Taus, Tau{Tau: stats.KendallTauB(x, y), N: len(x)})
	}
	runners := pc.runnersUp(p)
	for r, row := range pc.Entries {
		for c := range row {
			e := &pc.Entries[r][c]
			for _, ru := range runners {
				if alt := ru.alt.Entries[r][c]; e.comparable() && e.HasInterval && alt.comparable() &&
					alt.HasInterval &&
					alt.Inside != e.Inside {
					e.Depends = append(e.Depends, fmt.Sprintf("%s with %s", insideWord(alt), ru.what))
				}
			}
		}
	}
	for i := range p.Claims {
		c := &p.Claims[i]
		if !slices.Contains(c.Tables, t.Manifest) {
			continue
		}
		paper := func(r, col int) (estimate, bool) {
			if v := pc.Entries[r][col].Paper; !v.Diverged {
				return estimate{mean: v.Mean}, true
			}
			return estimate{mean: math.Inf(-1)}, true
		}
		v := Verdict{Claim: c, Paper: "no numbers (the paper draws this as a figure)"}
		if c.Converges != nil {
			v.Ours, v.Paper = pc.converges(c.Converges, curves), "no numbers (the paper draws the curves)"
		} else {
			v.Ours, v.noisy = pc.decide(c, ours(pc.Entries), p.Confidence)
			if !t.Drawn {
				v.Paper, _ = pc.decide(c, paper, p.Confidence)
			}
			v.Depends = dependence(c, v.Ours, runners)
		}
		pc.Claims = append(pc.Claims, v)
	}
	return pc
}

// ours reads our entries for a claim: in percent with the variance of
// each mean; not run where missing or provisional; -Inf where diverged.
func ours(entries [][]PaperEntry) claimCells {
	return func(r, col int) (estimate, bool) {
		e := entries[r][col]
		switch {
		case e.Ours.Missing || e.Ours.Provisional:
			return estimate{}, false
		case e.Ours.Diverged:
			return estimate{mean: math.Inf(-1)}, true
		}
		return estimate{
			mean:  e.Ours.Mean,
			terms: []varTerm{{e.Ours.Std * e.Ours.Std / float64(e.Ours.Seeds), e.Ours.Seeds}},
		}, true
	}
}

// runnerUp is the comparison with one choice of the select path that is
// not stable replaced by its runner-up: what a claim would read then.
type runnerUp struct {
	what string // "D-SUM's runner-up lr=0.03162277660168379"
	alt  *PaperComparison
}

// runnersUp are the comparisons under each unstable choice's runner-up,
// built once for every claim to be decided again on.
func (pc *PaperComparison) runnersUp(p *published.Results) []runnerUp {
	g := pc.Grid
	var out []runnerUp
	seen := map[*report.Selection]bool{}
	for r, row := range g.Entries {
		for _, e := range row {
			s := e.Selection
			if e.Missing || s == nil || s.Stable() || seen[s] || e.RunnerUpEntry == nil {
				continue
			}
			seen[s] = true
			swapped := g.WithRunnersUp(s)
			name := g.RowTitle(r)
			if i := pc.Paper.RowLabelled(strings.Join(g.RowLabels[r], " / ")); i >= 0 {
				name = pc.Paper.Rows[i].Name
			}
			out = append(out, runnerUp{
				what: fmt.Sprintf("%s's runner-up %s=%s", name, g.Spec.Select, s.RunnerUp),
				alt: &PaperComparison{
					Grid:       swapped,
					Paper:      pc.Paper,
					Confidence: pc.Confidence,
					Entries:    paperEntries(p, swapped, pc.Paper),
				},
			})
		}
	}
	return out
}

// dependence decides claim c again under each runner-up and says where
// that changes our verdict (decided: the verdict as decided).
func dependence(c *published.Claim, decided string, runners []runnerUp) []string {
	var out []string
	for _, ru := range runners {
		if v, _ := ru.alt.decide(c, ours(ru.alt.Entries), ru.alt.Confidence); VerdictWord(v) != VerdictWord(decided) {
			out = append(out, fmt.Sprintf("with %s it is %s", ru.what, VerdictWord(v)))
		}
	}
	return out
}

// VerdictWord is a verdict's first words: holds, fails, not decided,
// cannot be decided or not run.
func VerdictWord(v string) string {
	for _, w := range []string{holds, fails, notDecided, cannot, notRunClaim} {
		if strings.HasPrefix(v, w) {
			return w
		}
	}
	return v
}

// Decidable reports whether a side's verdict on a claim is one its
// results can give: not "not run" nor "cannot be decided".
func Decidable(verdict string) bool {
	w := VerdictWord(verdict)
	return w != notRunClaim && w != cannot
}

// paperEntries sets the grid's entries (in percent, with their
// intervals) beside the published table t's, per published row and
// column.
func paperEntries(p *published.Results, g *report.Grid, t *published.Table) [][]PaperEntry {
	var out [][]PaperEntry
	for _, row := range t.Rows {
		r := g.RowLabeled(row.Row)
		var entries []PaperEntry
		for c := range t.Columns {
			e := PaperEntry{Ours: report.Entry{Missing: true}}
			if !t.Drawn {
				e.Paper, _ = p.Read(row.Values[c]) // checked by published.Parse
			}
			if gc := g.ColumnLabeled(t.Columns[c]); r >= 0 && gc >= 0 {
				e.Ours = g.Entries[r][gc]
			}
			if !e.Ours.Missing && !e.Ours.Diverged {
				e.Ours.Mean *= percent
				e.Ours.Std *= percent
				e.Ours.Values = scaled(e.Ours.Values, percent)
				e.Lo, e.Hi, e.HasInterval = report.Stat{
					Mean:   e.Ours.Mean,
					Std:    e.Ours.Std,
					Values: e.Ours.Values,
				}.IntervalOf(
					e.Ours.Seeds,
					g.Spec.Value,
					percent,
				)
			}
			if e.comparable() {
				e.Diff = e.Ours.Mean - e.Paper.Mean
				e.Inside = e.HasInterval && e.Lo <= e.Paper.Mean && e.Paper.Mean <= e.Hi
			}
			entries = append(entries, e)
		}
		out = append(out, entries)
	}
	return out
}

// points is a number of points of accuracy as prose says it.
func points(n float64) string {
	if n == 1 {
		return "1 point"
	}
	return fmt.Sprintf("%g points", n)
}

// converges decides a convergence claim on the curves: per published
// column and row, the first evaluated round whose mean is within v.Within
// points of the curve's last (never, for a curve with a diverged seed).
func (pc *PaperComparison) converges(v *published.Convergence, curves []figure.Figure) string {
	if curves == nil {
		return "not decided here (it needs the curves: ump report decides it)"
	}
	t, g := pc.Paper, pc.Grid
	var missing []string
	reached := func(name string, col int) (float64, bool) {
		r := g.RowLabeled(t.Rows[t.RowNamed(name)].Row)
		c := g.ColumnLabeled(t.Columns[col])
		if r < 0 || c < 0 || c >= len(curves) || r >= len(curves[c].Series) || len(curves[c].Series[r].X) == 0 ||
			g.Entries[r][c].Provisional {
			if m := name + " at " + g.ColumnName(t.Columns[col]); !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
			return 0, false
		}
		s := curves[c].Series[r]
		final := s.Mean[len(s.Mean)-1]
		if s.DivergedSeeds > 0 || math.IsNaN(final) || math.IsInf(final, 0) {
			return math.Inf(1), true
		}
		for k, m := range s.Mean {
			if math.Abs(final-m)*percent <= v.Within {
				return s.X[k], true
			}
		}
		return s.X[len(s.X)-1], true
	}
	show := func(x float64) string {
		if math.IsInf(x, 1) {
			return "never (it diverged)"
		}
		return fmt.Sprintf("at round %g", x)
	}
	// Every pair is compared; the claim fails by divergence only where
	// every row that fails does (docs/tables.md), so the first failure
	// found never decides the word alone.
	var failed []string             // the faster rows that fail, in the claim's order
	byRow := map[string][]failure{} // their failing comparisons, column by column
	for _, fast := range v.Faster[0] {
		for col := range t.Columns {
			for _, slow := range v.Faster[1] {
				a, aok := reached(fast, col)
				b, bok := reached(slow, col)
				if aok && bok && !(a <= (1-v.Fewer)*b) {
					if byRow[fast] == nil {
						failed = append(failed, fast)
					}
					text := fmt.Sprintf("%s: %s gets within %s of its final %s, %s %s",
						g.ColumnName(t.Columns[col]), fast, points(v.Within), show(a), slow, show(b))
					diverged := math.IsInf(a, 1) || math.IsInf(b, 1)
					byRow[fast] = append(byRow[fast], failure{text: text, diverged: diverged})
				}
			}
		}
	}
	if len(failed) > 0 {
		return convergenceFails(failed, byRow)
	}
	if len(missing) > 0 {
		return fmt.Sprintf("not run (%d entries missing, e.g. %s)", len(missing), missing[0])
	}
	return holds
}

// failure is one comparison of a convergence claim that fails: its text,
// and whether it rests on a curve that diverged.
type failure struct {
	text     string
	diverged bool
}

// convergenceFails is the verdict of a convergence claim with failing
// comparisons, per faster row in order: a row fails by divergence where
// every comparison it fails rests on a diverged curve, and the claim does
// where every failing row does. The reason shown is the first comparison
// that fails on two rounds reached, where there is one.
func convergenceFails(rows []string, byRow map[string][]failure) string {
	word, why := fails+byDivergence, byRow[rows[0]][0].text
	for _, r := range rows {
		if i := slices.IndexFunc(byRow[r], func(f failure) bool { return !f.diverged }); i >= 0 {
			word, why = fails, byRow[r][i].text
			break
		}
	}
	if len(rows) == 1 {
		return fmt.Sprintf("%s (%s)", word, why)
	}
	parts := make([]string, len(rows))
	for i, r := range rows {
		w := fails
		if !slices.ContainsFunc(byRow[r], func(f failure) bool { return !f.diverged }) {
			w += byDivergence
		}
		parts[i] = fmt.Sprintf("%s for %s (%s)", w, r, firstOf(byRow[r], w == fails))
	}
	return word + ": " + strings.Join(parts, "; ")
}

// firstOf is the text of the first failure, the first on two rounds
// reached where onRounds.
func firstOf(fs []failure, onRounds bool) string {
	for _, f := range fs {
		if !onRounds || !f.diverged {
			return f.text
		}
	}
	return fs[0].text
}

// text renders one entry: ours ± std [interval] · the paper's · the
// difference · whether the paper's mean lies in our interval.
func (pc *PaperComparison) text(e PaperEntry, pm string) string {
	var ours string
	switch {
	case e.Ours.Diverged:
		ours = "*"
	case e.Ours.Missing:
		ours = "–"
	case e.Ours.Seeds < 2:
		ours = fmt.Sprintf("%.2f (n/a)", e.Ours.Mean)
	default:
		ours = fmt.Sprintf("%.2f %s %.2f [%.2f, %.2f]", e.Ours.Mean, pm, e.Ours.Std, e.Lo, e.Hi)
	}
	if e.Ours.Provisional {
		ours += " †"
	}
	paper := strings.ReplaceAll(e.Paper.Printed, "±", pm)
	if pc.Paper.Drawn {
		return ours
	}
	if !e.comparable() {
		return ours + " · " + paper
	}
	verdict := insideWord(e)
	if len(e.Depends) > 0 {
		verdict += " (" + strings.Join(e.Depends, "; ") + ")"
	}
	return fmt.Sprintf("%s · %s · %+.2f · %s", ours, paper, e.Diff, verdict)
}

// insideWord says whether the paper's mean lies in our interval.
func insideWord(e PaperEntry) string {
	switch {
	case !e.HasInterval:
		return "n/a"
	case e.Inside:
		return "inside"
	}
	return "outside"
}

// legend explains the entries, then the rank agreement and the claims.
func (pc *PaperComparison) legend() []string {
	g := pc.Grid
	var lines []string
	if note := provisionalNote(pc.Paper.Paper, pc.Departures); note != "" {
		lines = append(lines, note)
	}
	if pc.Paper.Drawn {
		lines = append(
			lines,
			fmt.Sprintf(
				"%s: ours (%s × 100 of the final round, mean ± std over seeds [95%% interval of the mean, Student's "+
					"t]; n/a: one seed); the paper draws these results as a figure and prints no numbers. * "+
					"diverged, – not run, † provisional.",
				pc.Paper.Paper,
				g.Spec.Value,
			),
		)
	} else {
		lines = append(lines, fmt.Sprintf("%s: ours (%s × 100 of the final round, mean ± std over seeds [95%% "+
			"interval of the mean, Student's t]; n/a: one seed) · the paper's (%s, as printed) · "+
			"ours − the paper's · whether the paper's mean lies inside our interval. "+
			"* diverged, – not run, † provisional.",
			pc.Paper.Paper, g.Spec.Value, pc.Paper.Paper))
	}
	if g.Spec.Select != "" {
		protocol := " (the paper's protocol: one learning rate per algorithm and data set)"
		switch {
		case g.SelectBy != g.Spec.Value:
			protocol = " (the paper tunes on the test figure, one learning rate per algorithm and data set)"
		case g.Spec.Scope() == manifests.PerEntry:
			protocol = " (not the paper's protocol, which tunes one learning rate per algorithm and data set)"
		}
		lines = append(lines, strings.TrimPrefix(g.SelectionNote(), "; ")+protocol+".")
	}
	var others []string
	for r, l := range g.RowLabels {
		if pc.Paper.RowLabelled(strings.Join(l, " / ")) < 0 {
			others = append(others, g.RowTitle(r))
		}
	}
	if len(others) > 0 {
		lines = append(lines, "Rows the paper does not have (ump table shows them): "+strings.Join(others, ", ")+".")
	}
	var taus []string
	for c, tau := range pc.Taus {
		s := "n/a"
		if !math.IsNaN(tau.Tau) {
			s = fmt.Sprintf("%.2f", tau.Tau)
		}
		taus = append(taus, fmt.Sprintf("%s: %s (%d rows)", g.ColumnName(pc.Paper.Columns[c]), s, tau.N))
	}
	if len(taus) > 0 {
		lines = append(
			lines,
			"Rank agreement with the paper (Kendall's tau-b of the rows' means, per column): "+strings.Join(
				taus,
				"; ",
			)+".",
		)
	}
	if len(pc.Claims) > 0 {
		lines = append(
			lines,
			fmt.Sprintf(
				"Claims, from the paper's text (ours: each comparison decided at %g%% by Welch's interval of the "+
					"difference of the means over seeds, a diverged entry below every number; "+
					"holds where every comparison shows what the claim says, fails where one shows the opposite, "+
					"either by divergence where what decides it is a diverged entry, not two accuracies, "+
					"not decided where an interval holds 0 or a side has one seed, "+
					"cannot be decided where a row diverged in every cell the claim reads; the paper's own numbers "+
					"compared as printed):",
				100*pc.Confidence,
			),
		)
	}
	for _, v := range pc.Claims {
		ours := v.Ours
		if len(pc.Departures) > 0 {
			ours += " (provisional)"
		}
		if len(v.Depends) > 0 {
			ours += " (depends on a choice within the noise: " + strings.Join(v.Depends, "; ") + ")"
		}
		lines = append(
			lines,
			fmt.Sprintf("- %s%s: ours %s; the paper's own numbers: %s", v.Claim.Claim, source(v.Claim), ours, v.Paper),
		)
	}
	return lines
}

// source says where the paper makes claim c (its line and words, as
// plain text) and how ump reads it, if it says.
func source(c *published.Claim) string {
	var parts []string
	if c.Line > 0 {
		parts = append(parts, fmt.Sprintf(`line %d: "%s"`, c.Line, PlainLaTeX(c.Quote)))
	}
	if c.Reading != "" {
		parts = append(parts, "reading: "+c.Reading)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// latexPlain turns the LaTeX of the paper's sentences into the words they
// print: its algorithm macros, \textt, math and \eg.
var latexPlain = strings.NewReplacer(
	`\textt{\algone}`,
	"D-SUM",
	`\textt{\algtwo}`,
	"GT-DSUM",
	`\textt{\algone{}}`,
	"D-SUM",
	`\textt{\algtwo{}}`,
	"GT-DSUM",
	`\textbf{`,
	"",
	`\textt{`,
	"",
	`\alpha`,
	"α",
	`\beta`,
	"β",
	`\eg`,
	"e.g.",
	`\ie`,
	"i.e.",
	`\%`,
	"%",
	`\pm`,
	"±",
	"$",
	"",
	"{",
	"",
	"}",
	"",
)

// PlainLaTeX is a passage of the paper's source as it reads in print.
func PlainLaTeX(s string) string {
	return strings.Join(strings.Fields(latexPlain.Replace(s)), " ")
}

// Markdown renders the comparison as a Markdown table and its legend.
func (pc *PaperComparison) Markdown() string {
	var b strings.Builder
	b.WriteString("| " + display.Markdown(pc.Grid.RowsTitle()))
	for _, col := range pc.Paper.Columns {
		b.WriteString(" | " + display.Markdown(pc.Grid.ColumnName(col)))
	}
	b.WriteString(" |\n|" + strings.Repeat("---|", len(pc.Paper.Columns)+1) + "\n")
	for r, row := range pc.Paper.Rows {
		b.WriteString("| " + row.Name)
		for _, e := range pc.Entries[r] {
			b.WriteString(" | " + pc.text(e, "±"))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\n" + strings.Join(pc.legend(), "\n") + "\n")
	return b.String()
}

// LaTeX renders the comparison as a booktabs tabular, its legend in
// comments.
func (pc *PaperComparison) LaTeX() string {
	var b strings.Builder
	for _, l := range pc.legend() {
		b.WriteString("% " + display.Terminal(l) + "\n")
	}
	b.WriteString(`\begin{tabular}{l` + strings.Repeat("c", len(pc.Paper.Columns)) + "}\n\\toprule\n")
	b.WriteString(display.LaTeX(pc.Grid.RowsTitle()))
	for _, col := range pc.Paper.Columns {
		b.WriteString(" & " + display.LaTeX(pc.Grid.ColumnName(col)))
	}
	b.WriteString(` \\` + "\n\\midrule\n")
	for r, row := range pc.Paper.Rows {
		b.WriteString(display.LaTeX(row.Name))
		for _, e := range pc.Entries[r] {
			b.WriteString(" & " + strings.ReplaceAll(display.LaTeX(pc.text(e, "±")), "±", `$\pm$`))
		}
		b.WriteString(` \\` + "\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// Table returns the comparison as a flat table, one row per entry: the
// row and column labels, ours (percent: mean, std, seeds, the interval,
// the selected value, the status), the paper's (as printed, mean, std),
// the difference and whether the paper's mean lies in our interval; null
// where a side has no number.
func (pc *PaperComparison) Table() *artifacts.Table {
	g := pc.Grid
	str := func(name string) *artifacts.Column { return &artifacts.Column{Name: name, Strings: []string{}} }
	num := func(name string) *artifacts.Column {
		return &artifacts.Column{Name: name, Floats: []float64{}, Null: []bool{}}
	}
	row, name, col := str(strings.Join(g.Spec.Rows, "/")), str("paper_name"), str(strings.Join(g.Spec.Columns, "/"))
	mean, std, lo, hi := num(
		g.Spec.Value+"_mean_percent",
	), num(
		g.Spec.Value+"_std_percent",
	), num(
		"ci95_low",
	), num(
		"ci95_high",
	)
	seeds := &artifacts.Column{Name: "seeds", Ints: []int64{}}
	sel, status, printed := str("selected_"+g.Spec.Select), str("status"), str("paper_printed")
	pmean, pstd, diff := num("paper_mean"), num("paper_std"), num("difference")
	inside := &artifacts.Column{Name: "paper_inside_ci95", Bools: []bool{}, Null: []bool{}}
	put := func(c *artifacts.Column, v float64, ok bool) {
		c.Floats = append(c.Floats, v)
		c.Null = append(c.Null, !ok)
	}
	for r, pr := range pc.Paper.Rows {
		for c, e := range pc.Entries[r] {
			row.Strings = append(row.Strings, pr.Row)
			name.Strings = append(name.Strings, pr.Name)
			col.Strings = append(col.Strings, pc.Paper.Columns[c])
			number := !e.Ours.Missing && !e.Ours.Diverged
			put(mean, e.Ours.Mean, number)
			put(std, e.Ours.Std, number && e.Ours.Seeds > 1)
			put(lo, e.Lo, e.HasInterval)
			put(hi, e.Hi, e.HasInterval)
			seeds.Ints = append(seeds.Ints, int64(e.Ours.Seeds))
			sel.Strings = append(sel.Strings, e.Ours.Select)
			st := "completed"
			switch {
			case e.Ours.Missing:
				st = "missing"
			case e.Ours.Diverged:
				st = "diverged"
			case e.Ours.Provisional:
				st = "provisional"
			}
			status.Strings = append(status.Strings, st)
			printed.Strings = append(printed.Strings, e.Paper.Printed)
			put(pmean, e.Paper.Mean, !e.Paper.Diverged)
			put(pstd, e.Paper.Std, e.Paper.HasStd)
			put(diff, e.Diff, e.comparable())
			inside.Bools = append(inside.Bools, e.Inside)
			inside.Null = append(inside.Null, !e.comparable() || !e.HasInterval)
		}
	}
	t := &artifacts.Table{}
	for _, c := range []*artifacts.Column{row, name, col, mean, std, seeds, lo, hi, sel, status, printed, pmean, pstd,
		diff, inside} {
		t.Columns = append(t.Columns, *c)
	}
	return t
}

// provisionalNote is the line a comparison with the paper starts with
// when the run departs from its protocol ("" when it does not).
func provisionalNote(paper string, departures []string) string {
	if len(departures) == 0 {
		return ""
	}
	return "Provisional: a variant of " + paper + ". This run departs from the paper's set-up and protocol (" +
		strings.Join(
			departures,
			"; ",
		) +
		"): the comparison and the claims below are decided on it, not on a run of the protocol."
}
