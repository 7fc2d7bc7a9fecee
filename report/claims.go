package report

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
)

// estimate is one side of a comparison: a mean over seeds, with the
// variance of that mean as the sum of terms (one per mean it combines),
// or an exact number (the paper's printed mean, or ±Inf where a side
// diverged: a diverged entry is below every number).
type estimate struct {
	mean  float64
	terms []varTerm // empty: exact
}

// varTerm is one mean's contribution to an estimate's variance: s²/n over
// n seeds (Welch–Satterthwaite needs n).
type varTerm struct {
	v float64
	n int
}

// minus is a − b (a diverged side makes it ±Inf; both, NaN).
func (a estimate) minus(b estimate) estimate {
	return estimate{mean: a.mean - b.mean, terms: slices.Concat(a.terms, b.terms)}
}

// meanOf is the mean of estimates: its variance the sum of theirs over
// k² (independent seeds); below every number where one diverged.
func meanOf(es []estimate) estimate {
	var m estimate
	k := float64(len(es))
	for _, e := range es {
		if math.IsInf(e.mean, -1) {
			return estimate{mean: math.Inf(-1)}
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
	row     string
	rows    []string
	text    string
	outcome outcome
	noise   string
}

// claimCells are the entries a claim reads: the value of a row at a
// column, ok false where not run (missing or provisional).
type claimCells func(r, col int) (estimate, bool)

// decide decides claim c on the entries cells gives, at confidence conf.
func (pc *PaperComparison) decide(c *published.Claim, cells claimCells, conf float64) string {
	t := pc.Paper
	var missing []string
	missingIn := map[string][]string{} // per row
	used := map[int]map[int]bool{}     // row → columns the claim read
	get := func(r, col int) (estimate, bool) {
		if used[r] == nil {
			used[r] = map[int]bool{}
		}
		used[r][col] = true
		v, ok := cells(r, col)
		if m := t.Rows[r].Name + " at " + pc.Grid.columnName(t.Columns[col]); !ok && !slices.Contains(missing, m) {
			missing = append(missing, m)
			missingIn[t.Rows[r].Name] = append(missingIn[t.Rows[r].Name], m)
		}
		return v, ok
	}
	show := func(v estimate) string {
		if math.IsInf(v.mean, -1) {
			return "*"
		}
		return fmt.Sprintf("%.2f", v.mean)
	}
	showGap := func(v estimate) string {
		if math.IsNaN(v.mean) || math.IsInf(v.mean, 0) {
			return "n/a (a side diverged)"
		}
		return fmt.Sprintf("%+.2f", v.mean)
	}
	col := func(label string) string { return pc.Grid.columnName(label) }
	columns := make([]int, 0, len(t.Columns))
	for i, label := range t.Columns {
		if len(c.Columns) == 0 || slices.Contains(c.Columns, label) {
			columns = append(columns, i)
		}
	}
	rows := make([]int, 0, len(t.Rows))
	for r, row := range t.Rows {
		if len(c.Rows) == 0 || slices.Contains(c.Rows, row.Name) {
			rows = append(rows, r)
		}
	}
	var cmps []comparison
	add := func(row string, involved []string, text string, a, b estimate, strict bool) {
		o, noise := compare(a, b, strict, conf)
		cmps = append(cmps, comparison{row: row, rows: involved, text: text, outcome: o, noise: noise})
	}
	switch {
	case len(c.Order) > 0:
		for _, cl := range columns {
			for k := 0; k+1 < len(c.Order); k++ {
				for _, above := range c.Order[k] {
					for _, below := range c.Order[k+1] {
						a, aok := get(t.RowNamed(above), cl)
						b, bok := get(t.RowNamed(below), cl)
						if aok && bok {
							add(above, []string{above, below}, fmt.Sprintf("%s: %s %s, %s %s", col(t.Columns[cl]), above, show(a), below, show(b)), a, b, c.Strict)
						}
					}
				}
			}
		}
	case len(c.ColumnOrder) > 0 && c.GroupMeans:
		for _, r := range rows {
			name := t.Rows[r].Name
			group := func(g []string) (estimate, bool) {
				es := make([]estimate, len(g))
				for i, label := range g {
					var ok bool
					if es[i], ok = get(r, slices.Index(t.Columns, label)); !ok {
						return estimate{}, false
					}
				}
				return meanOf(es), true
			}
			names := func(g []string) string {
				cols := make([]string, len(g))
				for i, label := range g {
					cols[i] = col(label)
				}
				return "the mean at " + strings.Join(cols, ", ")
			}
			for k := 0; k+1 < len(c.ColumnOrder); k++ {
				a, aok := group(c.ColumnOrder[k])
				b, bok := group(c.ColumnOrder[k+1])
				if aok && bok {
					add(name, []string{name}, fmt.Sprintf("%s: %s %s, %s %s", name, names(c.ColumnOrder[k]), show(a), names(c.ColumnOrder[k+1]), show(b)), a, b, c.Strict)
				}
			}
		}
	case len(c.ColumnOrder) > 0:
		for _, r := range rows {
			name := t.Rows[r].Name
			for k := 0; k+1 < len(c.ColumnOrder); k++ {
				for _, above := range c.ColumnOrder[k] {
					for _, below := range c.ColumnOrder[k+1] {
						a, aok := get(r, slices.Index(t.Columns, above))
						b, bok := get(r, slices.Index(t.Columns, below))
						if aok && bok {
							add(name, []string{name}, fmt.Sprintf("%s: %s %s, %s %s", name, col(above), show(a), col(below), show(b)), a, b, c.Strict)
						}
					}
				}
			}
		}
	case c.Rises || c.Falls:
		for _, r := range rows {
			name := t.Rows[r].Name
			for k := 0; k+1 < len(columns); k++ {
				a, aok := get(r, columns[k])
				b, bok := get(r, columns[k+1])
				if !aok || !bok {
					continue
				}
				text := fmt.Sprintf("%s: %s %s, %s %s", name, col(t.Columns[columns[k]]), show(a), col(t.Columns[columns[k+1]]), show(b))
				if c.Rises {
					add(name, []string{name}, text, b, a, true)
				} else {
					add(name, []string{name}, text, a, b, false)
				}
			}
		}
	case len(c.Widens) > 0:
		ahead, behind := t.RowNamed(c.Widens[0]), t.RowNamed(c.Widens[1])
		gap := func(cl int) (estimate, bool) {
			a, aok := get(ahead, cl)
			b, bok := get(behind, cl)
			return a.minus(b), aok && bok // ±Inf where a side diverged, NaN where both did
		}
		for k := 0; k+1 < len(columns); k++ {
			a, aok := gap(columns[k])
			b, bok := gap(columns[k+1])
			if aok && bok && !math.IsNaN(a.mean) && !math.IsNaN(b.mean) {
				add(c.Widens[0], c.Widens, fmt.Sprintf("%s − %s: %s %s, %s %s", c.Widens[0], c.Widens[1], col(t.Columns[columns[k]]), showGap(a), col(t.Columns[columns[k+1]]), showGap(b)), b, a, true)
			}
		}
	default:
		extreme, sign := c.Best, 1.0
		if len(c.Worst) > 0 {
			extreme, sign = c.Worst, -1
		}
		for _, name := range slices.Sorted(maps.Keys(extreme)) {
			r, want := t.RowNamed(name), slices.Index(t.Columns, extreme[name])
			w, wok := get(r, want)
			for _, cl := range columns {
				v, ok := get(r, cl)
				if cl == want || !ok || !wok {
					continue
				}
				text := fmt.Sprintf("%s: %s %s, %s %s", name, col(t.Columns[cl]), show(v), col(extreme[name]), show(w))
				if sign > 0 {
					add(name, []string{name}, text, w, v, false)
				} else {
					add(name, []string{name}, text, v, w, false)
				}
			}
		}
	}
	// Rows that diverged in every cell the claim read decide nothing.
	diverged := map[string]int{}
	for r, cols := range used {
		all := true
		for cl := range cols {
			v, ok := cells(r, cl)
			all = all && ok && math.IsInf(v.mean, -1)
		}
		if all {
			diverged[t.Rows[r].Name] = len(cols)
		}
	}
	return verdict(t, cmps, diverged, missing, missingIn, conf)
}

// verdict is a claim's verdict from its comparisons: per row where the
// rows differ; rows in diverged (diverged in all their cells) cannot
// decide, and nothing holds while an entry is missing (missing, and per
// row, missingIn).
func verdict(t *published.Table, cmps []comparison, diverged map[string]int, missing []string, missingIn map[string][]string, conf float64) string {
	type rowVerdict struct {
		failed, noise string
		noisy, n      int
		missing       []string
	}
	per := map[string]*rowVerdict{}
	var order []string
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
		switch cp.outcome {
		case refuted:
			if v.failed == "" {
				v.failed = cp.text
			}
		case withinNoise:
			if v.noisy++; v.noise == "" {
				v.noise = cp.text + ": " + cp.noise
			}
		}
	}
	word := func(v *rowVerdict) (string, string) {
		switch {
		case v.failed != "":
			return fails, v.failed
		case len(v.missing) > 0:
			return notRunClaim, fmt.Sprintf("%s missing, e.g. %s", plural(len(v.missing), "1 entry", "%d entries"), v.missing[0])
		case v.noisy > 0:
			return notDecided, fmt.Sprintf("%d of %d comparisons within the noise at %g%%, e.g. %s", v.noisy, v.n, 100*conf, v.noise)
		}
		return holds, ""
	}
	var divergedRows []string
	for _, r := range t.Rows {
		if n := diverged[r.Name]; n > 0 {
			divergedRows = append(divergedRows, fmt.Sprintf("%s diverged in %s", r.Name, plural(n, "its only cell", "all %d cells")))
		}
	}
	anyFails := false
	words := map[string]bool{}
	for _, r := range order {
		w, _ := word(per[r])
		words[w] = true
		anyFails = anyFails || w == fails
	}
	switch {
	case anyFails && len(order) == 1 && len(divergedRows) == 0:
		_, why := word(per[order[0]])
		return fails + " (" + why + ")"
	case !anyFails && len(missing) > 0:
		return fmt.Sprintf("%s (%s missing, e.g. %s)", notRunClaim, plural(len(missing), "1 entry", "%d entries"), missing[0])
	case len(order) == 0 && len(divergedRows) > 0:
		return cannot + ": " + strings.Join(divergedRows, "; ")
	case len(order) == 0:
		return notDecided + " (no comparison to make)"
	case len(words) == 1 && len(divergedRows) == 0:
		w, why := word(per[order[0]])
		if len(order) > 1 && w != holds {
			break
		}
		if why != "" {
			return w + " (" + why + ")"
		}
		return w
	}
	// The rows differ: say which decide it.
	byWord := map[string][]string{}
	var parts []string
	for _, r := range order {
		w, why := word(per[r])
		if w == holds {
			byWord[holds] = append(byWord[holds], r)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s for %s (%s)", w, r, why))
	}
	if rs := byWord[holds]; len(rs) > 0 {
		parts = append([]string{"holds for " + andList(rs)}, parts...)
	}
	parts = append(parts, divergedRows...)
	w := notDecided
	if anyFails {
		w = fails
	}
	return w + ": " + strings.Join(parts, "; ")
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
