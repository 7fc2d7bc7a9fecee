package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ump-lab/ump/internal/rng"
)

// studentT95 is the two-sided 95% quantile of Student's t with df degrees
// of freedom.
func studentT95(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// meanInterval is the 95% interval of a mean over n samples of sample
// standard deviation std (Student's t); ok is false for fewer than 2.
func meanInterval(mean, std float64, n int) (lo, hi float64, ok bool) {
	if n < 2 {
		return 0, 0, false
	}
	half := studentT95(n-1) * std / math.Sqrt(float64(n))
	return mean - half, mean + half, true
}

// tMaxSeeds is the most seeds whose interval is Student's t; with more,
// the interval is a bootstrap's.
const tMaxSeeds = 5

// bootstrapResamples is how many resamples a bootstrap interval draws.
const bootstrapResamples = 10000

// interval is the 95% interval of the mean of f over seeds seeds:
// Student's t for at most tMaxSeeds, else the percentile bootstrap over
// f.Values; ok is false for fewer than 2 seeds.
func (f Stat) interval(seeds int) (lo, hi float64, ok bool) {
	if seeds <= tMaxSeeds {
		return meanInterval(f.Mean, f.Std, seeds)
	}
	lo, hi = bootstrapInterval(f.Values)
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
	case strings.HasSuffix(name, "_distance") || strings.HasSuffix(name, "_gap") || strings.HasSuffix(name, "_norm_sq") ||
		strings.HasPrefix(name, "bits_") || strings.HasPrefix(name, "compression_"):
		return 0, math.Inf(1), true
	}
	return 0, 0, false
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

// bootstrapInterval is the 95% percentile bootstrap interval of the mean
// of vals, its resamples drawn from a fixed stream (the same values give
// the same interval).
func bootstrapInterval(vals []float64) (lo, hi float64) {
	n := len(vals)
	r := rng.New(0, "bootstrap")
	means := make([]float64, bootstrapResamples)
	for b := range means {
		var sum float64
		for range n {
			sum += vals[r.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	slices.Sort(means)
	return quantile(means, 0.025), quantile(means, 0.975)
}

// quantile is the q-quantile of sorted values, linearly interpolated
// between order statistics.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// welchP is the two-sided p-value of Welch's t-test that a and b have the
// same mean (NaN with fewer than 2 values on a side, or no spread on
// either).
func welchP(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return math.NaN()
	}
	fa, fb := statOf(a), statOf(b)
	va, vb := fa.Std*fa.Std/float64(len(a)), fb.Std*fb.Std/float64(len(b))
	if va+vb == 0 {
		return math.NaN()
	}
	t := (fa.Mean - fb.Mean) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
}

// improvement is the probability that a value of a beats one of b, over
// all pairs (a tie counts half; better is "min" or "max").
func improvement(a, b []float64, better string) float64 {
	var wins float64
	for _, x := range a {
		for _, y := range b {
			switch {
			case x == y:
				wins += 0.5
			case (x > y) == (better != "min"):
				wins++
			}
		}
	}
	return wins / float64(len(a)*len(b))
}

// kendallTauB is Kendall's tau-b of the pairs (x[i], y[i]): NaN when
// fewer than two or every pair tied on one side.
func kendallTauB(x, y []float64) float64 {
	var concordant, discordant, tiedX, tiedY, pairs float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			pairs++
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tiedX++
				tiedY++
			case dx == 0:
				tiedX++
			case dy == 0:
				tiedY++
			case (dx > 0) == (dy > 0):
				concordant++
			default:
				discordant++
			}
		}
	}
	den := math.Sqrt((pairs - tiedX) * (pairs - tiedY))
	if den == 0 {
		return math.NaN()
	}
	return (concordant - discordant) / den
}
