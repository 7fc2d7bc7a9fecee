package render

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/figure"
)

// TestLogAxisWhenDecades: a log y axis for positive values spanning more
// than two decades, exact zeros beside them or not, never for negative
// values.
func TestLogAxisWhenDecades(t *testing.T) {
	for _, tc := range []struct {
		means []float64
		log   bool
	}{
		{[]float64{2, 0.5, 0.01}, true},
		{[]float64{0.97, 0.1}, false},
		{[]float64{1e6, 1, 0}, true}, // exact zeros sit at the floor
		{[]float64{1e6, 1, -1}, false},
		{[]float64{3, 1e9, math.NaN()}, true},
	} {
		f := figure.Figure{Series: []figure.Series{{Mean: tc.means}}}
		if got := spansDecades(&f); got != tc.log {
			t.Errorf("%v: log axis %v, want %v", tc.means, got, tc.log)
		}
	}
}

func TestTickLabels(t *testing.T) {
	for _, c := range []struct {
		v, step float64
		want    string
	}{
		{0, 0.1, "0"}, {-0.0, 0.1, "0"}, {-1e-17, 0.1, "0"}, {0.30000000000000004, 0.1, "0.3"}, {-0.2, 0.1, "-0.2"},
		{1e7, 5e6, "10M"}, {2.5e7, 5e6, "25M"}, {1.5e6, 5e5, "1.5M"}, {5e5, 5e5, "500k"}, {3e9, 1e9, "3G"}, {5000,
			1000, "5000"}, {120, 20, "120"},
	} {
		if got := tickLabel(c.v, c.step); got != c.want {
			t.Errorf("tickLabel(%g, %g) = %q; want %q", c.v, c.step, got, c.want)
		}
	}
}

func TestTicksBracketTheData(t *testing.T) {
	for _, c := range []struct{ lo, hi, wantMin, wantMax float64 }{
		{0.1, 0.97, 0, 1}, {-0.013, 0.42, -0.1, 0.5}, {1, 120, 0, 120}, {0, 3.2e7, 0, 3.5e7},
	} {
		a := plot.Axis{Min: c.lo, Max: c.hi}
		bracket(&a)
		if math.Abs(a.Min-c.wantMin) > 1e-12 || math.Abs(a.Max-c.wantMax) > 1e-9 {
			t.Errorf("bracket [%g, %g] = [%g, %g]; want [%g, %g]", c.lo, c.hi, a.Min, a.Max, c.wantMin, c.wantMax)
		}
		ticks := denseTicks{}.Ticks(a.Min, a.Max)
		var top float64
		for _, tk := range ticks {
			if tk.Label != "" {
				top = tk.Value
			}
		}
		if top < c.hi {
			t.Errorf("[%g, %g]: the highest labelled tick is %g, below the data", c.lo, c.hi, top)
		}
	}
}

// TestPNGSaysItsResolution: a PNG figure is drawn at 300 dpi and says so
// in a pHYs chunk (11,811 pixels per metre both ways), read here from the
// file's chunks; the file still decodes (its CRCs hold), and it is 6
// inches wide (1,800 pixels), its axes 4 high and its legend under them.
// TestPanelsShareOneYRange: panels of a ring's accuracies (0.1 to 0.8)
// and a full mesh's (0 to 1) get one y range that holds both, and are
// drawn as one figure.
func TestPanelsShareOneYRange(t *testing.T) {
	series := func(lo, hi float64) []figure.Series {
		return []figure.Series{
			{
				Label: "a",
				X:     []float64{1, 2, 3},
				Mean:  []float64{lo, (lo + hi) / 2, hi},
				Std:   []float64{0, 0, 0},
				Seeds: 1,
			},
		}
	}
	figs := []figure.Figure{
		{Name: "ring", X: "round", Y: "acc", Series: series(0.1, 0.8)},
		{Name: "full", X: "round", Y: "acc", Series: series(0, 1)},
	}
	figs[1].Series[0].DivergedSeeds = 1 // in one panel: the shared legend keeps its cross
	row, legend, err := panelPlots(figs)
	if err != nil {
		t.Fatal(err)
	}
	if len(row) != 2 || row[0].Y.Min != row[1].Y.Min || row[0].Y.Max != row[1].Y.Max || row[0].Y.Min > 0 ||
		row[0].Y.Max < 1 {
		t.Errorf(
			"panels' y ranges [%g, %g] and [%g, %g], want one that holds 0 to 1",
			row[0].Y.Min,
			row[0].Y.Max,
			row[1].Y.Min,
			row[1].Y.Max,
		)
	}
	if len(legend) != 1 || legend[0].label != "a" || legend[0].diverged != ", × where it diverged" ||
		len(legend[0].thumbs) != 2 {
		t.Errorf("the shared legend: %v", legend)
	}
	path := filepath.Join(t.TempDir(), "panels.svg")
	if err := Panels("two topologies", figs, path); err != nil {
		t.Fatal(err)
	}
	if svg, _ := os.ReadFile(path); !strings.Contains(string(svg), ">two topologies<") ||
		!strings.Contains(string(svg), ">ring<") {
		t.Errorf("the panels' figure lacks its title or a panel's")
	}
}

func TestPNGSaysItsResolution(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.png")
	f := figure.Figure{
		Title: "t",
		X:     "round",
		Y:     "y",
		Series: []figure.Series{
			{Label: "a", X: []float64{1, 2, 3}, Mean: []float64{1, 2, 1.5}, Std: []float64{0, 0, 0}, Seeds: 1},
		},
	}
	if err := Figure(&f, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := 8; i+8 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[i:]))
		if string(data[i+4:i+8]) == "pHYs" {
			body := data[i+8 : i+8+n]
			found = n == 9 && binary.BigEndian.Uint32(body) == 11811 && binary.BigEndian.Uint32(body[4:]) == 11811 &&
				body[8] == 1
		}
		i += 12 + n
	}
	if !found {
		t.Error("no pHYs chunk of 11811 pixels per metre")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 6*300 || b.Dy() <= 4*300 || b.Dy() > 4*300+100 {
		t.Errorf("the PNG is %d x %d pixels; want 1800 wide and a line of legend above 1200 high", b.Dx(), b.Dy())
	}
}

// TestPDFIsItsFigure: the same figure drawn twice, a second apart, is
// the same PDF, which gives the fixed date.
func TestPDFIsItsFigure(t *testing.T) {
	f := figure.Figure{Title: "t", X: "round", Y: "y", Series: []figure.Series{
		{Label: "a", X: []float64{1, 2, 3}, Mean: []float64{1, 2, 1.5}, Std: []float64{0, 0, 0}, Seeds: 1},
		{Label: "b", X: []float64{1, 2, 3}, Mean: []float64{2, 1, 1}, Std: []float64{0.1, 0.1, 0}, Seeds: 2}}}
	var drawn [][]byte
	for i := range 2 {
		if i > 0 {
			time.Sleep(time.Second) // the dates are in seconds
		}
		path := filepath.Join(t.TempDir(), "f.pdf")
		if err := Figure(&f, path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		drawn = append(drawn, data)
	}
	if !bytes.Equal(drawn[0], drawn[1]) {
		t.Error("the same figure drawn twice gave two PDFs")
	}
	if !bytes.Contains(drawn[0], []byte("/CreationDate (D:19700101000000)")) ||
		!bytes.Contains(drawn[0], []byte("/ModDate (D:19700101000000)")) {
		t.Error("the PDF does not give the fixed date")
	}
}

// TestLegendUnderTheAxes: the legend takes a strip under the axes, its
// entries side by side where they fit (five short labels: one line), one
// under another where they do not (five long labels: five lines), and a
// label wider than the axes widens the figure rather than being cut.
func TestLegendUnderTheAxes(t *testing.T) {
	bounds := func(labels ...string) (w, h int) {
		f := figure.Figure{Title: "t", X: "round", Y: "y"}
		for _, l := range labels {
			f.Series = append(
				f.Series,
				figure.Series{Label: l, X: []float64{1, 2}, Mean: []float64{1, 2}, Std: []float64{0, 0}, Seeds: 1},
			)
		}
		path := filepath.Join(t.TempDir(), "f.png")
		if err := Figure(&f, path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy()
	}
	const axes, line = 4 * 300, 40 // a legend line: 12-point text at 300 dpi, less its padding
	if w, h := bounds("a", "b", "c", "d", "e"); w != 6*300 || h <= axes || h > axes+2*line {
		t.Errorf("five short labels: %d x %d pixels; want 1800 wide and one line of legend under 1200", w, h)
	}
	long := strings.Repeat("x", 45)
	if w, h := bounds(long+"a", long+"b", long+"c", long+"d", long+"e"); w != 6*300 || h < axes+5*line {
		t.Errorf("five long labels: %d x %d pixels; want 1800 wide and five lines of legend", w, h)
	}
	if w, _ := bounds(strings.Repeat("x", 200)); w <= 6*300 {
		t.Errorf("a label wider than the axes: the figure is %d pixels wide; want it widened to hold the label", w)
	}
}

// TestDivergedCurvesAreClipped: a curve with diverged seeds is clipped to
// ten times the healthy curves' largest value (mean plus std), the healthy
// ones are left as they are, the figure given is not changed, and with no
// healthy curve nothing is clipped.
func TestDivergedCurvesAreClipped(t *testing.T) {
	f := &figure.Figure{Series: []figure.Series{
		{Mean: []float64{0, 1e-3, 1.5}, Std: []float64{0, 0, 0.5}},
		{Mean: []float64{1, 1e15, math.Inf(1)}, Std: []float64{0, 1e14, 0}, DivergedSeeds: 1},
	}}
	got := clipDiverged(f)
	if want := []float64{1, 20, 20}; !slices.Equal(got.Series[1].Mean, want) {
		t.Errorf("the diverged curve is %v, want %v (10 x (1.5 + 0.5))", got.Series[1].Mean, want)
	}
	if !slices.Equal(got.Series[0].Mean, f.Series[0].Mean) || f.Series[1].Mean[1] != 1e15 {
		t.Errorf(
			"healthy curve %v, the given figure's diverged curve %v: changed",
			got.Series[0].Mean,
			f.Series[1].Mean,
		)
	}
	if !spansDecades(got) {
		t.Error("zeros, 1e-3 and a curve clipped at 20 span four decades: want a log axis")
	}
	all := &figure.Figure{Series: []figure.Series{f.Series[1]}}
	if clipDiverged(all) != all {
		t.Error("a figure of diverged curves only was clipped")
	}
}

// TestHeatMapFiles: the partition heat map's SVG declares its embedded
// image as the PNG it is (gonum writes image/jpg), and in the PNG the
// colour bar keeps a margin to the right edge (its last 24 pixel columns
// are background).
func TestHeatMapFiles(t *testing.T) {
	var w, c, n []int64
	for worker := range 4 {
		for class := range 3 {
			w, c, n = append(w, int64(worker)), append(c, int64(class)), append(n, int64(worker*class+1))
		}
	}
	tab := &artifacts.Table{
		Columns: []artifacts.Column{{Name: "worker", Ints: w}, {Name: "class", Ints: c}, {Name: "count", Ints: n}},
	}
	dir := t.TempDir()
	if err := Histogram(tab, "partition", filepath.Join(dir, "p.svg")); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "p.svg"))
	if !bytes.Contains(svg, []byte("data:image/png;base64,")) || bytes.Contains(svg, []byte("image/jpg")) {
		t.Error("the SVG does not declare its embedded image as PNG")
	}
	if err := Histogram(tab, "partition", filepath.Join(dir, "p.png")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "p.png"))
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for x := b.Max.X - 24; x < b.Max.X; x++ {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			if r, g, bl, a := img.At(x, y).RGBA(); a != 0 && (r < 0xf000 || g < 0xf000 || bl < 0xf000) {
				t.Fatalf("pixel (%d, %d) of a %d-wide heat map is drawn: the colour bar touches the edge", x, y, b.Dx())
			}
		}
	}
}

// TestLogTicksReadAsNumbers: log-axis tick labels are the powers of ten in
// their shortest form (gonum's own printed 0.09999999999999998 for 0.1 and
// 9.999999999999997e-06 for 1e-05).
func TestLogTicksReadAsNumbers(t *testing.T) {
	labels := map[string]bool{}
	for _, tick := range (logTicks{}).Ticks(1e-6, 10) {
		if tick.Label != "" {
			labels[tick.Label] = true
		}
	}
	for _, want := range []string{"1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10"} {
		if !labels[want] {
			t.Errorf("no tick labelled %s among %v", want, labels)
		}
	}
	for l := range labels {
		if len(l) > 6 {
			t.Errorf("a tick label %q is not a power of ten's shortest form", l)
		}
	}
}

// TestAWideTitleBreaksAfterTheName: a title that fits stays on one line;
// one wider than the figure breaks after its first ": ", the manifest's
// name on a line of its own.
func TestAWideTitleBreaksAfterTheName(t *testing.T) {
	style := draw.TextStyle{Font: plot.DefaultFont, Handler: plot.DefaultTextHandler}
	style.Font.Size = vg.Points(12)
	short := "q: quadratic, 10 workers"
	if got := fitTitle(style, short, 6*vg.Inch); got != short {
		t.Errorf("a short title: %q", got)
	}
	long := "a-long-manifest-name: mnist, lenet, 10 workers, K = 10, non-IID α = 0.1, lr = 0.0316"
	want := "a-long-manifest-name\nmnist, lenet, 10 workers, K = 10, non-IID α = 0.1, lr = 0.0316"
	if got := fitTitle(style, long, 3*vg.Inch); got != want {
		t.Errorf("a long title: %q", got)
	}
}

// TestPanelsShareOneLogScale: where one panel's means span more than two
// decades, every panel is drawn on a log y axis, so that the columns
// still compare at a glance (issue 102, item 11).
func TestPanelsShareOneLogScale(t *testing.T) {
	curve := func(means ...float64) []figure.Series {
		return []figure.Series{{Label: "a", X: []float64{1, 2, 3}, Mean: means, Std: []float64{0, 0, 0}, Seeds: 1}}
	}
	figs := []figure.Figure{
		{Name: "decades", X: "round", Y: "gap", Series: curve(1, 1e-2, 1e-4)},
		{Name: "narrow", X: "round", Y: "gap", Series: curve(0.5, 0.3, 0.1)},
	}
	row, _, err := panelPlots(figs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range row {
		if _, ok := p.Y.Scale.(plot.LogScale); !ok {
			t.Errorf("panel %s: y scale %T, want the log scale every panel shares", figs[i].Name, p.Y.Scale)
		}
	}
	row, _, err = panelPlots(figs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := row[0].Y.Scale.(plot.LogScale); ok {
		t.Errorf("a panel within two decades alone is drawn on a log axis")
	}
}
