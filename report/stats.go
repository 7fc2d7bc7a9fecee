package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/ump-lab/ump/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// tMaxSeeds is the most seeds whose interval is Student's t; with more,
// the interval is a bootstrap's.
const tMaxSeeds = 5

// interval is the 95% interval of the mean of f over seeds seeds:
// Student's t for at most tMaxSeeds, else the percentile bootstrap over
// f.Values; ok is false for fewer than 2 seeds.
func (f Stat) interval(seeds int) (lo, hi float64, ok bool) {
	if seeds <= tMaxSeeds {
		return stats.MeanInterval(f.Mean, f.Std, seeds)
	}
	lo, hi = stats.Bootstrap95(f.Values)
	return lo, hi, true
}

// figureRange is the range a figure's values lie in, so its intervals can
// too: accuracies are fractions of samples, [0, 1]; distances, gaps,
// squared norms and bit counts are at least 0. ok is false for a figure of
// no known range (a quadratic's loss may be negative).
func figureRange(name string) (lo, hi float64, ok bool) {
	switch {
	case strings.Contains(name, "_acc") || strings.HasSuffix(name, "acc"):
		return 0, 1, true
	case strings.HasSuffix(name, "_distance") || strings.HasSuffix(name, "_gap") || strings.HasSuffix(name,
		"_norm_sq") ||
		strings.HasPrefix(name, "bits_") || strings.HasPrefix(name, "compression_"):
		return 0, math.Inf(1), true
	}
	return 0, 0, false
}

// IntervalOf is f's interval over seeds clipped to the range of value
// name's figures at scale (within).
func (f Stat) IntervalOf(seeds int, name string, scale float64) (lo, hi float64, ok bool) {
	lo, hi, ok = f.interval(seeds)
	lo, hi = within(name, scale, lo, hi)
	return lo, hi, ok
}

// within is the interval [lo, hi] of a mean of figure name (at scale:
// 100 for percent) cut to the figure's range (figureRange).
func within(name string, scale, lo, hi float64) (float64, float64) {
	if min, max, ok := figureRange(name); ok {
		lo, hi = math.Max(lo, min*scale), math.Min(hi, max*scale)
	}
	return lo, hi
}

// rangeNote says that intervals of figure name are cut to its range, as
// printed (at scale), or "" for a figure of no known range.
func rangeNote(name string, scale float64) string {
	lo, hi, ok := figureRange(name)
	switch {
	case !ok:
		return ""
	case math.IsInf(hi, 1):
		return fmt.Sprintf(", cut at %g, %s's least value", lo*scale, name)
	}
	return fmt.Sprintf(", cut to [%g, %g], %s's range", lo*scale, hi*scale, name)
}

// welchP is the two-sided p-value of Welch's t-test that a and b have the
// same mean (NaN with fewer than 2 values on a side, or no spread on
// either).
func welchP(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return math.NaN()
	}
	fa, fb := StatOf(a), StatOf(b)
	va, vb := fa.Std*fa.Std/float64(len(a)), fb.Std*fb.Std/float64(len(b))
	if va+vb == 0 {
		return math.NaN()
	}
	t := (fa.Mean - fb.Mean) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
}
