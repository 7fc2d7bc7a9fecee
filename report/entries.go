package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/state"
)

// NewGrid lays out the final figures of a plan's cells (by plan index) as
// spec says: every swept path is a row or column path, the select path,
// or seed (aggregated as mean and sample std). Per entry, each choice of
// the select path whose cells all finished is a candidate; the best mean
// (spec.Best) wins, a choice with a diverged seed only when no other
// finished.
func NewGrid(plan *manifests.Plan, spec manifests.Table, finals []Final) (*Grid, error) {
	g := &Grid{Spec: spec, Choices: make([]string, len(plan.Cells)), SelectBy: spec.Value}
	if !slices.ContainsFunc(plan.Cells, func(c manifests.Cell) bool { return c.Config.Validation == nil }) {
		g.SelectBy = "val_acc_mean"
		if spec.Best == "min" {
			g.SelectBy = "val_loss_mean"
		}
	}
	groups := g.group(plan)
	g.Entries = make([][]Entry, len(g.RowLabels))
	g.Cells = make([][][]int, len(g.RowLabels))
	for r := range g.Entries {
		g.Entries[r] = make([]Entry, len(g.ColLabels))
		g.Cells[r] = make([][]int, len(g.ColLabels))
		for c := range g.Entries[r] {
			g.Entries[r][c] = Entry{Missing: true}
		}
	}
	for _, gr := range groups {
		g.Cells[gr.row][gr.col] = gr.cells
		gr.candidates = map[string]*Entry{}
		for _, choice := range gr.order {
			e, err := g.candidate(plan, finals, gr.choices[choice], choice)
			if err != nil {
				return nil, err
			}
			gr.candidates[choice] = e
		}
		gr.partial = g.partial(finals, gr)
	}
	if spec.Scope() == manifests.PerRow {
		rows := make([][]*entryGroup, len(g.RowLabels))
		for _, gr := range groups {
			rows[gr.row] = append(rows[gr.row], gr)
		}
		for _, row := range rows {
			slices.SortFunc(row, func(a, b *entryGroup) int { return a.col - b.col })
			g.choose(row)
		}
	} else {
		for _, gr := range groups {
			g.choose([]*entryGroup{gr})
		}
	}
	return g, nil
}

// entryGroup is the cells of one entry, by choice of the select path.
type entryGroup struct {
	row, col   int
	choices    map[string][]int // select value -> cell indexes
	order      []string
	cells      []int             // every choice's
	candidates map[string]*Entry // per choice: nil where a cell has not finished
	partial    Entry             // what it shows while no choice has finished (Grid.partial)
}

// group sorts the plan's cells into their entries (and the grid's row and
// column labels), noting each cell's choice.
func (g *Grid) group(plan *manifests.Plan) map[[2]int]*entryGroup {
	spec := g.Spec
	groups := map[[2]int]*entryGroup{}
	index := func(labels *[][]string, l []string) int {
		i := slices.IndexFunc(*labels, func(x []string) bool { return slices.Equal(x, l) })
		if i < 0 {
			*labels = append(*labels, l)
			i = len(*labels) - 1
		}
		return i
	}
	for i := range plan.Cells {
		c := &plan.Cells[i]
		r, col := index(&g.RowLabels, valuesAt(c, spec.Rows)), index(&g.ColLabels, valuesAt(c, spec.Columns))
		gr := groups[[2]int{r, col}]
		if gr == nil {
			gr = &entryGroup{row: r, col: col, choices: map[string][]int{}}
			groups[[2]int{r, col}] = gr
		}
		choice := ""
		if spec.Select != "" {
			choice = c.ValueAt(spec.Select)
		}
		g.Choices[i] = choice
		if _, ok := gr.choices[choice]; !ok {
			gr.order = append(gr.order, choice)
		}
		gr.choices[choice] = append(gr.choices[choice], i)
		gr.cells = append(gr.cells, i)
	}
	return groups
}

// choose picks, for entries that share one choice (one, or a row's), the
// best choice of which each entry's candidate finished, and sets their
// entries.
func (g *Grid) choose(scope []*entryGroup) {
	var order []string
	for _, gr := range scope {
		for _, choice := range gr.order {
			if !slices.Contains(order, choice) {
				order = append(order, choice)
			}
		}
	}
	var complete []string
	unfinished := false
	for _, choice := range order {
		done := true
		for _, gr := range scope {
			done = done && gr.candidates[choice] != nil
		}
		if done {
			complete = append(complete, choice)
		} else {
			unfinished = true
		}
	}
	entries := func(choice string) []*Entry {
		var es []*Entry
		for _, gr := range scope {
			es = append(es, gr.candidates[choice])
		}
		return es
	}
	found := len(complete) > 0
	best := ""
	if found {
		best, _ = winner(complete, entries, nil, g.Spec.Best)
	}
	var sel *Selection
	if len(complete) > 1 {
		sel = selection(complete, best, entries, g.Spec.Best)
	}
	for _, gr := range scope {
		e := gr.partial
		if found {
			e = *gr.candidates[best]
			e.Provisional = unfinished
			e.Selection = sel
			if sel != nil {
				e.RunnerUpEntry = gr.candidates[sel.RunnerUp]
			}
		}
		g.Entries[gr.row][gr.col] = e
	}
}

// partial is the Missing entry of a group none of whose choices has
// finished: how many of its cells finished, and without a select path
// the value over the seeds that completed (a diverged seed has no value).
func (g *Grid) partial(finals []Final, gr *entryGroup) Entry {
	e := Entry{Missing: true, Of: len(gr.cells)}
	var vals []float64
	for _, i := range gr.cells {
		f := finals[i]
		if !f.finished() {
			continue
		}
		e.Finished++
		if v, ok := f.Figures[g.Spec.Value]; ok && f.Status == eventlog.Completed && !math.IsNaN(v) &&
			!math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	if g.Spec.Select == "" && len(vals) > 0 {
		s := StatOf(vals)
		e.Mean, e.Std, e.Values, e.Seeds = s.Mean, s.Std, s.Values, len(vals)
	}
	return e
}

// Partial reports whether e is a Missing entry that shows the mean of the
// seeds finished so far.
func (e *Entry) Partial() bool { return e.Missing && e.Seeds > 0 }

// candidate is the entry of cells (one choice's, every seed) when all
// finished, else nil: Diverged when a seed diverged.
func (g *Grid) candidate(plan *manifests.Plan, finals []Final, cells []int, choice string) (*Entry, error) {
	spec := g.Spec
	var vals, by []float64 // the value's, and SelectBy's
	bySeed := map[int]float64{}
	also := make([][]float64, len(spec.Also))
	diverged := false
	for _, i := range cells {
		f := finals[i]
		if !f.finished() {
			return nil, nil
		}
		figure := func(field, name string) (float64, error) {
			v, ok := f.Figures[name]
			if !ok {
				return 0, fmt.Errorf(
					"%w: %s %q is not a figure of the final table; its columns are: %s",
					state.ErrBadArgument,
					field,
					name,
					strings.Join(slices.Sorted(maps.Keys(f.Figures)), ", "),
				)
			}
			return v, nil
		}
		v, err := figure("table.value", spec.Value)
		if err != nil {
			return nil, err
		}
		b, err := figure("the selection figure", g.SelectBy)
		if err != nil {
			return nil, err
		}
		if f.Status == eventlog.Diverged || math.IsNaN(v) || math.IsInf(v, 0) {
			diverged = true
		}
		seed := plan.Cells[i].Config.Seed
		tuning := slices.Contains(spec.SelectSeeds, seed)
		if tuning || spec.SelectSeeds == nil {
			by = append(by, b)
			bySeed[seed] = b
			if f.Status == eventlog.Diverged || math.IsNaN(b) || math.IsInf(b, 0) {
				bySeed[seed] = math.NaN()
			}
		}
		if tuning {
			continue // a tuning seed: not reported
		}
		for k, name := range spec.Also {
			a, err := figure("table.also", name)
			if err != nil {
				return nil, err
			}
			also[k] = append(also[k], a)
		}
		vals = append(vals, v)
	}
	if diverged {
		return &Entry{Diverged: true, Select: choice, bySeed: bySeed}, nil
	}
	f := StatOf(vals)
	e := &Entry{
		Mean:       f.Mean,
		Std:        f.Std,
		Values:     vals,
		Seeds:      len(vals),
		Select:     choice,
		selectMean: StatOf(by).Mean,
		bySeed:     bySeed,
	}
	for _, a := range also {
		e.Also = append(e.Also, StatOf(a))
	}
	return e, nil
}
