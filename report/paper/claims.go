package paper

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/published"
	"gonum.org/v1/gonum/stat/distuv"
)

// Verdict words: a claim holds or fails only where the data decide each
// of its comparisons; otherwise it is not decided, or cannot be decided
// where a row of it diverged in every cell (docs/tables.md).
const (
	holds       = "holds"
	fails       = "fails"
	notDecided  = "not decided"
	cannot      = "cannot be decided"
	notRunClaim = "not run"
	// byDivergence follows holds or fails where the comparisons that
	// decide it rest on a diverged entry (below every number), not on
	// two accuracies.
	byDivergence = " by divergence"
)

// estimate is one side of a comparison: a mean over seeds, with the
// variance of that mean as the sum of terms (one per mean it combines),
// or an exact number (the paper's printed mean, or ±Inf where a side
// diverged: a diverged entry is below every number).
type estimate struct {
	mean  float64
	terms []varTerm // empty: exact
	at    [][2]int  // the entries (paper table row, column) it is read from
}

// varTerm is one mean's contribution to an estimate's variance: s²/n over
// n seeds (Welch–Satterthwaite needs n).
type varTerm struct {
	v float64
	n int
}

// minus is a − b (a diverged side makes it ±Inf; both, NaN).
func (a estimate) minus(b estimate) estimate {
	return estimate{mean: a.mean - b.mean, terms: slices.Concat(a.terms, b.terms), at: slices.Concat(a.at, b.at)}
}

// meanOf is the mean of estimates: its variance the sum of theirs over
// k² (independent seeds); below every number where one diverged.
func meanOf(es []estimate) estimate {
	var m estimate
	k := float64(len(es))
	for _, e := range es {
		m.at = append(m.at, e.at...)
	}
	for _, e := range es {
		if math.IsInf(e.mean, -1) {
			return estimate{mean: math.Inf(-1), at: m.at}
		}
		m.mean += e.mean / k
		for _, t := range e.terms {
			m.terms = append(m.terms, varTerm{v: t.v / (k * k), n: t.n})
		}
	}
	return m
}

// outcome is what the data say of one comparison.
type outcome int

const (
	shown       outcome = iota // what the claim says, at the confidence
	refuted                    // the opposite, at the confidence
	withinNoise                // neither: the interval of the difference holds 0, or a side has one seed
)

// compare decides "a above b" (at least as high; higher when strict) at
// confidence conf: from the Welch interval of a − b where both sides are
// means over seeds, exactly where both are numbers without noise (or a
// side diverged). noise says why it is not decided.
func compare(a, b estimate, strict bool, conf float64) (o outcome, noise string) {
	d := a.minus(b)
	exact := func() outcome {
		if a.mean > b.mean || !strict && a.mean == b.mean {
			return shown
		}
		return refuted
	}
	if math.IsInf(a.mean, 0) || math.IsInf(b.mean, 0) || len(d.terms) == 0 {
		return exact(), ""
	}
	for _, t := range d.terms {
		if t.n < 2 {
			return withinNoise, "one seed, no interval"
		}
	}
	lo, hi := d.welchInterval(conf)
	switch {
	case lo == hi: // no spread: the difference is exact
		return exact(), ""
	case lo > 0:
		return shown, ""
	case hi < 0:
		return refuted, ""
	}
	return withinNoise, fmt.Sprintf("difference %+.2f, %g%% interval [%+.2f, %+.2f]", d.mean, 100*conf, lo, hi)
}

// welchInterval is the interval of e's mean at confidence conf: Student's
// t with the Welch–Satterthwaite degrees of freedom of its terms (each
// over at least 2 seeds); lo == hi where no term has any spread.
func (e estimate) welchInterval(conf float64) (lo, hi float64) {
	var v, den float64
	for _, t := range e.terms {
		v += t.v
		den += t.v * t.v / float64(t.n-1)
	}
	if v == 0 {
		return e.mean, e.mean
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: v * v / den}.Quantile(1-(1-conf)/2) * math.Sqrt(v)
	return e.mean - half, e.mean + half
}

// comparison is one comparison a claim makes: for its row (the row the
// claim speaks of: the upper one of an order, the one ahead of a
// widening), with the rows it involves, the entries as printed, and what
// the data say.
type comparison struct {
	row      string
	rows     []string
	text     string
	outcome  outcome
	noise    string
	at       [][2]int // the entries it reads (paper table row, column)
	diverged bool     // a side is a diverged entry: the outcome rests on it
}

// claimCells are the entries a claim reads: the value of a row at a
// column, ok false where not run (missing or provisional).
type claimCells func(r, col int) (estimate, bool)

// decide decides claim c on the entries cells gives, at confidence conf;
// noisy are the entries (paper table row, column) of the comparisons the
// data leave within the noise, where more seeds could decide them.
func (pc *PaperComparison) decide(c *published.Claim, cells claimCells, conf float64) (verdict string, noisy [][2]int) {
	cr := &claimReading{
		pc:        pc,
		t:         pc.Paper,
		c:         c,
		cells:     cells,
		conf:      conf,
		missingIn: map[string][]string{},
		used:      map[int]map[int]bool{},
	}
	columns := make([]int, 0, len(cr.t.Columns))
	for i, label := range cr.t.Columns {
		if len(c.Columns) == 0 || slices.Contains(c.Columns, label) {
			columns = append(columns, i)
		}
	}
	rows := make([]int, 0, len(cr.t.Rows))
	for r, row := range cr.t.Rows {
		if len(c.Rows) == 0 || slices.Contains(c.Rows, row.Name) {
			rows = append(rows, r)
		}
	}
	switch {
	case len(c.Order) > 0:
		cr.order(columns)
	case len(c.ColumnOrder) > 0 && c.GroupMeans:
		cr.groupMeans(rows)
	case len(c.ColumnOrder) > 0:
		cr.columnOrder(rows)
	case c.Rises || c.Falls:
		cr.trend(rows, columns)
	case len(c.Widens) > 0:
		cr.widens(columns)
	default:
		cr.extreme(columns)
	}
	diverged := cr.diverged()
	for _, cp := range cr.cmps {
		if cp.outcome == withinNoise && !slices.ContainsFunc(cp.rows, func(r string) bool { return diverged[r] > 0 }) {
			noisy = append(noisy, cp.at...)
		}
	}
	return verdictOf(cr.t, cr.cmps, diverged, cr.missing, cr.missingIn, conf), noisy
}

// claimReading is a claim being decided: the entries it reads (those
// missing, and per row), and the comparisons it makes.
type claimReading struct {
	pc        *PaperComparison
	t         *published.Table
	c         *published.Claim
	cells     claimCells
	conf      float64
	missing   []string
	missingIn map[string][]string  // per row
	used      map[int]map[int]bool // row → columns the claim read
	cmps      []comparison
}

// get reads the entry of row r at column col, noting it as read, and as
// missing where it is.
func (cr *claimReading) get(r, col int) (estimate, bool) {
	if cr.used[r] == nil {
		cr.used[r] = map[int]bool{}
	}
	cr.used[r][col] = true
	v, ok := cr.cells(r, col)
	v.at = [][2]int{{r, col}}
	if m := cr.t.Rows[r].Name + " at " + cr.col(cr.t.Columns[col]); !ok && !slices.Contains(cr.missing, m) {
		cr.missing = append(cr.missing, m)
		cr.missingIn[cr.t.Rows[r].Name] = append(cr.missingIn[cr.t.Rows[r].Name], m)
	}
	return v, ok
}

// col is a column as the grid names it.
func (cr *claimReading) col(label string) string { return cr.pc.Grid.ColumnName(label) }

// add compares a with b (a above b; strictly when strict) for the row
// the comparison speaks of, with the rows it involves and its text.
func (cr *claimReading) add(row string, involved []string, text string, a, b estimate, strict bool) {
	o, noise := compare(a, b, strict, cr.conf)
	cr.cmps = append(
		cr.cmps,
		comparison{row: row, rows: involved, text: text, outcome: o, noise: noise, at: slices.Concat(a.at, b.at),
			diverged: math.IsInf(a.mean, -1) || math.IsInf(b.mean, -1)},
	)
}

// show is an entry as a comparison's text prints it ("*": diverged).
func show(v estimate) string {
	if math.IsInf(v.mean, -1) {
		return "*"
	}
	return fmt.Sprintf("%.2f", v.mean)
}

// showGap is a gap between two entries as a comparison's text prints it.
func showGap(v estimate) string {
	if math.IsNaN(v.mean) || math.IsInf(v.mean, 0) {
		return "n/a (a side diverged)"
	}
	return fmt.Sprintf("%+.2f", v.mean)
}

// order compares, in each column, every row of a rank of the claim's
// Order with every row of the next.
func (cr *claimReading) order(columns []int) {
	t, c := cr.t, cr.c
	for _, cl := range columns {
		for k := 0; k+1 < len(c.Order); k++ {
			for _, above := range c.Order[k] {
				for _, below := range c.Order[k+1] {
					a, aok := cr.get(t.RowNamed(above), cl)
					b, bok := cr.get(t.RowNamed(below), cl)
					if aok && bok {
						cr.add(
							above,
							[]string{above, below},
							fmt.Sprintf("%s: %s %s, %s %s", cr.col(t.Columns[cl]), above, show(a), below, show(b)),
							a,
							b,
							c.Strict,
						)
					}
				}
			}
		}
	}
}

// groupMeans compares, in each row, the mean of a group of the claim's
// ColumnOrder with the next group's.
func (cr *claimReading) groupMeans(rows []int) {
	t, c := cr.t, cr.c
	names := func(g []string) string {
		cols := make([]string, len(g))
		for i, label := range g {
			cols[i] = cr.col(label)
		}
		return "the mean at " + strings.Join(cols, ", ")
	}
	for _, r := range rows {
		name := t.Rows[r].Name
		group := func(g []string) (estimate, bool) {
			es := make([]estimate, len(g))
			for i, label := range g {
				var ok bool
				if es[i], ok = cr.get(r, slices.Index(t.Columns, label)); !ok {
					return estimate{}, false
				}
			}
			return meanOf(es), true
		}
		for k := 0; k+1 < len(c.ColumnOrder); k++ {
			a, aok := group(c.ColumnOrder[k])
			b, bok := group(c.ColumnOrder[k+1])
			if aok && bok {
				cr.add(
					name,
					[]string{name},
					fmt.Sprintf(
						"%s: %s %s, %s %s",
						name,
						names(c.ColumnOrder[k]),
						show(a),
						names(c.ColumnOrder[k+1]),
						show(b),
					),
					a,
					b,
					c.Strict,
				)
			}
		}
	}
}

// columnOrder compares, in each row, every column of a rank of the
// claim's ColumnOrder with every column of the next.
func (cr *claimReading) columnOrder(rows []int) {
	t, c := cr.t, cr.c
	for _, r := range rows {
		name := t.Rows[r].Name
		for k := 0; k+1 < len(c.ColumnOrder); k++ {
			for _, above := range c.ColumnOrder[k] {
				for _, below := range c.ColumnOrder[k+1] {
					a, aok := cr.get(r, slices.Index(t.Columns, above))
					b, bok := cr.get(r, slices.Index(t.Columns, below))
					if aok && bok {
						cr.add(
							name,
							[]string{name},
							fmt.Sprintf("%s: %s %s, %s %s", name, cr.col(above), show(a), cr.col(below), show(b)),
							a,
							b,
							c.Strict,
						)
					}
				}
			}
		}
	}
}

// trend compares, in each row, each column with the next: rising
// strictly (Rises) or falling (Falls).
func (cr *claimReading) trend(rows, columns []int) {
	t, c := cr.t, cr.c
	for _, r := range rows {
		name := t.Rows[r].Name
		for k := 0; k+1 < len(columns); k++ {
			a, aok := cr.get(r, columns[k])
			b, bok := cr.get(r, columns[k+1])
			if !aok || !bok {
				continue
			}
			text := fmt.Sprintf(
				"%s: %s %s, %s %s",
				name,
				cr.col(t.Columns[columns[k]]),
				show(a),
				cr.col(t.Columns[columns[k+1]]),
				show(b),
			)
			if c.Rises {
				cr.add(name, []string{name}, text, b, a, true)
			} else {
				cr.add(name, []string{name}, text, a, b, false)
			}
		}
	}
}

// widens compares the gap between the claim's two Widens rows in each
// column with the gap in the next, which must be wider.
func (cr *claimReading) widens(columns []int) {
	t, c := cr.t, cr.c
	ahead, behind := t.RowNamed(c.Widens[0]), t.RowNamed(c.Widens[1])
	gap := func(cl int) (estimate, bool) {
		a, aok := cr.get(ahead, cl)
		b, bok := cr.get(behind, cl)
		return a.minus(b), aok && bok // ±Inf where a side diverged, NaN where both did
	}
	for k := 0; k+1 < len(columns); k++ {
		a, aok := gap(columns[k])
		b, bok := gap(columns[k+1])
		if aok && bok && !math.IsNaN(a.mean) && !math.IsNaN(b.mean) {
			cr.add(
				c.Widens[0],
				c.Widens,
				fmt.Sprintf(
					"%s − %s: %s %s, %s %s",
					c.Widens[0],
					c.Widens[1],
					cr.col(t.Columns[columns[k]]),
					showGap(a),
					cr.col(t.Columns[columns[k+1]]),
					showGap(b),
				),
				b,
				a,
				true,
			)
		}
	}
}

// extreme compares, in each row the claim's Best (or Worst) names, the
// column it names with every other column.
func (cr *claimReading) extreme(columns []int) {
	t, c := cr.t, cr.c
	extreme, sign := c.Best, 1.0
	if len(c.Worst) > 0 {
		extreme, sign = c.Worst, -1
	}
	for _, name := range slices.Sorted(maps.Keys(extreme)) {
		r, want := t.RowNamed(name), slices.Index(t.Columns, extreme[name])
		w, wok := cr.get(r, want)
		for _, cl := range columns {
			v, ok := cr.get(r, cl)
			if cl == want || !ok || !wok {
				continue
			}
			text := fmt.Sprintf(
				"%s: %s %s, %s %s",
				name,
				cr.col(t.Columns[cl]),
				show(v),
				cr.col(extreme[name]),
				show(w),
			)
			if sign > 0 {
				cr.add(name, []string{name}, text, w, v, false)
			} else {
				cr.add(name, []string{name}, text, v, w, false)
			}
		}
	}
}

// diverged are the rows that diverged in every cell the claim read that
// ran (at least one), with how many: they decide nothing.
func (cr *claimReading) diverged() map[string]int {
	diverged := map[string]int{}
	for r, cols := range cr.used {
		all, ran := true, 0
		for cl := range cols {
			if v, ok := cr.cells(r, cl); ok {
				ran++
				all = all && math.IsInf(v.mean, -1)
			}
		}
		if all && ran > 0 {
			diverged[cr.t.Rows[r].Name] = ran
		}
	}
	return diverged
}

// verdictOf is a claim's verdict from its comparisons: per row where the
// rows differ; rows in diverged (diverged in all their cells) cannot
// decide, and nothing holds while an entry is missing (missing, and per
// row, missingIn).
func verdictOf(
	t *published.Table,
	cmps []comparison,
	diverged map[string]int,
	missing []string,
	missingIn map[string][]string,
	conf float64,
) string {
	per, order := rowVerdicts(t, cmps, diverged, missingIn)
	var divergedRows []string
	for _, r := range t.Rows {
		n := diverged[r.Name]
		switch k := len(missingIn[r.Name]); {
		case n > 0 && k > 0:
			divergedRows = append(
				divergedRows,
				fmt.Sprintf(
					"%s diverged in %s run (%s not run)",
					r.Name,
					plural(n, "the only cell", "all %d cells"),
					plural(k, "1 entry", "%d entries"),
				),
			)
		case n > 0:
			divergedRows = append(
				divergedRows,
				fmt.Sprintf("%s diverged in %s", r.Name, plural(n, "its only cell", "all %d cells")),
			)
		}
	}
	failing, failingByDivergence := 0, 0
	words := map[string]bool{}
	for _, r := range order {
		w, _ := per[r].word(conf)
		words[w] = true
		if strings.HasPrefix(w, fails) {
			failing++
		}
		if w == fails+byDivergence {
			failingByDivergence++
		}
	}
	anyFails := failing > 0
	switch {
	case anyFails && len(order) == 1 && len(divergedRows) == 0:
		w, why := per[order[0]].word(conf)
		return w + " (" + why + ")"
	case !anyFails && len(missing) > 0:
		return fmt.Sprintf(
			"%s (%s missing, e.g. %s)",
			notRunClaim,
			plural(len(missing), "1 entry", "%d entries"),
			missing[0],
		)
	case len(order) == 0 && len(divergedRows) > 0:
		return cannot + ": " + strings.Join(divergedRows, "; ")
	case len(order) == 0:
		return notDecided + " (no comparison to make)"
	case len(words) == 1 && len(divergedRows) == 0:
		w, why := per[order[0]].word(conf)
		if len(order) > 1 && !strings.HasPrefix(w, holds) {
			break
		}
		if why != "" {
			return w + " (" + why + ")"
		}
		return w
	}
	// The rows differ: say which decide it.
	held := map[string][]string{} // holds, or holds by divergence: the rows
	var parts []string
	for _, r := range order {
		w, why := per[r].word(conf)
		if strings.HasPrefix(w, holds) {
			held[w] = append(held[w], r)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s for %s (%s)", w, r, why))
	}
	for _, w := range []string{holds + byDivergence, holds} {
		if len(held[w]) > 0 {
			parts = append([]string{w + " for " + andList(held[w])}, parts...)
		}
	}
	parts = append(parts, divergedRows...)
	w := notDecided
	switch {
	case anyFails && failingByDivergence == failing:
		w = fails + byDivergence
	case anyFails:
		w = fails
	}
	return w + ": " + strings.Join(parts, "; ")
}

// rowVerdict is what a claim's comparisons say of one row.
type rowVerdict struct {
	failed, noise    string
	failedDiverged   bool // the comparison that failed rests on a diverged entry
	noisy, n         int
	decidedDiverging int // comparisons decided that rest on a diverged entry
	missing          []string
}

// rowVerdicts folds the comparisons per row (order: the rows in the
// order they come up, those with missing entries first), leaving out
// those that involve a row that diverged in all its cells.
func rowVerdicts(
	t *published.Table,
	cmps []comparison,
	diverged map[string]int,
	missingIn map[string][]string,
) (per map[string]*rowVerdict, order []string) {
	per = map[string]*rowVerdict{}
	row := func(name string) *rowVerdict {
		v := per[name]
		if v == nil {
			v = &rowVerdict{missing: missingIn[name]}
			per[name] = v
			order = append(order, name)
		}
		return v
	}
	for _, r := range t.Rows {
		if len(missingIn[r.Name]) > 0 && diverged[r.Name] == 0 {
			row(r.Name)
		}
	}
	for _, cp := range cmps {
		if slices.ContainsFunc(cp.rows, func(r string) bool { return diverged[r] > 0 }) {
			continue
		}
		v := row(cp.row)
		v.n++
		if cp.diverged && cp.outcome != withinNoise {
			v.decidedDiverging++
		}
		switch cp.outcome {
		case refuted:
			if v.failed == "" {
				v.failed, v.failedDiverged = cp.text, cp.diverged
			}
		case withinNoise:
			if v.noisy++; v.noise == "" {
				v.noise = cp.text + ": " + cp.noise
			}
		}
	}
	return per, order
}

// word is a row's verdict, and why, at confidence conf.
func (v *rowVerdict) word(conf float64) (string, string) {
	switch {
	case v.failed != "" && v.failedDiverged:
		return fails + byDivergence, v.failed
	case v.failed != "":
		return fails, v.failed
	case len(v.missing) > 0:
		return notRunClaim, fmt.Sprintf(
			"%s missing, e.g. %s",
			plural(len(v.missing), "1 entry", "%d entries"),
			v.missing[0],
		)
	case v.noisy > 0:
		return notDecided, fmt.Sprintf(
			"%d of %d comparisons within the noise at %g%%, e.g. %s",
			v.noisy,
			v.n,
			100*conf,
			v.noise,
		)
	case v.n > 0 && v.decidedDiverging == v.n:
		return holds + byDivergence, ""
	}
	return holds, ""
}

// plural is one where n is 1, else many with n in it.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// andList is names joined as prose: "A", "A and B", "A, B and C".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
