package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/figure"
)

// SweepFigure draws a grid's entries against its one column path, as the
// paper draws the effect of a swept parameter (local steps K, momentum β,
// workers): one line per row through the entries' means, the seeds' ± one
// standard deviation as error bars, the column values as evenly spaced
// categories in the table's order. A diverged or missing entry leaves a
// gap (its row's legend says where). ok is false unless the layout has
// exactly one column path and at least two columns.
func (g *Grid) SweepFigure(title string) (f figure.Figure, ok bool) {
	if len(g.Spec.Columns) != 1 || len(g.ColLabels) < 2 {
		return figure.Figure{}, false
	}
	f = figure.Figure{
		Name:  "sweep-" + g.Spec.Columns[0],
		Title: title,
		X:     Label(g.Spec, g.Spec.Columns[0]),
		Y:     Label(g.Spec, g.Spec.Value),
	}
	for _, l := range g.ColLabels {
		f.Categories = append(f.Categories, l[0])
	}
	for r, name := range g.seriesLabels() {
		s := figure.Series{Label: name}
		gaps := map[string][]string{} // what a gap is -> its columns
		for c, e := range g.Entries[r] {
			s.X = append(s.X, float64(c))
			mean, std := e.Mean, e.Std
			switch {
			case e.Diverged:
				mean, std = math.NaN(), math.NaN()
				gaps["* diverged"] = append(gaps["* diverged"], f.Categories[c])
			case e.Missing:
				mean, std = math.NaN(), math.NaN()
				gaps["– not run"] = append(gaps["– not run"], f.Categories[c])
			case e.Provisional:
				gaps["† provisional"] = append(gaps["† provisional"], f.Categories[c])
			}
			if e.Seeds < 2 {
				std = 0
			}
			s.Mean, s.Std = append(s.Mean, mean), append(s.Std, std)
			s.Seeds = max(s.Seeds, e.Seeds)
		}
		if g.Spec.Select != "" {
			s.Select = g.Spec.Select + " per entry"
			if chosen := g.chosen(r); chosen != "" {
				s.Select = g.Spec.Select + "=" + short(chosen)
			}
		}
		var notes []string
		for _, what := range []string{"* diverged", "– not run", "† provisional"} {
			if at := gaps[what]; len(at) > 0 {
				notes = append(notes, what+" at "+strings.Join(at, ", "))
			}
		}
		if len(notes) > 0 {
			s.Label += " (" + strings.Join(notes, "; ") + ")"
		}
		f.Series = append(f.Series, s)
	}
	return f, true
}

// chosen is the one value of the select path that row r's entries with a
// result share, or "" when they chose several.
func (g *Grid) chosen(r int) string {
	one := ""
	for _, e := range g.Entries[r] {
		switch {
		case e.Missing || e.Diverged:
		case one == "":
			one = e.Select
		case e.Select != one:
			return ""
		}
	}
	return one
}

// short is a number with 3 significant digits (0.0316 for
// 0.03162277660168379), anything else as it is.
func short(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}
