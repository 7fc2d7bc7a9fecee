package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/internal/durable"
)

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

// logTicks are gonum's log-axis ticks labelled in their shortest decimal
// form: gonum computes a power of ten as 10^x, inexactly, and printed
// 0.09999999999999998 for 0.1.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = shortest(t.Value)
		}
	}
	return ticks
}

// shortest is v to 12 significant digits, in its shortest form.
func shortest(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
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

// Figure draws a figure to path, its format from the extension (.png at
// 300 dpi, .svg or .pdf): per series the mean over seeds with a shaded
// band of ± one standard deviation, a cross where a diverged curve stops,
// the legend under the axes (not over the curves), grid lines, and a
// logarithmic y axis when the values span more than two decades; curves
// with diverged seeds are clipped to the healthy curves' range
// (clipDiverged), and on a log axis exact zeros sit at its floor.
func Figure(f *figure.Figure, path string) error {
	if len(f.Categories) > 0 {
		return sweepFigure(f, path)
	}
	clipped := clipDiverged(f)
	logY := spansDecades(clipped)
	p, legend, err := curvesPlot(clipped, f, logY, logFloor(clipped))
	if err != nil {
		return err
	}
	p.Title.Text = f.Title
	if !logY {
		bracket(&p.Y)
	}
	bracket(&p.X)
	return saveWithLegend(p, 6*vg.Inch, 4*vg.Inch, legend, path)
}

// curvesPlot is the axes of a figure of curves (f as clipped; given, as
// it came) and its legend: Figure's, without the title and the axes'
// final ranges.
func curvesPlot(f, given *figure.Figure, logY bool, floor float64) (*plot.Plot, []legendEntry, error) {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = f.X, f.Y
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = denseTicks{}, denseTicks{}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	var legend []legendEntry
	for i, sr := range f.Series {
		line, band, lower := seriesPoints(sr, logY, floor)
		if len(line) == 0 {
			continue
		}
		col := rgb(figure.Colour(i))
		slices.Reverse(lower)
		poly, err := plotter.NewPolygon(append(band, lower...))
		if err != nil {
			return nil, nil, err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, nil, err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		if figure.Dashed(i) {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(poly, l)
		entry := legendEntry{label: seriesLabel(sr, given.Series[i], logY), thumbs: []plot.Thumbnailer{l}}
		if sr.DivergedSeeds > 0 {
			end, err := plotter.NewScatter(line[len(line)-1:])
			if err != nil {
				return nil, nil, err
			}
			end.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
			p.Add(end)
			entry.diverged = fmt.Sprintf(", diverged (%d of %d seeds) at ×", sr.DivergedSeeds, sr.Seeds)
			entry.thumbs = append(entry.thumbs, end)
		}
		legend = append(legend, entry)
	}
	return p, legend, nil
}

// Panels draws the figures of a table's columns (the same series, one
// figure a column) as panels side by side under title, with one y
// range (and one scale: logarithmic where any panel's means span more
// than two decades), so that the columns compare at a glance; each panel
// is titled with its column, and one legend under them names the series
// (a diverged curve ends in a cross in its panel).
func Panels(title string, figs []figure.Figure, path string) error {
	if len(figs) == 0 {
		return fmt.Errorf("%s: no figures to draw", path)
	}
	row, legend, err := panelPlots(figs)
	if err != nil {
		return err
	}
	const panel = 3.6 * vg.Inch
	style := draw.TextStyle{
		Color:   color.Black,
		Font:    plot.DefaultFont,
		Handler: plot.DefaultTextHandler,
		XAlign:  draw.XCenter,
	}
	style.Font.Size = vg.Points(13)
	title = fitTitle(style, title, panel*vg.Length(len(figs)))
	head := style.Rectangle(title)
	w := max(panel*vg.Length(len(figs)), head.Max.X-head.Min.X+vg.Points(24))
	top := head.Max.Y - head.Min.Y + vg.Points(10)
	return saveWithLegendDrawn(w, 4*vg.Inch+top, legend, path, func(dc draw.Canvas) {
		dc.FillText(style, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - top + vg.Points(4)}, title)
		tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(10)}
		canvases := plot.Align(
			[][]*plot.Plot{row},
			tiles,
			draw.Crop(dc, 0, -vg.Points(12), 0, -top),
		) // the last tick's label whole
		for j, p := range row {
			p.Draw(canvases[0][j])
		}
	})
}

// sharedLegend adds a panel's legend entries to legend, the legend of
// every panel: a series once, by its label, its cross kept where it
// diverges in some panel (how many seeds diverged is each panel's own).
func sharedLegend(legend, entries []legendEntry) []legendEntry {
	for _, e := range entries {
		k := slices.IndexFunc(legend, func(x legendEntry) bool { return x.label == e.label })
		if k < 0 {
			legend = append(legend, legendEntry{label: e.label, thumbs: e.thumbs[:1]})
			k = len(legend) - 1
		}
		if e.diverged != "" {
			legend[k].diverged, legend[k].thumbs = ", × where it diverged", e.thumbs
		}
	}
	return legend
}

// panelPlots are Panels' axes, one y range on all, and their legend.
func panelPlots(figs []figure.Figure) ([]*plot.Plot, []legendEntry, error) {
	clipped := make([]*figure.Figure, len(figs))
	logY, floor := false, math.Inf(1)
	for i := range figs {
		clipped[i] = clipDiverged(&figs[i])
		logY = logY || spansDecades(clipped[i])
		floor = min(floor, logFloor(clipped[i]))
	}
	if floor <= 0 || math.IsInf(floor, 0) {
		logY = false
	}
	row := make([]*plot.Plot, len(figs))
	lo, hi := math.Inf(1), math.Inf(-1)
	var legend []legendEntry
	for i := range figs {
		p, entries, err := curvesPlot(clipped[i], &figs[i], logY, floor)
		if err != nil {
			return nil, nil, err
		}
		p.Title.Text = figs[i].Name
		row[i] = p
		lo, hi = min(lo, p.Y.Min), max(hi, p.Y.Max)
		legend = sharedLegend(legend, entries)
	}
	for _, p := range row {
		p.Y.Min, p.Y.Max = lo, hi
		if !logY {
			bracket(&p.Y)
		}
		bracket(&p.X)
	}
	return row, legend, nil
}

// seriesPoints are a series' mean line and the upper and lower edges of
// its ±std band, without a diverged seed's last rows; on a log axis
// (logY), zeros sit at the axis's floor and the band stays above it.
func seriesPoints(sr figure.Series, logY bool, floor float64) (line, band, lower plotter.XYs) {
	for k := range sr.X {
		m, lo, hi := sr.Mean[k], sr.Mean[k]-sr.Std[k], sr.Mean[k]+sr.Std[k]
		if math.IsNaN(m) || math.IsInf(m, 0) || logY && m < 0 {
			continue // a diverged seed's last rows
		}
		if logY && m == 0 {
			m, hi = floor, max(hi, floor) // an exact zero, at the axis's floor
		}
		if logY && lo <= 0 {
			lo = max(m/10, floor)
		}
		line = append(line, plotter.XY{X: sr.X[k], Y: m})
		band = append(band, plotter.XY{X: sr.X[k], Y: hi})
		lower = append(lower, plotter.XY{X: sr.X[k], Y: lo})
	}
	return line, band, lower
}

// seriesLabel is a series' legend entry: its label, choice and seeds, and
// what the figure did to it (sr as drawn, given as it came).
func seriesLabel(sr, given figure.Series, logY bool) string {
	label := sr.Label
	if sr.Select != "" {
		label += ", " + sr.Select
	}
	if sr.Seeds > 1 {
		label += fmt.Sprintf(" (%d seeds)", sr.Seeds)
	}
	if !slices.Equal(sr.Mean, given.Mean) {
		label += ", clipped at " + strconv.FormatFloat(slices.Max(sr.Mean), 'g', 3, 64)
	}
	if logY && slices.Contains(sr.Mean, 0) {
		label += ", zeros at the axis floor"
	}
	return label
}

// sweepFigure draws a figure of entries against a swept parameter
// (report.Grid.SweepFigure): per series a line through the means with a
// marker at each, ± one standard deviation as error bars, the x axis the
// categories evenly spaced, the legend under the axes.
func sweepFigure(f *figure.Figure, path string) error {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text, p.Y.Label.Text = f.X, f.Y
	p.Add(plotter.NewGrid())
	var ticks []plot.Tick
	for i, c := range f.Categories {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: c})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), denseTicks{}
	p.X.Min, p.X.Max = -0.3, float64(len(f.Categories)-1)+0.3
	var legend []legendEntry
	shapes := []draw.GlyphDrawer{
		draw.CircleGlyph{},
		draw.SquareGlyph{},
		draw.TriangleGlyph{},
		draw.PyramidGlyph{},
		draw.RingGlyph{},
		draw.BoxGlyph{},
	}
	for i, sr := range f.Series {
		var pts errorPoints
		for k := range sr.X {
			if m := sr.Mean[k]; !math.IsNaN(m) && !math.IsInf(m, 0) {
				pts = append(pts, errorPoint{x: sr.X[k], y: m, err: sr.Std[k]})
			}
		}
		if len(pts) == 0 { // named, without a mark: its legend says why
			legend = append(legend, legendEntry{label: sr.Label})
			continue
		}
		col := rgb(figure.Colour(i))
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		if figure.Dashed(i) {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: shapes[i%len(shapes)]}
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		bars.Color, bars.Width, bars.CapWidth = col, vg.Points(1), vg.Points(6)
		p.Add(bars, l, s)
		label := sr.Label
		if sr.Select != "" {
			label += ", " + sr.Select
		}
		if sr.Seeds > 1 {
			label += fmt.Sprintf(" (%d seeds, ± 1 std)", sr.Seeds)
		}
		legend = append(legend, legendEntry{label: label, thumbs: []plot.Thumbnailer{l, s}})
	}
	bracket(&p.Y)
	return saveWithLegend(p, 6*vg.Inch, 4*vg.Inch, legend, path)
}

// errorPoint is a mean and its error bar's half-height; errorPoints are
// what plotter's lines, scatters and error bars read.
type errorPoint struct{ x, y, err float64 }
type errorPoints []errorPoint

func (e errorPoints) Len() int                    { return len(e) }
func (e errorPoints) XY(i int) (float64, float64) { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) {
	return e[i].err, e[i].err
}

// spansDecades reports whether the figure's means are all positive and
// span more than two decades (a loss that falls from 2 to 0.01, a gap
// that blows up), where a log axis shows them.
func spansDecades(f *figure.Figure) bool {
	lo, hi := math.Inf(1), 0.0
	for _, sr := range f.Series {
		for _, m := range sr.Mean {
			switch {
			case math.IsNaN(m) || math.IsInf(m, 0) || m == 0: // exact zeros sit at the floor
			case m < 0:
				return false
			default:
				lo, hi = min(lo, m), max(hi, m)
			}
		}
	}
	return hi > 0 && hi/lo > 100
}

// logFloor is where a log axis puts exact zeros: a decade below the
// smallest positive mean.
func logFloor(f *figure.Figure) float64 {
	lo := math.Inf(1)
	for _, sr := range f.Series {
		for _, m := range sr.Mean {
			if m > 0 && !math.IsInf(m, 0) {
				lo = min(lo, m)
			}
		}
	}
	return lo / 10
}

// divergedCap is how far above the healthy curves' largest value a curve
// with diverged seeds is drawn before it is clipped.
const divergedCap = 10

// clipDiverged returns f with the means (and bands) of its series that
// have diverged seeds clipped to divergedCap times the largest finite
// magnitude of the healthy series, so that one blown-up curve (a loss or
// consensus distance of 1e15) does not flatten the rest; the cross at its
// end marks it. f is returned as it is when no series is healthy.
func clipDiverged(f *figure.Figure) *figure.Figure {
	healthy := 0.0
	for _, sr := range f.Series {
		if sr.DivergedSeeds > 0 {
			continue
		}
		for k, m := range sr.Mean {
			if !math.IsNaN(m) && !math.IsInf(m, 0) {
				healthy = max(healthy, math.Abs(m)+math.Abs(sr.Std[k]))
			}
		}
	}
	if healthy == 0 {
		return f
	}
	limit := divergedCap * healthy
	out := *f
	out.Series = slices.Clone(f.Series)
	for i, sr := range out.Series {
		if sr.DivergedSeeds == 0 {
			continue
		}
		sr.Mean, sr.Std = slices.Clone(sr.Mean), slices.Clone(sr.Std)
		for k, m := range sr.Mean {
			if math.Abs(m) > limit || math.IsInf(m, 0) {
				sr.Mean[k], sr.Std[k] = math.Copysign(limit, m), 0
			}
		}
		out.Series[i] = sr
	}
	return &out
}

// saveBeside draws a plot of width w and height h with, in a strip of
// width side to its right, what drawSide draws there (a colour bar), and
// writes it to path (save).
func saveBeside(p *plot.Plot, w, h, side vg.Length, drawSide func(draw.Canvas), path string) error {
	w = widenForTitle(p, w)
	return save(w+side, h, path, func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, 0, -side, 0, 0))
		drawSide(
			draw.Crop(dc, w+vg.Points(6), -vg.Points(12), vg.Points(30), -vg.Points(30)),
		) // a margin to the right edge
	})
}

// legendEntry is a legend's line: its label, what its curve did where
// it diverged (", diverged (k of n seeds) at ×"), and the marks that show
// it.
type legendEntry struct {
	label, diverged string
	thumbs          []plot.Thumbnailer
}

// saveWithLegend draws a plot of width w with axes of height h and its
// legend in a strip under them: the entries in as many columns as fit
// the width, filled down then across, and writes it to path (save). A
// label wider than the plot widens the figure.
func saveWithLegend(p *plot.Plot, w, h vg.Length, entries []legendEntry, path string) error {
	w = widenForTitle(p, w)
	margin := vg.Points(12)
	return saveWithLegendDrawn(w, h, entries, path, func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, 0, -margin, 0, 0)) // the last tick's label whole
	})
}

// saveWithLegendDrawn draws, with drawAxes, axes of width w and height h,
// and the legend in a strip under them: the entries in as many columns as
// fit the width, filled down then across, and writes the figure to path
// (save). A label wider than the axes widens the figure.
func saveWithLegendDrawn(w, h vg.Length, entries []legendEntry, path string, drawAxes func(draw.Canvas)) error {
	margin, gap := vg.Points(12), vg.Points(18)
	var columns []plot.Legend
	var width vg.Length
	for n := len(entries); n >= 1; n-- {
		columns = legendColumns(entries, n)
		width = gap * vg.Length(len(columns)-1)
		for i := range columns {
			r := columns[i].Rectangle(draw.Canvas{})
			width += r.Max.X - r.Min.X
		}
		if width <= w-2*margin {
			break
		}
	}
	w = max(w, width+2*margin)
	var strip vg.Length
	for i := range columns {
		r := columns[i].Rectangle(draw.Canvas{})
		strip = max(strip, r.Max.Y-r.Min.Y)
	}
	if strip > 0 {
		strip += vg.Points(6)
	}
	return save(w, h+strip, path, func(dc draw.Canvas) {
		drawAxes(draw.Crop(dc, 0, 0, strip, 0))
		x := margin
		for i := range columns {
			r := columns[i].Rectangle(draw.Canvas{})
			columns[i].Draw(draw.Crop(dc, x, 0, 0, -h))
			x += r.Max.X - r.Min.X + gap
		}
	})
}

// legendColumns lays entries out in n columns (fewer when the last would
// be empty), filled down then across.
func legendColumns(entries []legendEntry, n int) []plot.Legend {
	rows := (len(entries) + n - 1) / max(n, 1)
	var out []plot.Legend
	for start := 0; start < len(entries); start += rows {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		for _, e := range entries[start:min(start+rows, len(entries))] {
			l.Add(e.label+e.diverged, e.thumbs...)
		}
		out = append(out, l)
	}
	return out
}

// widenForTitle returns w, or more where the plot's title needs it whole;
// a title wider than w first breaks at its first ": " (fitTitle).
func widenForTitle(p *plot.Plot, w vg.Length) vg.Length {
	p.Title.Text = fitTitle(p.Title.TextStyle, p.Title.Text, w)
	title := p.Title.TextStyle.Rectangle(p.Title.Text)
	return max(w, title.Max.X-title.Min.X+vg.Points(24))
}

// fitTitle is title on one line where it fits width w, else broken after
// its first ": " (a manifest's name, then what its figure shows).
func fitTitle(style draw.TextStyle, title string, w vg.Length) string {
	if r := style.Rectangle(title); r.Max.X-r.Min.X+vg.Points(24) <= w {
		return title
	}
	if name, about, ok := strings.Cut(title, ": "); ok {
		return name + "\n" + about
	}
	return title
}

// save draws a figure of width w and height h with drawAll and writes it
// to path in the format its extension names (PNG at 300 dpi, SVG, PDF).
func save(w, h vg.Length, path string, drawAll func(draw.Canvas)) error {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	var c vg.CanvasWriterTo
	if format == "png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	} else {
		var err error
		if c, err = draw.NewFormattedCanvas(w, h, format); err != nil {
			return err
		}
	}
	drawAll(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	data := b.Bytes()
	switch format {
	case "png":
		data = withDPI(data, pngDPI)
	case "svg": // gonum's SVG canvas embeds images as PNG but declares them JPEG
		data = bytes.ReplaceAll(data, []byte("data:image/jpg;base64,"), []byte("data:image/png;base64,"))
	}
	return durable.WriteOut(path, data)
}

// pngDPI is the resolution PNG figures are drawn at, and say they are.
const pngDPI = 300

// A PDF records when it was made: left to the clock, the same figure
// drawn again is other bytes, and regenerating a results directory
// rewrites every PDF in it. Every PDF says pdfDate instead, and lists its
// resources in order, so that a figure is its bytes, as PNG and SVG are.
func init() {
	fpdf.SetDefaultCreationDate(pdfDate)
	fpdf.SetDefaultModificationDate(pdfDate)
	fpdf.SetDefaultCatalogSort(true)
}

// pdfDate is the date every PDF figure gives (the Unix epoch, UTC).
var pdfDate = time.Unix(0, 0).UTC()

// withDPI inserts into an encoded PNG, after its header chunk, a pHYs
// chunk giving its resolution (Go's encoder writes none, so that viewers
// and LaTeX would take 72 dpi and size a 300 dpi figure four times too
// large).
func withDPI(png []byte, dpi float64) []byte {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, then IHDR: length, type, data, CRC
	perMetre := uint32(math.Round(dpi / 0.0254))
	chunk := binary.BigEndian.AppendUint32(nil, 9)
	chunk = append(chunk, "pHYs"...)
	chunk = binary.BigEndian.AppendUint32(chunk, perMetre)
	chunk = binary.BigEndian.AppendUint32(chunk, perMetre)
	chunk = append(chunk, 1) // the unit: the metre
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return slices.Concat(png[:ihdrEnd], chunk, png[ihdrEnd:])
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

// Histogram draws a partition's class histogram (the partition
// stage's "histogram" table) as a heat map: workers across, classes up.
func Histogram(t *artifacts.Table, title, path string) error {
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
	return saveBeside(
		p,
		width,
		vg.Length(max(3, float64(h.classes)*0.25))*vg.Inch,
		1.3*vg.Inch,
		func(c draw.Canvas) { bar.Draw(c) },
		path,
	)
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
