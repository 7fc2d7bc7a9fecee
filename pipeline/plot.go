package pipeline

import (
	"context"
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages/train"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one curve: the mean of y over seeds at each x, and its
// standard deviation.
type Series struct {
	Label         string
	Select        string // the tuned value, e.g. "lr=0.1" (Table.Select), or ""
	X, Mean, Std  []float64
	Seeds         int
	DivergedSeeds int
	Running       int  // seeds still training, or stopped before the end (CurveOptions.Live)
	Untuned       bool // no choice of the select path has finished yet: Select is the one furthest along
}

// Figure is one plot: a curve per table row, for one table column.
type Figure struct {
	Name   string // the table column's header, as `ump table` prints it
	Title  string
	X, Y   string // axis titles
	Series []Series
}

// axisTitles are the figures' default axis titles of rounds-table columns
// (Table.Labels overrides them).
var axisTitles = map[string]string{
	"round": "round", "bits_sent_per_worker": "bits sent per worker", "train_loss": "training loss",
	"test_acc_mean": "test accuracy (local models, mean over workers)", "consensus_acc": "test accuracy (averaged model)",
	"test_loss_mean": "test loss (local models, mean over workers)", "consensus_loss": "test loss (averaged model)",
	"partition.alpha": "Dirichlet α (non-IID degree)", "local_steps": "local steps K", "workers": "workers",
	"objective_gap": "objective gap f(x̄) − f(x*)", "grad_norm_sq": "|∇f(x̄)|²", "consensus_distance": "consensus distance (mean |xᵢ − x̄|²)",
}

// Palette is the colours of a figure's curves, in order (Tableau 10, as
// matplotlib's): `ump plot` and the dashboard draw the i-th series of a
// figure in SeriesColour(i).
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// SeriesColour is the colour of a figure's i-th curve; past the palette
// the colours repeat, dashed (SeriesDashed).
func SeriesColour(i int) string { return Palette[i%len(Palette)] }

// SeriesDashed reports whether a figure's i-th curve is dashed.
func SeriesDashed(i int) bool { return i >= len(Palette) }

// rgb parses a palette colour.
func rgb(hex string) color.NRGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// tickStep is the step of about eight round numbers (1, 2 or 5 times a
// power of ten) over [lo, hi].
func tickStep(lo, hi float64) float64 {
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*step*8 >= hi-lo {
			return step * m
		}
	}
	return step * 10
}

// denseTicks marks about eight round numbers on a linear axis, with a
// minor tick between each two; labels never read -0, and large numbers
// take SI suffixes (2M, not 2000000).
type denseTicks struct{}

func (denseTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := tickStep(lo, hi)
	var ticks []plot.Tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		ticks = append(ticks, plot.Tick{Value: k * step, Label: tickLabel(k*step, step)})
		if m := (k + 0.5) * step; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}

// tickLabel writes a tick's value with the digits its step needs, an SI
// suffix from 10,000 on, and 0 for a rounding -0.
func tickLabel(v, step float64) string {
	suffix := ""
	for _, si := range []struct {
		scale float64
		name  string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= 1e4 && math.Abs(v) >= si.scale {
			v, step, suffix = v/si.scale, step/si.scale, si.name
			break
		}
	}
	digits := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	label := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Trim(label, "-0.") == "" {
		return "0"
	}
	return label + suffix
}

// bracket widens a linear axis to the ticks around its data, so a tick
// lies at or beyond each end (a curve that reaches 0.97 gets a tick at 1).
func bracket(a *plot.Axis) {
	if !(a.Max > a.Min) {
		return
	}
	step := tickStep(a.Min, a.Max)
	a.Min, a.Max = math.Floor(a.Min/step+1e-9)*step, math.Ceil(a.Max/step-1e-9)*step
}

// integerTicks labels every integer of an axis of up to 20 (workers,
// classes), else as denseTicks.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi-lo > 20 {
		return denseTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo); v <= hi; v++ {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return ticks
}

// label is what figures show for a value, path or column: the layout's
// Labels, else a default axis title, else the name itself.
func label(spec manifests.Table, name string) string {
	if l, ok := spec.Labels[name]; ok {
		return l
	}
	if l, ok := axisTitles[name]; ok {
		return l
	}
	return name
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
		kind, _ := algorithms.Family.Lookup(name)
		for _, p := range strings.Split(strings.TrimSuffix(list, ")"), ",") {
			k, v, _ := strings.Cut(p, "=")
			if kind != nil {
				if decl, ok := kind.Param(k); ok && decl.Default != nil && fmt.Sprint(decl.Default) == v {
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
	// the most rounds (Series.Untuned).
	Live bool
	// Choice, when set, shows the cells of this value of the select path
	// in every entry, instead of the tuned one.
	Choice string
}

// Curves builds the figures of a manifest from the rounds tables: one
// figure per column of the table layout, one series per row, seeds
// averaged, and where the layout selects a path (lr) the cells of the
// selected value only.
func (s *Store) Curves(ctx context.Context, rep *Report, spec manifests.Table, o CurveOptions) ([]Figure, error) {
	grid, err := s.Grid(ctx, rep, spec)
	if err != nil {
		return nil, err
	}
	// Row labels: the layout's, or the kind labels without what all rows share.
	rows := make([]string, len(grid.RowLabels))
	for k := range spec.Rows {
		values := make([]string, len(rows))
		for r := range rows {
			values[r] = grid.RowLabels[r][k]
		}
		short := shorten(slices.Clone(values))
		for r := range rows {
			part := short[r]
			if l, ok := spec.Labels[values[r]]; ok {
				part = l
			}
			if part == "" { // every row shares it: nothing to tell apart
				continue
			}
			rows[r] = strings.TrimPrefix(rows[r]+" / "+part, " / ")
		}
	}
	figs := make([]Figure, len(grid.ColLabels))
	shown := make([][]string, len(grid.RowLabels)) // [row][column]: the select value whose cells are drawn
	for c := range figs {
		figs[c] = Figure{Name: grid.ColumnHeader(c), Title: rep.Plan.Manifest.Name, X: label(spec, o.X), Y: label(spec, o.Y)}
		if len(spec.Columns) > 0 {
			var parts []string
			for k, path := range spec.Columns {
				parts = append(parts, label(spec, path)+" = "+label(spec, grid.ColLabels[c][k]))
			}
			figs[c].Title = strings.Join(parts, ", ")
		}
		for r := range grid.RowLabels {
			if c == 0 {
				shown[r] = make([]string, len(grid.ColLabels))
			}
			sr := Series{Label: rows[r]}
			e := grid.Entries[r][c]
			choice := e.Select
			switch {
			case spec.Select == "":
			case o.Choice != "":
				choice = o.Choice
			case o.Live && e.Missing:
				choice, sr.Untuned = furthest(rep, grid, grid.Cells[r][c]), true
			}
			shown[r][c] = choice
			if choice != "" {
				sr.Select = label(spec, spec.Select) + "=" + choice
				if v, err := strconv.ParseFloat(choice, 64); err == nil {
					sr.Select = label(spec, spec.Select) + "=" + strconv.FormatFloat(v, 'g', 3, 64)
				}
			}
			figs[c].Series = append(figs[c].Series, sr)
		}
	}
	sums := map[[2]int]map[float64][]float64{} // (figure, series) -> x -> y per seed
	for r := range grid.RowLabels {
		for c := range grid.ColLabels {
			for _, i := range grid.Cells[r][c] {
				if grid.Choices[i] != shown[r][c] {
					continue
				}
				t, done, err := s.roundsOf(ctx, rep, i, o.Live)
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
				sr := &figs[c].Series[r]
				sr.Seeds++
				switch {
				case !done:
					sr.Running++
				case rep.Cells[i].Stage(train.Name).Result.Diverged:
					sr.DivergedSeeds++
				}
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

// roundsOf is cell i's rounds table, done when its training finished; with
// live, a cell still training (or stopped) gives the rounds it reported so
// far. It is nil when the cell has none.
func (s *Store) roundsOf(ctx context.Context, rep *Report, i int, live bool) (t *artifacts.Table, done bool, err error) {
	cell := rep.Cells[i]
	if ref, ok := cell.Output(train.Rounds); ok {
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return nil, false, err
		}
		t, err := artifacts.ReadArrow(data)
		return t, true, err
	}
	st := cell.Stage(train.Name)
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
func furthest(rep *Report, grid *Grid, cells []int) string {
	rounds := map[string]int{}
	var order []string
	for _, i := range cells {
		v := grid.Choices[i]
		if _, ok := rounds[v]; !ok {
			order, rounds[v] = append(order, v), 0
		}
		if st := rep.Cells[i].Stage(train.Name); st != nil {
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
			return nil, fmt.Errorf("%w: the rounds table has no column %q; its columns are: %s", ErrBadArgument, name, strings.Join(names, ", "))
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

// Save draws the figure to path, its format from the extension (.png at
// 300 dpi, .svg or .pdf): per series the mean over seeds with a shaded
// band of ± one standard deviation, a cross where a diverged curve stops,
// the legend beside the axes (not over the curves), grid lines, and a
// logarithmic y axis when the values span more than two decades.
func (f *Figure) Save(path string) error {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text, p.Y.Label.Text = f.X, f.Y
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = denseTicks{}, denseTicks{}
	logY := f.spansDecades()
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for i, sr := range f.Series {
		var line, band, lower plotter.XYs
		for k := range sr.X {
			m, lo, hi := sr.Mean[k], sr.Mean[k]-sr.Std[k], sr.Mean[k]+sr.Std[k]
			if math.IsNaN(m) || math.IsInf(m, 0) || logY && m <= 0 {
				continue // a diverged seed's last rows
			}
			if logY && lo <= 0 {
				lo = m / 10
			}
			line = append(line, plotter.XY{X: sr.X[k], Y: m})
			band = append(band, plotter.XY{X: sr.X[k], Y: hi})
			lower = append(lower, plotter.XY{X: sr.X[k], Y: lo})
		}
		if len(line) == 0 {
			continue
		}
		col := rgb(SeriesColour(i))
		slices.Reverse(lower)
		poly, err := plotter.NewPolygon(append(band, lower...))
		if err != nil {
			return err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		if SeriesDashed(i) {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(poly, l)
		label := sr.Label
		if sr.Select != "" {
			label += ", " + sr.Select
		}
		if sr.Seeds > 1 {
			label += fmt.Sprintf(" (%d seeds)", sr.Seeds)
		}
		thumbs := []plot.Thumbnailer{l}
		if sr.DivergedSeeds > 0 {
			end, err := plotter.NewScatter(line[len(line)-1:])
			if err != nil {
				return err
			}
			end.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
			p.Add(end)
			label += fmt.Sprintf(", diverged (%d of %d seeds) at ×", sr.DivergedSeeds, sr.Seeds)
			thumbs = append(thumbs, end)
		}
		legend.Add(label, thumbs...)
	}
	if !logY {
		bracket(&p.Y)
	}
	bracket(&p.X)
	r := legend.Rectangle(draw.Canvas{})
	return saveBeside(p, 6*vg.Inch, 4*vg.Inch, r.Max.X-r.Min.X+vg.Points(18), legend.Draw, path)
}

// spansDecades reports whether the figure's means are all positive and
// span more than two decades (a loss that falls from 2 to 0.01, a gap
// that blows up), where a log axis shows them.
func (f *Figure) spansDecades() bool {
	lo, hi := math.Inf(1), 0.0
	for _, sr := range f.Series {
		for _, m := range sr.Mean {
			if math.IsNaN(m) || math.IsInf(m, 0) {
				continue
			}
			if m <= 0 {
				return false
			}
			lo, hi = min(lo, m), max(hi, m)
		}
	}
	return hi > 0 && hi/lo > 100
}

// saveBeside draws a plot of width w and height h with, in a strip of
// width side to its right, what drawSide draws there (a legend, a colour
// bar), and writes it to path in the format its extension names (PNG at
// 300 dpi, SVG, PDF). The plot widens to hold its title whole.
func saveBeside(p *plot.Plot, w, h, side vg.Length, drawSide func(draw.Canvas), path string) error {
	title := p.Title.TextStyle.Rectangle(p.Title.Text)
	w = max(w, title.Max.X-title.Min.X+vg.Points(24))
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	var c vg.CanvasWriterTo
	if format == "png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w+side, h), vgimg.UseDPI(300))}
	} else {
		var err error
		if c, err = draw.NewFormattedCanvas(w+side, h, format); err != nil {
			return err
		}
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -side, 0, 0))
	drawSide(draw.Crop(dc, w+vg.Points(6), 0, vg.Points(30), -vg.Points(30)))
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
	p.X.Tick.Marker, p.Y.Tick.Marker = integerTicks{}, integerTicks{}
	colours := &countColours{max: float64(max(1, slices.Max(counts.Ints)))}
	p.Add(plotter.NewHeatMap(h, colours.Palette(255)))
	bar := plot.New()
	bar.Title.Text = "samples"
	bar.HideX()
	bar.Add(&plotter.ColorBar{ColorMap: colours, Vertical: true})
	width := vg.Length(max(4, float64(h.workers)*0.3)) * vg.Inch
	return saveBeside(p, width, vg.Length(max(3, float64(h.classes)*0.25))*vg.Inch, 1.3*vg.Inch, func(c draw.Canvas) { bar.Draw(c) }, path)
}

// countColours is the sequential colour map of a heat map of counts, from 0 to
// max: near white to dark blue, by the square root of the count (more
// contrast among small counts), as the dashboard draws it.
type countColours struct{ max float64 }

var _ palette.ColorMap = (*countColours)(nil)

func (c *countColours) At(v float64) (color.Color, error) {
	t := math.Sqrt(math.Max(0, math.Min(1, v/c.max)))
	lo, hi := [3]float64{247, 251, 255}, [3]float64{8, 48, 107}
	var out [3]uint8
	for i := range out {
		out[i] = uint8(math.Round(lo[i] + (hi[i]-lo[i])*t))
	}
	return color.NRGBA{R: out[0], G: out[1], B: out[2], A: 255}, nil
}
func (c *countColours) Max() float64     { return c.max }
func (c *countColours) Min() float64     { return 0 }
func (c *countColours) SetMax(v float64) { c.max = v }
func (c *countColours) SetMin(float64)   {}
func (c *countColours) Alpha() float64   { return 1 }
func (c *countColours) SetAlpha(float64) {}
func (c *countColours) Palette(n int) palette.Palette {
	colours := make([]color.Color, n)
	for i := range colours {
		colours[i], _ = c.At(c.max * float64(i) / float64(n-1))
	}
	return countsPalette(colours)
}

type countsPalette []color.Color

func (p countsPalette) Colors() []color.Color { return p }
