package resultsdir

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/paper"
	"github.com/ump-lab/ump/stats"
)

// Comparison sets two computations of the same cells side by side (two
// engines, two machines): per cell the status and the difference of the
// table's figure, per table the entries, choices and verdicts that
// differ. A and B are as the user named them.
type Comparison struct {
	A, B       string
	XA, XB     *Exported
	Value      string     // the figure compared: the layout's value
	Cells      []CellPair // the cells both have finished, in A's order
	OnlyA      int        // cells A finished and B did not
	OnlyB      int
	GridA      *report.Grid
	GridB      *report.Grid
	VerdictsA  []paper.Verdict // beside the paper (nil without a published table)
	VerdictsB  []paper.Verdict
	Published  *published.Table
	Confidence float64
}

// CellPair is one cell as A and B computed it.
type CellPair struct {
	Label            string
	StatusA, StatusB string
	A, B             float64 // the value (NaN where diverged)
}

// sameSettings is a cell's settings without its engine: the cells two
// engines computed of one manifest match on it.
func sameSettings(c manifests.Cell) string {
	cfg := c.Config
	cfg.Engine = ""
	return string(manifests.CanonicalJSON(cfg))
}

// Compare matches a's and b's finished cells by their settings (the
// engine aside) and compares them, then their tables under a's layout.
func Compare(nameA, nameB string, a, b *Exported) (*Comparison, error) {
	pa, pb := &a.Registration.Plan, &b.Registration.Plan
	if pa.Manifest.Name != pb.Manifest.Name {
		return nil, fmt.Errorf(
			"%s is manifest %s and %s is %s: compare two computations of one manifest",
			nameA,
			pa.Manifest.Name,
			nameB,
			pb.Manifest.Name,
		)
	}
	spec := report.Layout(pa)
	c := &Comparison{A: nameA, B: nameB, XA: a, XB: b, Value: spec.Value}
	fa, err := a.Finals()
	if err != nil {
		return nil, err
	}
	fb, err := b.Finals()
	if err != nil {
		return nil, err
	}
	inB := map[string]int{}
	for i, cell := range pb.Cells {
		inB[sameSettings(cell)] = i
	}
	finished := func(f report.Final) bool { return f.Figures != nil }
	matched := map[int]bool{}
	for i, cell := range pa.Cells {
		j, ok := inB[sameSettings(cell)]
		switch {
		case ok && finished(fa[i]) && finished(fb[j]):
			matched[j] = true
			c.Cells = append(
				c.Cells,
				CellPair{
					Label:   cell.LabelString(),
					StatusA: fa[i].Status,
					StatusB: fb[j].Status,
					A:       fa[i].Figures[spec.Value],
					B:       fb[j].Figures[spec.Value],
				},
			)
		case finished(fa[i]):
			c.OnlyA++
		}
		if ok && finished(fb[j]) && !finished(fa[i]) {
			c.OnlyB++
		}
	}
	if c.GridA, err = a.Grid(spec); err != nil {
		return nil, err
	}
	if c.GridB, err = b.Grid(spec); err != nil {
		return nil, err
	}
	pub, err := report.Paper()
	if err != nil {
		return nil, err
	}
	if t := pub.Table(pa.Manifest.Name); t != nil {
		c.Published, c.Confidence = t, pub.Confidence
		c.VerdictsA = paper.ComparePaper(pub, pa, c.GridA, t, nil).Claims
		c.VerdictsB = paper.ComparePaper(pub, pb, c.GridB, t, nil).Claims
	}
	return c, nil
}

// Markdown renders the comparison: the cells, then the table's entries,
// choices and verdicts that differ.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	engine := func(x *Exported) string {
		if e := x.Engines(); e != "" {
			return display.Markdown(e)
		}
		return "engine not recorded"
	}
	fmt.Fprintf(&b, "Two computations of %s:\n\n", c.XA.Registration.Plan.Manifest.Name)
	vouched := func(x *Exported) string {
		if x.Signer != "" {
			return "results signed by " + display.Markdown(x.Signer)
		}
		return "results unsigned: no key vouches for them"
	}
	fmt.Fprintf(&b, "- A: %s (manifest %.12s; %s; %s)\n", c.A, c.XA.Registration.Plan.Hash, engine(c.XA), vouched(c.XA))
	fmt.Fprintf(&b, "- B: %s (manifest %.12s; %s; %s)\n", c.B, c.XB.Registration.Plan.Hash, engine(c.XB), vouched(c.XB))
	for _, x := range []struct {
		name string
		x    *Exported
	}{{"A", c.XA}, {"B", c.XB}} {
		if len(x.x.Absent) > 0 {
			fmt.Fprintf(
				&b,
				"- %s lacks %s, which its record lists (not needed here)\n",
				x.name,
				strings.Join(x.x.Absent, ", "),
			)
		}
	}
	c.writeShort(&b)
	c.writeCells(&b)
	c.writeTable(&b)
	if c.Published != nil {
		var verdicts []string
		both := 0
		for i := range c.VerdictsA {
			va, vb := c.VerdictsA[i], c.VerdictsB[i]
			if !paper.Decidable(va.Ours) || !paper.Decidable(vb.Ours) {
				continue
			}
			both++
			if paper.VerdictWord(va.Ours) != paper.VerdictWord(vb.Ours) {
				verdicts = append(verdicts, fmt.Sprintf("- %s: A %s; B %s", va.Claim.Claim, va.Ours, vb.Ours))
			}
		}
		heading := fmt.Sprintf("\nVerdicts on the paper's claims that differ "+
			"(%d of the %d that both sides can decide; %d that a side cannot decide left out; "+
			"decided at %g%%, the curves' claims left to ump report)",
			len(verdicts), both, len(c.VerdictsA)-both, 100*c.Confidence)
		listed(&b, heading, verdicts)
	}
	return b.String()
}

// writeShort says first what matched (the cells, by their settings) and
// why the table's entries may differ where the cells do not: the seeds
// each entry is a mean over.
func (c *Comparison) writeShort(b *strings.Builder) {
	same := 0
	for _, p := range c.Cells {
		if p.StatusA == p.StatusB && (p.A == p.B || math.IsNaN(p.A) && math.IsNaN(p.B)) {
			same++
		}
	}
	fmt.Fprintf(
		b,
		"\n**In short.** %d cells are in both, matched by their settings (the engine aside); %d of them have the "+
			"same status and %s.",
		len(c.Cells),
		same,
		c.Value,
	)
	if sa, sb := seedCounts(c.GridA), seedCounts(c.GridB); sa != sb {
		fmt.Fprintf(
			b,
			" The table's entries differ because their seeds differ: each of A's is a mean over %s, each of B's over "+
				"%s; compare the cells, not the entries.",
			sa,
			sb,
		)
	} else {
		fmt.Fprintf(b, " The table's entries are means over the same seeds on both sides (%s each).", sa)
	}
	b.WriteString("\n")
}

// seedCounts is how many seeds the entries of a grid are means over: "1
// seed", "3 seeds", or "1 to 3 seeds".
func seedCounts(g *report.Grid) string {
	lo, hi := 0, 0
	for _, row := range g.Entries {
		for _, e := range row {
			if e.Missing {
				continue
			}
			if lo == 0 || e.Seeds < lo {
				lo = e.Seeds
			}
			hi = max(hi, e.Seeds)
		}
	}
	switch {
	case hi == 1:
		return "1 seed"
	case lo == hi:
		return fmt.Sprintf("%d seeds", hi)
	}
	return fmt.Sprintf("%d to %d seeds", lo, hi)
}

// writeCells writes what the comparison says of the cells: their
// statuses, and how far apart the numbers of those both completed are.
func (c *Comparison) writeCells(b *strings.Builder) {
	var agree int
	var diffs []float64
	var statusDiffer []string
	for _, p := range c.Cells {
		if p.StatusA != p.StatusB {
			statusDiffer = append(statusDiffer, fmt.Sprintf("%s: A %s, B %s", p.Label, p.StatusA, p.StatusB))
			continue
		}
		agree++
		if !math.IsNaN(p.A) && !math.IsNaN(p.B) && p.StatusA != "diverged" {
			diffs = append(diffs, p.B-p.A)
		}
	}
	fmt.Fprintf(
		b,
		"\n**Cells.** %d cells finished in both (%d in A alone, %d in B alone). The status agrees in %d; it differs "+
			"in %d.\n",
		len(c.Cells),
		c.OnlyA,
		c.OnlyB,
		agree,
		len(statusDiffer),
	)
	for _, s := range statusDiffer {
		fmt.Fprintf(b, "- %s\n", s)
	}
	if len(diffs) == 0 {
		return
	}
	abs := make([]float64, len(diffs))
	for i, d := range diffs {
		abs[i] = math.Abs(d)
	}
	slices.Sort(abs)
	sorted := slices.Clone(diffs)
	slices.Sort(sorted)
	fmt.Fprintf(
		b,
		"\n%s, B − A, over the %d cells both completed: median %s; |B − A| median %s, 90th percentile %s, largest "+
			"%s; %d identical.\n",
		c.Value,
		len(diffs),
		number(stats.Quantile(sorted, 0.5), "+"),
		number(stats.Quantile(abs, 0.5), ""),
		number(stats.Quantile(abs, 0.9), ""),
		number(abs[len(abs)-1], ""),
		count(abs, 0),
	)
	type big struct {
		label string
		d     float64
	}
	var bigs []big
	for _, p := range c.Cells {
		if p.StatusA == p.StatusB && p.StatusA != "diverged" && math.Abs(p.B-p.A) >= 0.01 {
			bigs = append(bigs, big{p.Label, p.B - p.A})
		}
	}
	slices.SortStableFunc(bigs, func(x, y big) int { return cmp.Compare(math.Abs(y.d), math.Abs(x.d)) })
	if len(bigs) > 0 {
		fmt.Fprintf(b, "\nCells that differ by 0.01 or more (%d, largest first):\n", len(bigs))
		for _, x := range bigs[:min(len(bigs), 20)] {
			fmt.Fprintf(b, "- %s: %s\n", x.label, number(x.d, "+"))
		}
	}
}

// number formats a difference: 4 decimals, or 4 significant digits from
// 10^6 on (an objective's gap may be large); sign "+" shows a plus.
func number(v float64, sign string) string {
	if math.Abs(v) >= 1e6 {
		return fmt.Sprintf("%"+sign+".4g", v)
	}
	return fmt.Sprintf("%"+sign+".4f", v)
}

// writeTable writes the table's entries and choices that differ, as A
// lays the table out.
func (c *Comparison) writeTable(b *strings.Builder) {
	reads := strings.Join(slices.Concat([]string{c.Value}, c.GridA.Spec.Also), " / ")
	fmt.Fprintf(b, "\n**The table** (%s, as A lays it out; each entry reads %s, "+
		"each the mean ± std over its seeds).\n\n", c.Value, reads)
	ga, gb := c.GridA, c.GridB
	var entries, choices []string
	for r := range ga.RowLabels {
		rb := slices.IndexFunc(gb.RowLabels, func(l []string) bool { return slices.Equal(l, ga.RowLabels[r]) })
		for col := range ga.ColLabels {
			cb := slices.IndexFunc(gb.ColLabels, func(l []string) bool { return slices.Equal(l, ga.ColLabels[col]) })
			if rb < 0 || cb < 0 {
				continue
			}
			ea, eb := ga.Entries[r][col], gb.Entries[rb][cb]
			if ea.Missing || eb.Missing || ea.Provisional || eb.Provisional {
				continue
			}
			where := ga.RowTitle(r)
			if len(ga.ColLabels) > 1 {
				where += " at " + ga.ColumnTitle(col)
			}
			if ta, tb := ga.Text(ea, "±"), gb.Text(eb, "±"); ta != tb &&
				(ea.Diverged != eb.Diverged || math.Abs(ea.Mean-eb.Mean) >= 0.001) {
				entries = append(entries, fmt.Sprintf("- %s: A %s, B %s", where, ta, tb))
			}
			if ea.Select != eb.Select && (ga.Spec.Scope() != manifests.PerRow || col == 0) {
				w := ga.RowTitle(r)
				if ga.Spec.Scope() != manifests.PerRow {
					w = where
				}
				choices = append(
					choices,
					fmt.Sprintf(
						"- %s: A %s=%s%s, B %s=%s%s",
						w,
						ga.Spec.Select,
						ea.Select,
						sureness(ea),
						ga.Spec.Select,
						eb.Select,
						sureness(eb),
					),
				)
			}
		}
	}
	listed(b, fmt.Sprintf("Entries both have that differ by 0.001 or more, or in status (%d)", len(entries)), entries)
	if ga.Spec.Select != "" {
		listed(b, fmt.Sprintf("\nChoices of %s that differ (%d)", ga.Spec.Select, len(choices)), choices)
	}
}

// listed writes a heading and its items, one a line, or "none" where
// there is none, so that no heading ends in a colon with nothing after it.
func listed(b *strings.Builder, heading string, items []string) {
	if len(items) == 0 {
		b.WriteString(heading + ": none.\n")
		return
	}
	b.WriteString(heading + ":\n")
	for _, item := range items {
		b.WriteString(item + "\n")
	}
}

// sureness is how sure an entry's choice is, as Selections words it: "
// (chosen again in 69.0% of resamples)", or "".
func sureness(e report.Entry) string {
	if s := e.Selection; s != nil && !math.IsNaN(s.Stability) {
		return fmt.Sprintf(" (chosen again in %.1f%% of resamples)", 100*s.Stability)
	}
	return ""
}

// count is how many values equal v.
func count(vals []float64, v float64) int {
	n := 0
	for _, x := range vals {
		if x == v {
			n++
		}
	}
	return n
}
