package report

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
	"github.com/ump-lab/ump/stats"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
)

// Entry is one entry of a results table: a value aggregated over seeds.
type Entry struct {
	Mean, Std float64
	Values    []float64 // the seeds' values, in the plan's order
	Also      []Stat    // the layout's also columns, at the same choice
	Seeds     int
	Select    string // the chosen value of the select path, or ""
	Diverged  bool   // every choice had a diverged seed: shown as *
	Missing   bool   // no choice had all its cells finished
	// Finished and Of: a Missing entry's cells that finished so far, of
	// how many. Without a select path its Mean, Std, Values and Seeds are
	// those of the seeds that completed (Partial).
	Finished, Of int
	selectMean   float64 // the mean of the grid's SelectBy figure, which chose Select
	// Selection says how sure the choice of Select is (nil without a
	// choice to make); entries that share one choice share it.
	Selection     *Selection
	bySeed        map[int]float64 // SelectBy per seed that chose (NaN: diverged)
	RunnerUpEntry *Entry          // the entry under Selection.RunnerUp, or nil
	// Provisional: some choice of the select path has not finished yet,
	// so the choice, and the entry, may still change (shown with †,
	// never in bold).
	Provisional bool
}

// Stat is a column of the final table aggregated over seeds.
type Stat struct {
	Mean, Std float64
	Values    []float64 // the seeds'
}

// StatOf is the mean and sample std of vals.
func StatOf(vals []float64) Stat {
	f := Stat{Values: vals}
	for _, v := range vals {
		f.Mean += v
	}
	f.Mean /= float64(len(vals))
	for _, v := range vals {
		f.Std += (v - f.Mean) * (v - f.Mean)
	}
	if len(vals) > 1 {
		f.Std = math.Sqrt(f.Std / float64(len(vals)-1))
	}
	return f
}

// Grid is a results table: rows x columns of entries.
type Grid struct {
	Spec      manifests.Table
	RowLabels [][]string // the values of the row paths, per row
	ColLabels [][]string // the values of the column paths, per column
	Entries   [][]Entry  // [row][column]
	Cells     [][][]int  // [row][column]: the plan indexes of the entry's cells, every choice's
	Choices   []string   // per plan cell: its value of the select path ("" without one)
	// SelectBy is the figure whose seed mean chooses the select path's
	// value: the validation figure (val_acc_mean, or val_loss_mean for a
	// value where lower is better) when every cell holds out a validation
	// share, else the value itself (the paper's protocol).
	SelectBy string
	// Intervals: entries show the 95% interval of the mean (Stat.interval)
	// in place of ± std.
	Intervals bool
	// Baseline is the labels of the row every other row is compared with,
	// per column (difference, Welch's p, probability of improvement); nil
	// for none.
	Baseline []string
}

// RowIndex is the row a user names: by its label as printed (RowTitle)
// or its identifier (the row paths' values), exactly, then ignoring case,
// then by a part of either found in no other row's.
func (g *Grid) RowIndex(label string) (row int, ok bool) {
	part := func(name, l string) bool { return strings.Contains(strings.ToLower(name), strings.ToLower(l)) }
	for _, match := range []func(name, l string) bool{func(name, l string) bool { return name == l },
		strings.EqualFold, part} {
		found := -1
		for r := range g.RowLabels {
			if !match(strings.Join(g.RowLabels[r], " / "), label) && !match(g.RowTitle(r), label) {
				continue
			}
			if found >= 0 {
				return -1, false
			}
			found = r
		}
		if found >= 0 {
			return found, true
		}
	}
	return -1, false
}

// comparison is entry (r, c) against the baseline row's in the same
// column: the difference of the means, Welch's p-value and the
// probability that a seed of r beats one of the baseline (ok false for
// the baseline itself, or when either has no numbers).
func (g *Grid) comparison(r, c int) (diff, p, better float64, ok bool) {
	base := slices.IndexFunc(g.RowLabels, func(l []string) bool { return slices.Equal(l, g.Baseline) })
	if g.Baseline == nil || base < 0 || r == base {
		return 0, 0, 0, false
	}
	e, b := g.Entries[r][c], g.Entries[base][c]
	if e.Missing || e.Diverged || b.Missing || b.Diverged {
		return 0, 0, 0, false
	}
	return e.Mean - b.Mean, welchP(e.Values, b.Values), stats.Improvement(e.Values, b.Values, g.Spec.Best), true
}

// comparisonText renders comparison (r, c): " (Δ +0.0123, p 0.034, P(better) 0.89)".
func (g *Grid) comparisonText(r, c int) string {
	diff, p, better, ok := g.comparison(r, c)
	if !ok {
		return ""
	}
	sign := ""
	if diff >= 0 {
		sign = "+"
	}
	return fmt.Sprintf(" (Δ %s%s, p %.3g, P(better) %.2f)", sign, g.number(diff), p, better)
}

// DefaultTable is the layout when a manifest has no table block: a row per
// swept setting (all swept paths but seed and lr), the lr tuned when it is
// swept, the first figure of the final table.
func DefaultTable(plan *manifests.Plan, value string) manifests.Table {
	t := manifests.Table{Value: value, Best: manifests.BestFor(value), Digits: 4}
	for _, p := range slices.Sorted(maps.Keys(plan.Manifest.Sweep)) {
		switch p {
		case "seed":
		case "lr":
			t.Select = "lr"
		default:
			t.Rows = append(t.Rows, p)
		}
	}
	if len(t.Rows) == 0 {
		t.Rows = []string{"algorithm"}
	}
	return t
}

// Layout is how a manifest's results are arranged in tables and figures:
// its table block, else DefaultTable on its task's figure (test_acc_mean;
// objective_gap for the quadratic task).
func Layout(plan *manifests.Plan) manifests.Table {
	if t := plan.Manifest.Table; t != nil {
		return *t
	}
	return DefaultTable(plan, plan.Manifest.Task.Kind().Value)
}

// HeadlineFigures are the final figures shown beside each cell (the
// console's cell lines, the dashboard's cells table): the layout's value
// and also, and train_loss.
func HeadlineFigures(spec manifests.Table) []string {
	var out []string
	for _, name := range slices.Concat([]string{spec.Value}, spec.Also, []string{"train_loss"}) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// CheckTable refuses, before any result is read (or computed), a layout
// that does not fit the manifest: a swept path it does not place
// (manifests.Table.Unplaced), a value or also that names no figure of
// the cells' final tables, a select path that is also a row or column
// path, and two rows that print alike. (A label may name a row the
// sweep no longer has: overrides narrow paper manifests' sweeps.) Errors
// wrap state.ErrBadArgument.
func CheckTable(plan *manifests.Plan, spec manifests.Table) error {
	if unplaced := spec.Unplaced(slices.Sorted(maps.Keys(plan.Manifest.Sweep))); len(unplaced) > 0 {
		return fmt.Errorf(
			"%w: table: the sweep varies %s, which the layout does not place (neither a row, a column, the select "+
				"path nor seed); "+
				"add each to table.rows or table.columns",
			state.ErrBadArgument,
			strings.Join(unplaced, " and "),
		)
	}
	var figures []string // every cell's final table has these columns but round
	for i := range plan.Cells {
		for _, c := range stages.Columns(plan.Cells[i].Config.Task, plan.Cells[i].Config.Validation != nil)[1:] {
			if !slices.Contains(figures, c) {
				figures = append(figures, c)
			}
		}
	}
	for k, name := range slices.Concat([]string{spec.Value}, spec.Also) {
		if !slices.Contains(figures, name) {
			field := "table.value"
			if k > 0 {
				field = "table.also"
			}
			return fmt.Errorf(
				"%w: %s %q is not a figure of the final table; its columns are: %s",
				state.ErrBadArgument,
				field,
				name,
				strings.Join(figures, ", "),
			)
		}
	}
	if spec.Select != "" && (slices.Contains(spec.Rows, spec.Select) || slices.Contains(spec.Columns, spec.Select)) {
		return fmt.Errorf(
			"%w: table.select: %s is also a row or column path; a path is a row, a column or the select path, one of "+
				"them",
			state.ErrBadArgument,
			spec.Select,
		)
	}
	g, err := NewGrid(plan, spec, make([]Final, len(plan.Cells)))
	if err != nil {
		return err
	}
	titles := map[string]int{}
	for r := range g.RowLabels {
		if other, ok := titles[g.RowTitle(r)]; ok {
			return fmt.Errorf(
				"%w: table.labels: rows %s and %s both print as %q; give each row its own label",
				state.ErrBadArgument,
				strings.Join(g.RowLabels[other], " / "),
				strings.Join(g.RowLabels[r], " / "),
				g.RowTitle(r),
			)
		}
		titles[g.RowTitle(r)] = r
	}
	return nil
}

// CheckLabels refuses a label (table.labels) that names nothing a table
// or figure of the plans shows: a row or column value as tables print it,
// a swept path or one the layout places, or a column of the final or
// rounds table. Several plans:
// a manifest and the same with overrides (which may narrow its sweep), a
// label naming something in any of them.
func CheckLabels(spec manifests.Table, plans ...*manifests.Plan) error {
	named := map[string]bool{}
	var rows []string
	for _, plan := range plans {
		layout := Layout(plan)
		for _, p := range slices.Concat(slices.Collect(maps.Keys(plan.Manifest.Sweep)), layout.Rows, layout.Columns,
			[]string{layout.Select}) {
			named[p] = true
		}
		for i := range plan.Cells {
			for _, c := range stages.Columns(plan.Cells[i].Config.Task, plan.Cells[i].Config.Validation != nil) {
				named[c] = true
			}
		}
		g, err := NewGrid(plan, layout, make([]Final, len(plan.Cells)))
		if err != nil {
			return err
		}
		for _, l := range slices.Concat(g.RowLabels, g.ColLabels) {
			for _, v := range l {
				if !named[v] {
					rows = append(rows, v)
				}
				named[v] = true
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(spec.Labels)) {
		if !named[key] {
			return fmt.Errorf(
				"%w: table.labels: %q names no row or column value, swept path or figure of the table (values: %s): "+
					"write the key as ump table prints it, or remove it",
				state.ErrBadArgument,
				key,
				strings.Join(rows, ", "),
			)
		}
	}
	return nil
}

// Final is a cell's final figures: its status and the first row of its
// final table (nil when it has none yet).
type Final struct {
	Status  string
	Figures map[string]float64
}

// finished reports whether the cell ran to its end (completed or
// diverged) and its figures were read.
func (f Final) finished() bool {
	return (f.Status == eventlog.Completed || f.Status == eventlog.Diverged) && f.Figures != nil
}

// ReadFinals reads the final figures of every finished cell of a report,
// by plan index; the others have only their status.
func ReadFinals(ctx context.Context, s state.Source, rep *state.Report) ([]Final, error) {
	finals := make([]Final, len(rep.Cells))
	for i, cell := range rep.Cells {
		finals[i].Status = cell.Status
		if cell.Status != eventlog.Completed && cell.Status != eventlog.Diverged {
			continue
		}
		ref, ok := cell.Output(stages.Final)
		if !ok {
			continue
		}
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		t, err := artifacts.ReadArrow(data)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		finals[i].Figures = map[string]float64{}
		for _, c := range t.Columns {
			if len(c.Floats) > 0 {
				finals[i].Figures[c.Name] = c.Floats[0]
			}
		}
	}
	return finals, nil
}

// ReadGrid lays out a manifest's final results as spec says (CheckTable,
// ReadFinals, NewGrid).
func ReadGrid(ctx context.Context, s state.Source, rep *state.Report, spec manifests.Table) (*Grid, error) {
	if err := CheckTable(&rep.Plan, spec); err != nil {
		return nil, err
	}
	finals, err := ReadFinals(ctx, s, rep)
	if err != nil {
		return nil, err
	}
	return NewGrid(&rep.Plan, spec, finals)
}

// Best returns the best entry of the whole table and its row and column
// labels; ok is false when no entry has a result yet.
func (g *Grid) Best() (label string, e Entry, ok bool) {
	for c, r := range g.BestRows() {
		if r < 0 {
			continue
		}
		cand := g.Entries[r][c]
		if !ok || (g.Spec.Best == "min" && cand.Mean < e.Mean) || (g.Spec.Best != "min" && cand.Mean > e.Mean) {
			label, e, ok = strings.Join(g.RowLabels[r], " / "), cand, true
			if len(g.Spec.Columns) > 0 {
				label += ", " + g.ColumnHeader(c)
			}
		}
	}
	return label, e, ok
}

// BestRows returns, per column, the row with the best mean (-1 if none).
func (g *Grid) BestRows() []int {
	out := make([]int, len(g.ColLabels))
	for c := range out {
		out[c] = -1
		for r := range g.RowLabels {
			e := g.Entries[r][c]
			if e.Missing || e.Diverged || e.Provisional {
				continue
			}
			if out[c] < 0 || (g.Spec.Best == "min" && e.Mean < g.Entries[out[c]][c].Mean) ||
				(g.Spec.Best != "min" && e.Mean > g.Entries[out[c]][c].Mean) {
				out[c] = r
			}
		}
	}
	return out
}

// Text renders an entry: mean ± std, then each also figure after a
// slash; * or –; an entry still running says how much of it finished.
func (g *Grid) Text(e Entry, pm string) string {
	switch {
	case e.Diverged:
		return "*"
	case e.Partial():
		return g.stat(Stat{e.Mean, e.Std, e.Values}, e.Seeds, pm) + fmt.Sprintf(" (%d of %d seeds)", e.Seeds, e.Of)
	case e.Missing && e.Finished > 0:
		return fmt.Sprintf("– (%d of %d cells)", e.Finished, e.Of)
	case e.Missing:
		return "–"
	}
	s := g.stat(Stat{e.Mean, e.Std, e.Values}, e.Seeds, pm)
	for _, a := range e.Also {
		s += " / " + g.stat(a, e.Seeds, pm)
	}
	if e.Provisional {
		s += " †"
	}
	return s
}

// stat renders mean ± std, or mean [low, high] with Intervals; one seed
// has no spread: mean ± n/a.
func (g *Grid) stat(f Stat, seeds int, pm string) string {
	s := g.number(f.Mean)
	switch {
	case seeds < 2:
		return s + " " + pm + " n/a"
	case g.Intervals:
		lo, hi, _ := f.IntervalOf(seeds, g.Spec.Value, 1)
		return s + " [" + g.number(lo) + ", " + g.number(hi) + "]"
	}
	return s + " " + pm + " " + g.number(f.Std)
}

// number renders a value with the table's decimals, in scientific
// notation from 1e6 on (a blown-up but finite run).
func (g *Grid) number(v float64) string {
	if math.Abs(v) >= 1e6 {
		return fmt.Sprintf("%.*e", g.Spec.Digits, v)
	}
	return fmt.Sprintf("%.*f", g.Spec.Digits, v)
}

// SelectNote is what follows an entry that tuned the select path:
// " (lr=0.1)", and where the choice is not stable (Selection.Stable)
// the runner-up: " (lr=0.01; 0.0316 within noise)".
func (g *Grid) SelectNote(e Entry) string {
	if g.Spec.Select == "" || e.Missing || e.Diverged {
		return ""
	}
	if s := e.Selection; s != nil && !s.Stable() {
		return fmt.Sprintf(" (%s=%s; %s within noise)", g.Spec.Select, e.Select, s.RunnerUp)
	}
	return fmt.Sprintf(" (%s=%s)", g.Spec.Select, e.Select)
}

// ColumnHeader is column c's header: its column paths' values, or the
// figures shown when the layout has no columns.
func (g *Grid) ColumnHeader(c int) string {
	if len(g.Spec.Columns) == 0 {
		return strings.Join(slices.Concat([]string{g.Spec.Value}, g.Spec.Also), " / ")
	}
	parts := make([]string, len(g.Spec.Columns))
	for i, p := range g.Spec.Columns {
		parts[i] = p + "=" + g.ColLabels[c][i]
	}
	return strings.Join(parts, " ")
}

// Shown is what tables show for a row or column value, a path or a
// figure column: the layout's label for it (Table.Labels), else the name
// itself.
func (g *Grid) Shown(name string) string {
	if l, ok := g.Spec.Labels[name]; ok {
		return l
	}
	return name
}

// RowsTitle heads the rows' column: the row paths, as shown.
func (g *Grid) RowsTitle() string { return g.titles(g.Spec.Rows, nil, " / ") }

// RowTitle is row r's label as tables show it.
func (g *Grid) RowTitle(r int) string { return g.titles(g.RowLabels[r], nil, " / ") }

// ColumnTitle is column c's header as tables show it: each column path
// and its value, as shown ("partition.alpha=0.1", or with labels
// "non-IID = 0.1").
func (g *Grid) ColumnTitle(c int) string {
	if len(g.Spec.Columns) == 0 {
		return g.titles(slices.Concat([]string{g.Spec.Value}, g.Spec.Also), nil, " / ")
	}
	return g.titles(g.Spec.Columns, g.ColLabels[c], " ")
}

// titles shows names, each with its value where values are given (a
// labelled path takes " = ", as the paper writes it).
func (g *Grid) titles(names, values []string, sep string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = g.Shown(n)
		if values != nil {
			eq := "="
			if parts[i] != n {
				eq = " = "
			}
			parts[i] += eq + g.Shown(values[i])
		}
	}
	return strings.Join(parts, sep)
}

// ColumnName is a column of the paper's table as tables show it: its
// label with the layout's column paths ("partition.alpha=0.1", or with
// labels "non-IID = 0.1").
func (g *Grid) ColumnName(label string) string {
	if len(g.Spec.Columns) == 0 {
		return label
	}
	return g.titles([]string{strings.Join(g.Spec.Columns, " / ")}, []string{label}, "")
}

// RowLabeled is the index of the row whose labels print as label (joined
// by " / ", as tables print them), or -1; ColumnLabeled likewise.
func (g *Grid) RowLabeled(label string) int    { return labelIndex(g.RowLabels, label) }
func (g *Grid) ColumnLabeled(label string) int { return labelIndex(g.ColLabels, label) }

// labelIndex is the index of the row or column labels (one value per
// path) that print as label, joined by " / " as tables print them, or -1.
func labelIndex(labels [][]string, label string) int {
	return slices.IndexFunc(labels, func(l []string) bool { return strings.Join(l, " / ") == label })
}

// Legend explains the entries in one line (as the dashboard shows it; the
// tables escape the labels in it for their format).
func (g *Grid) Legend() string { return g.legend(func(s string) string { return s }) }

// seedRange is the fewest and the most seeds an entry of the table
// aggregates (0, 0 for a table without one).
func (g *Grid) seedRange() (lo, hi int) {
	for _, row := range g.Entries {
		for _, e := range row {
			if e.Missing || e.Diverged {
				continue
			}
			if lo == 0 || e.Seeds < lo {
				lo = e.Seeds
			}
			hi = max(hi, e.Seeds)
		}
	}
	return lo, hi
}

// legend is Legend with each row label passed through esc.
func (g *Grid) legend(esc func(string) string) string {
	spread := "mean ± std over seeds"
	if g.Intervals {
		spread = fmt.Sprintf(
			"mean [95%% interval of the mean over seeds: Student's t up to %d seeds, a percentile bootstrap of %d "+
				"resamples beyond%s]",
			tMaxSeeds,
			stats.BootstrapResamples,
			rangeNote(g.Spec.Value, 1),
		)
	}
	s := fmt.Sprintf(
		"%s of the final round, %s (best: %s, in bold; ± n/a: one seed)",
		strings.Join(slices.Concat([]string{g.Spec.Value}, g.Spec.Also), " / "),
		spread,
		g.Spec.Best,
	)
	s += g.SelectionNote()
	if base := esc(strings.Join(g.Baseline, " / ")); g.Baseline != nil {
		s += fmt.Sprintf(
			"; (Δ, p, P(better)): the difference of the means to %s's, Welch's two-sided p-value, and the "+
				"probability that a seed's value beats one of %s's (ties half)",
			base,
			base,
		)
	}
	s += "; * diverged, – not run yet"
	if g.anyEntry(func(e Entry) bool { return e.Missing && e.Finished > 0 }) {
		s += "; (k of n seeds): still running, the mean of the k seeds finished so far; (k of n cells): still " +
			"running, k cells finished, no value to show yet"
	}
	if lo, hi := g.seedRange(); lo < hi {
		s += fmt.Sprintf(
			"; the entries aggregate %d to %d seeds (cells added beyond the sweep; the export's seeds column says "+
				"each's)",
			lo,
			hi,
		)
	}
	if g.unstable() {
		s += fmt.Sprintf(
			"; X within noise: the runner-up %s, where fewer than %g%% of %d resamples of the seeds choose the same %s",
			g.Spec.Select,
			100*StableSelection,
			SelectionResamples,
			g.Spec.Select,
		)
	}
	if g.anyEntry(func(e Entry) bool { return e.Provisional }) {
		return s + "; † provisional: other values of " + g.Spec.Select + " still run"
	}
	return s
}

// anyEntry reports whether an entry of the grid satisfies f.
func (g *Grid) anyEntry(f func(Entry) bool) bool {
	for _, row := range g.Entries {
		if slices.ContainsFunc(row, f) {
			return true
		}
	}
	return false
}

// unstable reports whether an entry's choice is not stable.
func (g *Grid) unstable() bool {
	for _, row := range g.Entries {
		if slices.ContainsFunc(
			row,
			func(e Entry) bool { return !e.Missing && e.Selection != nil && !e.Selection.Stable() },
		) {
			return true
		}
	}
	return false
}

// Selections says, for each choice of the select path with a runner-up
// (per row, or per entry), how sure it is: the margin of the selection
// figure's mean over the runner-up's, the share of resamples of the
// seeds that choose it again, and a better choice a diverged seed
// excluded; nil without choices. Each row label passes through esc.
func (g *Grid) selections(esc func(string) string) []string {
	var lines []string
	seen := map[*Selection]bool{}
	for r, row := range g.Entries {
		for c, e := range row {
			s := e.Selection
			if e.Missing || e.Diverged || s == nil || seen[s] {
				continue
			}
			seen[s] = true
			where := esc(g.RowTitle(r))
			if g.Spec.Scope() != manifests.PerRow && len(g.ColLabels) > 1 {
				where += " at " + esc(g.ColumnTitle(c))
			}
			margin := ", which diverged in more entries"
			if !math.IsNaN(s.Margin) {
				margin = " by " + g.number(s.Margin)
			}
			line := fmt.Sprintf(
				"- %s: %s=%s over %s%s, chosen again in %.1f%% of resamples",
				where,
				g.Spec.Select,
				e.Select,
				s.RunnerUp,
				margin,
				100*s.Stability,
			)
			switch {
			case math.IsNaN(s.Stability):
				line = fmt.Sprintf(
					"- %s: %s=%s over %s%s; one seed, so how sure cannot be measured",
					where,
					g.Spec.Select,
					e.Select,
					s.RunnerUp,
					margin,
				)
			case !s.Stable():
				line += " (within noise)"
			}
			if s.Excluded != "" {
				line += fmt.Sprintf(
					"; %s has the better mean (%s) but a diverged seed excludes it",
					s.Excluded,
					g.number(s.ExcludedMean),
				)
			}
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	head := fmt.Sprintf(
		"Choices of %s (the margin of %s's mean over the runner-up's, and the share of %d resamples of the seeds "+
			"that choose it again):",
		g.Spec.Select,
		g.SelectBy,
		SelectionResamples,
	)
	return append([]string{head}, lines...)
}

// SelectionNote says how the select path was chosen: "; lr chosen per
// entry by the max mean" of the value, or of the validation figure.
func (g *Grid) SelectionNote() string {
	if g.Spec.Select == "" {
		return ""
	}
	scope, mean := "per entry", "the "+g.Spec.Best+" mean"
	if g.Spec.Scope() == manifests.PerRow {
		scope = "once per row (for all its columns)"
		mean = "the " + g.Spec.Best + " mean over the row's columns of each entry's mean"
	}
	switch {
	case g.Spec.SelectSeeds != nil:
		return fmt.Sprintf(
			"; %s chosen %s by %s of %s over seeds %s, which the entries leave out (they aggregate the other seeds)",
			g.Spec.Select,
			scope,
			mean,
			g.SelectBy,
			strings.Trim(strings.Join(strings.Fields(fmt.Sprint(g.Spec.SelectSeeds)), ", "), "[]"),
		)
	case g.SelectBy != g.Spec.Value:
		return fmt.Sprintf(
			"; %s chosen %s by %s of %s (on the samples each worker holds out, never trained on), not by the figure "+
				"shown",
			g.Spec.Select,
			scope,
			mean,
			g.SelectBy,
		)
	}
	return fmt.Sprintf("; %s chosen %s by %s", g.Spec.Select, scope, mean)
}

// Markdown renders the grid as a Markdown table. Labels and values from
// the manifest are escaped (display.Markdown).
func (g *Grid) Markdown() string {
	var b strings.Builder
	best := g.BestRows()
	b.WriteString("| " + display.Markdown(g.RowsTitle()))
	for c := range g.ColLabels {
		b.WriteString(" | " + display.Markdown(g.ColumnTitle(c)))
	}
	b.WriteString(" |\n|" + strings.Repeat("---|", len(g.ColLabels)+1) + "\n")
	for r := range g.RowLabels {
		b.WriteString("| " + display.Markdown(g.RowTitle(r)))
		for c, e := range g.Entries[r] {
			cell := g.Text(e, "±")
			if best[c] == r {
				cell = "**" + cell + "**"
			}
			b.WriteString(" | " + cell + display.Markdown(g.SelectNote(e)+g.comparisonText(r, c)))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\n" + g.legend(display.Markdown) + "\n")
	for _, l := range g.selections(display.Markdown) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// LaTeX renders the grid as a booktabs tabular, the best entry of each
// column in bold as the paper does; labels and values from the manifest
// are escaped (display.LaTeX), the legend is in comments.
func (g *Grid) LaTeX() string {
	var b strings.Builder
	best := g.BestRows()
	b.WriteString("% " + g.legend(display.Terminal) + "\n")
	for _, l := range g.selections(display.Terminal) {
		b.WriteString("% " + l + "\n")
	}
	b.WriteString(`\begin{tabular}{l` + strings.Repeat("c", len(g.ColLabels)) + "}\n\\toprule\n")
	b.WriteString(display.LaTeX(g.RowsTitle()))
	for c := range g.ColLabels {
		b.WriteString(" & " + display.LaTeX(g.ColumnTitle(c)))
	}
	b.WriteString(` \\` + "\n\\midrule\n")
	for r := range g.RowLabels {
		b.WriteString(display.LaTeX(g.RowTitle(r)))
		for c, e := range g.Entries[r] {
			cell := g.Text(e, `$\pm$`)
			if best[c] == r {
				cell = `\textbf{` + cell + `}`
			}
			b.WriteString(" & " + cell + display.LaTeX(g.SelectNote(e)+g.comparisonText(r, c)))
		}
		b.WriteString(` \\` + "\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// Table returns the grid as a flat table: the row and column paths, then
// each entry's mean and std (NaN for one seed), the also figures', the
// 95% interval of the mean, with a baseline the comparison (difference,
// Welch's p, probability of improvement), the seeds, the selected value
// and the status.
func (g *Grid) Table() *artifacts.Table {
	t := &artifacts.Table{}
	paths := slices.Concat(g.Spec.Rows, g.Spec.Columns)
	for _, p := range paths {
		t.Columns = append(t.Columns, artifacts.Column{Name: p, Strings: []string{}})
	}
	mean := artifacts.Column{Name: g.Spec.Value + "_mean", Floats: []float64{}}
	std := artifacts.Column{Name: g.Spec.Value + "_std", Floats: []float64{}}
	seeds := artifacts.Column{Name: "seeds", Ints: []int64{}}
	sel := artifacts.Column{Name: "selected_" + g.Spec.Select, Strings: []string{}}
	status := artifacts.Column{Name: "status", Strings: []string{}}
	for r, rl := range g.RowLabels {
		for c, cl := range g.ColLabels {
			for i, v := range slices.Concat(rl, cl) {
				t.Columns[i].Strings = append(t.Columns[i].Strings, v)
			}
			e := g.Entries[r][c]
			st := eventlog.Completed
			switch {
			case e.Diverged:
				st, e.Mean, e.Std = eventlog.Diverged, math.NaN(), math.NaN()
			case e.Missing: // a partial mean is for reading, not for analysis
				st, e.Mean, e.Std, e.Seeds = eventlog.Pending, math.NaN(), math.NaN(), 0
			case e.Provisional:
				st = "provisional"
			}
			if e.Seeds < 2 {
				e.Std = math.NaN() // no spread
			}
			mean.Floats, std.Floats = append(mean.Floats, e.Mean), append(std.Floats, e.Std)
			seeds.Ints, sel.Strings, status.Strings = append(
				seeds.Ints,
				int64(e.Seeds),
			), append(
				sel.Strings,
				e.Select,
			), append(
				status.Strings,
				st,
			)
		}
	}
	t.Columns = append(t.Columns, mean, std)
	t.Columns = append(t.Columns, g.alsoColumns()...)
	t.Columns = append(t.Columns, g.comparisonColumns()...)
	t.Columns = append(t.Columns, seeds)
	if g.Spec.Select != "" {
		t.Columns = append(t.Columns, sel)
	}
	t.Columns = append(t.Columns, status)
	return t
}

// alsoColumns are the Table's columns of the also figures: each one's
// mean and std (NaN for one seed).
func (g *Grid) alsoColumns() []artifacts.Column {
	var cols []artifacts.Column
	for k, name := range g.Spec.Also {
		m := artifacts.Column{Name: name + "_mean", Floats: []float64{}}
		sd := artifacts.Column{Name: name + "_std", Floats: []float64{}}
		for r := range g.RowLabels {
			for c := range g.ColLabels {
				f := Stat{Mean: math.NaN(), Std: math.NaN()}
				if e := g.Entries[r][c]; !e.Missing && !e.Diverged {
					f = e.Also[k]
					if e.Seeds < 2 {
						f.Std = math.NaN()
					}
				}
				m.Floats, sd.Floats = append(m.Floats, f.Mean), append(sd.Floats, f.Std)
			}
		}
		cols = append(cols, m, sd)
	}
	return cols
}

// comparisonColumns are the Table's columns of the 95% interval of each
// entry's mean and, with a baseline, the comparison (difference, Welch's
// p, probability of improvement).
func (g *Grid) comparisonColumns() []artifacts.Column {
	lo := artifacts.Column{Name: g.Spec.Value + "_ci95_low", Floats: []float64{}}
	hi := artifacts.Column{Name: g.Spec.Value + "_ci95_high", Floats: []float64{}}
	diff := artifacts.Column{Name: g.Spec.Value + "_difference", Floats: []float64{}}
	p := artifacts.Column{Name: "welch_p", Floats: []float64{}}
	better := artifacts.Column{Name: "p_improvement", Floats: []float64{}}
	for r := range g.RowLabels {
		for c := range g.ColLabels {
			e, l, h := g.Entries[r][c], math.NaN(), math.NaN()
			if !e.Missing && !e.Diverged && e.Seeds > 1 {
				l, h, _ = Stat{e.Mean, e.Std, e.Values}.IntervalOf(e.Seeds, g.Spec.Value, 1)
			}
			lo.Floats, hi.Floats = append(lo.Floats, l), append(hi.Floats, h)
			d, pv, b, ok := g.comparison(r, c)
			if !ok {
				d, pv, b = math.NaN(), math.NaN(), math.NaN()
			}
			diff.Floats, p.Floats, better.Floats = append(
				diff.Floats,
				d,
			), append(
				p.Floats,
				pv,
			), append(
				better.Floats,
				b,
			)
		}
	}
	if g.Baseline != nil {
		return []artifacts.Column{lo, hi, diff, p, better}
	}
	return []artifacts.Column{lo, hi}
}
