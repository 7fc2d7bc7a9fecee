package pipeline

import (
	"context"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages/train"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one curve: the mean of y over seeds at each x, and its
// standard deviation.
type Series struct {
	Label         string
	X, Mean, Std  []float64
	Seeds         int
	DivergedSeeds int
}

// Figure is one plot: a curve per table row, for one table column.
type Figure struct {
	Title  string
	X, Y   string
	Series []Series
}

// Curves builds the figures of a manifest from the rounds tables: one
// figure per column of the table layout, one series per row, seeds
// averaged, and where the layout selects a path (lr) the cells of the
// selected value only. x is "round" or another column (e.g.
// bits_sent_per_worker).
func (s *Store) Curves(ctx context.Context, rep *Report, spec manifests.Table, x, y string) ([]Figure, error) {
	grid, err := s.Grid(ctx, rep, spec)
	if err != nil {
		return nil, err
	}
	figs := make([]Figure, len(grid.ColLabels))
	for c := range figs {
		figs[c] = Figure{Title: grid.colHeader(c), X: x, Y: y}
		if len(spec.Columns) == 0 {
			figs[c].Title = rep.Plan.Manifest.Name
		}
		for r := range grid.RowLabels {
			figs[c].Series = append(figs[c].Series, Series{Label: strings.Join(grid.RowLabels[r], " / ")})
		}
	}
	sums := map[[2]int]map[float64][]float64{} // (figure, series) -> x -> y per seed
	for i := range rep.Plan.Cells {
		cell := &rep.Plan.Cells[i]
		r := slices.IndexFunc(grid.RowLabels, func(l []string) bool { return slices.Equal(l, valuesAt(cell, spec.Rows)) })
		c := slices.IndexFunc(grid.ColLabels, func(l []string) bool { return slices.Equal(l, valuesAt(cell, spec.Columns)) })
		if e := grid.Entries[r][c]; spec.Select != "" && cell.ValueAt(spec.Select) != e.Select {
			continue
		}
		ref, ok := rep.Cells[i].Output(train.Rounds)
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
		xs, ys, err := columnPair(t, x, y)
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
		figs[c].Series[r].Seeds++
		if rep.Cells[i].Stage(train.Name).Result.Diverged {
			figs[c].Series[r].DivergedSeeds++
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
			return nil, fmt.Errorf("the rounds table has no column %q; its columns are: %s", name, strings.Join(names, ", "))
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

// Save draws the figure (mean lines, a shaded band of ± one standard
// deviation over seeds) to path; the extension (.png, .svg) sets the
// format.
func (f *Figure) Save(path string) error {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text, p.Y.Label.Text = f.X, f.Y
	p.Legend.Top = true
	for i, sr := range f.Series {
		if len(sr.X) == 0 {
			continue
		}
		col := plotutil.Color(i)
		band := make(plotter.XYs, 0, 2*len(sr.X))
		for k := range sr.X {
			band = append(band, plotter.XY{X: sr.X[k], Y: sr.Mean[k] + sr.Std[k]})
		}
		for k := len(sr.X) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: sr.X[k], Y: sr.Mean[k] - sr.Std[k]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
		poly.LineStyle.Width = 0
		line := make(plotter.XYs, len(sr.X))
		for k := range sr.X {
			line[k] = plotter.XY{X: sr.X[k], Y: sr.Mean[k]}
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		label := sr.Label
		if sr.Seeds > 1 {
			label += fmt.Sprintf(" (%d seeds)", sr.Seeds)
		}
		if sr.DivergedSeeds > 0 {
			label += fmt.Sprintf(" *%d diverged", sr.DivergedSeeds)
		}
		p.Add(poly, l)
		p.Legend.Add(label, l)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// histogramGrid is a worker x class count grid for a heat map.
type histogramGrid struct {
	workers, classes int
	counts           []int64
}

func (h histogramGrid) Dims() (c, r int)   { return h.workers, h.classes }
func (h histogramGrid) Z(c, r int) float64 { return float64(h.counts[c*h.classes+r]) }
func (h histogramGrid) X(c int) float64    { return float64(c) }
func (h histogramGrid) Y(r int) float64    { return float64(r) }

// SaveHistogram draws a partition's class histogram (the partition
// stage's "histogram" table) as a heat map: workers across, classes up.
func SaveHistogram(t *artifacts.Table, title, path string) error {
	w, c, counts := t.Column("worker"), t.Column("class"), t.Column("count")
	if w == nil || c == nil || counts == nil || len(counts.Ints) == 0 {
		return fmt.Errorf("not a class histogram table")
	}
	h := histogramGrid{workers: int(slices.Max(w.Ints)) + 1, classes: int(slices.Max(c.Ints)) + 1, counts: counts.Ints}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "worker", "class"
	pal := moreland.SmoothBlueRed().Palette(255)
	p.Add(plotter.NewHeatMap(h, pal))
	return p.Save(vg.Length(max(4, float64(h.workers)*0.3))*vg.Inch, vg.Length(max(3, float64(h.classes)*0.25))*vg.Inch, path)
}
