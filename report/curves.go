package report

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/optimizers"
)

// axisTitles are the figures' default axis titles of rounds-table columns
// (Table.Labels overrides them).
var axisTitles = map[string]string{
	"round":                "round",
	"bits_sent_per_worker": "bits sent per worker",
	"train_loss":           "training loss",
	"test_acc_mean":        "test accuracy (local models, mean over workers)",
	"consensus_acc":        "test accuracy (averaged model)",
	"test_loss_mean":       "test loss (local models, mean over workers)",
	"consensus_loss":       "test loss (averaged model)",
	"partition.alpha":      "Dirichlet α (non-IID degree)",
	"local_steps":          "local steps K",
	"workers":              "workers",
	"objective_gap":        "objective gap f(x̄) − f(x*)",
	"grad_norm_sq":         "|∇f(x̄)|²",
	"consensus_distance":   "consensus distance (mean |xᵢ − x̄|²)",
}

// Label is what figures show for a value, path or column: the layout's
// Labels, else a default axis title, else the name itself.
func Label(spec manifests.Table, name string) string {
	if l, ok := spec.Labels[name]; ok {
		return l
	}
	if l, ok := axisTitles[name]; ok {
		return l
	}
	return name
}

// greek are the parameter names that spell a Greek letter, as the paper
// writes them.
var greek = map[string]string{
	"alpha":  "α",
	"beta":   "β",
	"gamma":  "γ",
	"eta":    "η",
	"lambda": "λ",
	"mu":     "μ",
	"rho":    "ρ",
	"sigma":  "σ",
}

// blockFields are the fields that name a block's kind: a row swept over
// one is named by its block (topology = ring, not kind = ring).
var blockFields = map[string]bool{"kind": true, "name": true, "codec": true}

// paramName is how a legend names a swept path: the layout's label, else
// its parameter's name as declared (the path's last part, a Greek letter
// where it spells one, local_steps as "local steps K"), and a block's kind
// by the block (blockFields).
func paramName(spec manifests.Table, path string) string {
	if l, ok := spec.Labels[path]; ok {
		return l
	}
	name := path[strings.LastIndex(path, ".")+1:]
	if block, _, ok := strings.Cut(path, "."); ok && blockFields[name] && !strings.Contains(path[len(block)+1:], ".") {
		name = block // topology.kind says what topology; the block's name says it best
	}
	if g, ok := greek[name]; ok {
		return g
	}
	if path == "local_steps" {
		return "local steps K"
	}
	return strings.ReplaceAll(name, "_", " ")
}

// shorten drops from algorithm labels such as gt-dsum(alpha=2,beta=0.9)
// the parameters at their declared defaults and those every label
// shares: what tells the curves apart.
func shorten(labels []string) []string {
	params := make([][]string, len(labels))
	count := map[string]int{}
	for i, l := range labels {
		name, list, ok := strings.Cut(l, "(")
		if !ok || !strings.HasSuffix(list, ")") {
			continue
		}
		labels[i] = name
		kind, _ := optimizers.Family.Lookup(name)
		pairs := strings.Split(strings.TrimSuffix(list, ")"), ",")
		values := kinds.Values{} // the label's own, for defaults computed from them (qg-dsgdm's mu: beta)
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				values[k] = f
			} else {
				values[k] = v
			}
		}
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			if kind != nil {
				decl, ok := kind.Param(k)
				switch {
				case !ok:
				case decl.Default != nil && fmt.Sprint(decl.Default) == v:
					continue
				case decl.DefaultOf != nil && fmt.Sprint(decl.DefaultOf(values, kinds.Cell{})) == v:
					continue
				}
			}
			if p != "" {
				params[i] = append(params[i], p)
				count[p]++
			}
		}
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		var keep []string
		for _, p := range params[i] {
			if count[p] < len(labels) {
				keep = append(keep, p)
			}
		}
		out[i] = l
		if len(keep) > 0 {
			out[i] += " (" + strings.Join(keep, ", ") + ")"
		}
	}
	return out
}

// CurveOptions say what Curves draws.
type CurveOptions struct {
	X, Y string // rounds-table columns: "round" or another (bits_sent_per_worker), and the figure
	// Live adds the rounds that cells still training (or interrupted, or
	// failed) have reported so far; an entry none of whose choices of the
	// select path has finished shows the choice whose cells have reported
	// the most rounds (figure.Series.Untuned).
	Live bool
	// Choice, when set, shows the cells of this value of the select path
	// in every entry, instead of the tuned one.
	Choice string
}

// Curves builds the figures of a manifest from the rounds tables: one
// figure per column of the table layout, one series per row, seeds
// averaged, and where the layout selects a path (lr) the cells of the
// selected value only.
func Curves(
	ctx context.Context,
	s state.Source,
	rep *state.Report,
	spec manifests.Table,
	o CurveOptions,
) ([]figure.Figure, error) {
	grid, err := ReadGrid(ctx, s, rep, spec)
	if err != nil {
		return nil, err
	}
	return CurvesFrom(&rep.Plan, grid, spec, o, func(cells []int) string { return furthest(rep, grid, cells) },
		func(i int) (*artifacts.Table, bool, bool, error) {
			t, done, err := roundsOf(ctx, s, rep, i, o.Live)
			return t, done, done && rep.Cells[i].Stage(stages.Train).Result.Diverged, err
		})
}

// RoundsFunc gives cell i's rounds table (nil: none), whether its
// training finished and whether it diverged.
type RoundsFunc func(i int) (t *artifacts.Table, done, diverged bool, err error)

// FigureTitle is what a figure of plan's results is titled: the
// manifest's name, and when its rounds were scaled down (--scale), by how
// much, for a reader who sees the figure alone.
func FigureTitle(plan *manifests.Plan) string {
	m := &plan.Manifest
	if m.Scale == nil {
		return m.Name
	}
	return fmt.Sprintf("%s (scaled: %d of %d rounds)", m.Name, m.ScaledRounds(), m.Rounds)
}

// seriesLabels are the rows' names in figures: the layout's labels, or
// the kind labels without what all rows share.
func (g *Grid) seriesLabels() []string {
	rows := make([]string, len(g.RowLabels))
	for k := range g.Spec.Rows {
		values := make([]string, len(rows))
		for r := range rows {
			values[r] = g.RowLabels[r][k]
		}
		short := shorten(slices.Clone(values))
		for r := range rows {
			part := short[r]
			switch l, ok := g.Spec.Labels[values[r]]; {
			case ok:
				part = l
			case part != "" && g.Spec.Rows[k] != "algorithm": // a bare value: say what it is
				part = paramName(g.Spec, g.Spec.Rows[k]) + " = " + part
			}
			if part == "" { // every row shares it: nothing to tell apart
				continue
			}
			rows[r] = strings.TrimPrefix(rows[r]+" / "+part, " / ")
		}
	}
	return rows
}

// CurvesFrom builds the figures of a grid from its cells' rounds (Curves);
// furthestOf picks the choice a live figure shows for an entry none of
// whose choices has finished (CurveOptions.Live).
func CurvesFrom(
	plan *manifests.Plan,
	grid *Grid,
	spec manifests.Table,
	o CurveOptions,
	furthestOf func(cells []int) string,
	rounds RoundsFunc,
) ([]figure.Figure, error) {
	figs, shown := curveFigures(plan, grid, spec, o, furthestOf)
	sums := map[[2]int]map[float64][]float64{} // (figure, series) -> x -> y per seed
	for r := range grid.RowLabels {
		for c := range grid.ColLabels {
			for _, i := range grid.Cells[r][c] {
				if grid.Choices[i] != shown[r][c] {
					continue
				}
				t, done, diverged, err := rounds(i)
				if err != nil {
					return nil, fmt.Errorf("cell %d: %w", i+1, err)
				}
				if t == nil {
					continue
				}
				xs, ys, err := columnPair(t, o.X, o.Y)
				if err != nil {
					return nil, err
				}
				key := [2]int{c, r}
				if sums[key] == nil {
					sums[key] = map[float64][]float64{}
				}
				for k := range xs {
					sums[key][xs[k]] = append(sums[key][xs[k]], ys[k])
				}
				countSeed(&figs[c].Series[r], done, diverged)
			}
		}
	}
	for key, byX := range sums {
		sr := &figs[key[0]].Series[key[1]]
		for _, xv := range slices.Sorted(maps.Keys(byX)) {
			v := byX[xv]
			mean := 0.0
			for _, y := range v {
				mean += y
			}
			mean /= float64(len(v))
			std := 0.0
			for _, y := range v {
				std += (y - mean) * (y - mean)
			}
			if len(v) > 1 {
				std = math.Sqrt(std / float64(len(v)-1))
			}
			sr.X, sr.Mean, sr.Std = append(sr.X, xv), append(sr.Mean, mean), append(sr.Std, std)
		}
	}
	return figs, nil
}

// curveFigures are the figures, one per column of the grid, each with a
// series per row, and shown[row][column]: the select value whose cells
// each series draws.
func curveFigures(
	plan *manifests.Plan,
	grid *Grid,
	spec manifests.Table,
	o CurveOptions,
	furthestOf func(cells []int) string,
) (figs []figure.Figure, shown [][]string) {
	rows := grid.seriesLabels()
	figs = make([]figure.Figure, len(grid.ColLabels))
	shown = make([][]string, len(grid.RowLabels)) // [row][column]
	for r := range shown {
		shown[r] = make([]string, len(grid.ColLabels))
	}
	for c := range figs {
		figs[c] = figure.Figure{
			Name: grid.ColumnHeader(c), Title: FigureTitle(plan), X: Label(spec, o.X), Y: Label(spec, o.Y),
		}
		if len(spec.Columns) > 0 {
			var parts []string
			for k, path := range spec.Columns {
				parts = append(parts, Label(spec, path)+" = "+Label(spec, grid.ColLabels[c][k]))
			}
			figs[c].Title += ": " + strings.Join(parts, ", ")
		}
		for r := range grid.RowLabels {
			sr := figure.Series{Label: rows[r]}
			e := grid.Entries[r][c]
			choice := e.Select
			switch {
			case spec.Select == "":
			case o.Choice != "":
				choice = o.Choice
			case o.Live && e.Missing:
				choice, sr.Untuned = furthestOf(grid.Cells[r][c]), true
			}
			shown[r][c] = choice
			if choice != "" {
				sr.Select = Label(spec, spec.Select) + "=" + choice
				if v, err := strconv.ParseFloat(choice, 64); err == nil {
					sr.Select = Label(spec, spec.Select) + "=" + strconv.FormatFloat(v, 'g', 3, 64)
				}
			}
			figs[c].Series = append(figs[c].Series, sr)
		}
	}
	return figs, shown
}

// countSeed counts a seed drawn in a series: running (not done) or
// diverged.
func countSeed(sr *figure.Series, done, diverged bool) {
	sr.Seeds++
	switch {
	case !done:
		sr.Running++
	case diverged:
		sr.DivergedSeeds++
	}
}

// roundsOf is cell i's rounds table, done when its training finished; with
// live, a cell still training (or stopped) gives the rounds it reported so
// far. It is nil when the cell has none.
func roundsOf(
	ctx context.Context,
	s state.Source,
	rep *state.Report,
	i int,
	live bool,
) (t *artifacts.Table, done bool, err error) {
	cell := rep.Cells[i]
	if ref, ok := cell.Output(stages.Rounds); ok {
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return nil, false, err
		}
		t, err := artifacts.ReadArrow(data)
		return t, true, err
	}
	st := cell.Stage(stages.Train)
	if !live || st == nil {
		return nil, false, nil
	}
	if t = PartialRounds(&rep.Plan.Cells[i].Config, cell, st); t.Rows() == 0 {
		return nil, false, nil
	}
	return t, false, nil
}

// furthest is the value of the select path whose cells, among the given
// ones, have reported the most rounds (the first in plan order on a tie):
// the choice a live figure shows before any has finished.
func furthest(rep *state.Report, grid *Grid, cells []int) string {
	rounds := map[string]int{}
	var order []string
	for _, i := range cells {
		v := grid.Choices[i]
		if _, ok := rounds[v]; !ok {
			order, rounds[v] = append(order, v), 0
		}
		if st := rep.Cells[i].Stage(stages.Train); st != nil {
			rounds[v] += st.Round
		}
	}
	best := order[0]
	for _, v := range order[1:] {
		if rounds[v] > rounds[best] {
			best = v
		}
	}
	return best
}

func valuesAt(c *manifests.Cell, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = c.ValueAt(p)
	}
	return out
}

// columnPair reads two numeric columns of a rounds table as float64.
func columnPair(t *artifacts.Table, x, y string) ([]float64, []float64, error) {
	get := func(name string) ([]float64, error) {
		c := t.Column(name)
		if c == nil {
			var names []string
			for _, col := range t.Columns {
				names = append(names, col.Name)
			}
			return nil, fmt.Errorf(
				"%w: the rounds table has no column %q; its columns are: %s",
				state.ErrBadArgument,
				name,
				strings.Join(names, ", "),
			)
		}
		if c.Ints != nil {
			out := make([]float64, len(c.Ints))
			for i, v := range c.Ints {
				out[i] = float64(v)
			}
			return out, nil
		}
		return c.Floats, nil
	}
	xs, err := get(x)
	if err != nil {
		return nil, nil, err
	}
	ys, err := get(y)
	return xs, ys, err
}
