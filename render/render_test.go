package render

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/report"
	"gonum.org/v1/plot"
)

// TestLogAxisWhenDecades: a log y axis for positive values spanning more
// than two decades, never for values at or below zero.
func TestLogAxisWhenDecades(t *testing.T) {
	for _, tc := range []struct {
		means []float64
		log   bool
	}{
		{[]float64{2, 0.5, 0.01}, true},
		{[]float64{0.97, 0.1}, false},
		{[]float64{1e6, 1, 0}, false},
		{[]float64{3, 1e9, math.NaN()}, true},
	} {
		f := report.Figure{Series: []report.Series{{Mean: tc.means}}}
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
		{1e7, 5e6, "10M"}, {2.5e7, 5e6, "25M"}, {1.5e6, 5e5, "1.5M"}, {5e5, 5e5, "500k"}, {3e9, 1e9, "3G"}, {5000, 1000, "5000"}, {120, 20, "120"},
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
