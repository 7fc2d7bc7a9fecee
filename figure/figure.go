package figure

// Series is one curve: the mean of y over seeds at each x, and its
// standard deviation.
type Series struct {
	Label         string
	Select        string // the tuned value, e.g. "lr=0.1" (the table's select path), or ""
	X, Mean, Std  []float64
	Seeds         int
	DivergedSeeds int
	Running       int  // seeds still training, or stopped before the end (report.CurveOptions.Live)
	Untuned       bool // no choice of the select path has finished yet: Select is the one furthest along
}

// Figure is one plot: a curve per table row, for one table column.
type Figure struct {
	Name   string // the table column's header, as `ump table` prints it
	Title  string
	X, Y   string // axis titles
	Series []Series
	// Categories, where set, name the x positions 0, 1, ...: a figure of
	// entries against a swept parameter (report.Grid.SweepFigure), drawn with
	// markers and error bars instead of bands.
	Categories []string
}

// Palette is the colours of a figure's curves, in order (Tableau 10, as
// matplotlib's): `ump plot` and the dashboard draw the i-th series of a
// figure in Colour(i).
var Palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

// Colour is the colour of a figure's i-th curve; past the palette
// the colours repeat, dashed (Dashed).
func Colour(i int) string { return Palette[i%len(Palette)] }

// Dashed reports whether a figure's i-th curve is dashed.
func Dashed(i int) bool { return i >= len(Palette) }
