package stats

import (
	"math"
	"slices"

	"github.com/ump-lab/ump/internal/rng"
	"gonum.org/v1/gonum/stat/distuv"
)

// BootstrapResamples is how many resamples a bootstrap interval draws.
const BootstrapResamples = 10000

// StudentT95 is the two-sided 95% quantile of Student's t with df degrees
// of freedom.
func StudentT95(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// MeanInterval is the 95% interval of a mean over n samples of sample
// standard deviation std (Student's t); ok is false for fewer than 2.
func MeanInterval(mean, std float64, n int) (lo, hi float64, ok bool) {
	if n < 2 {
		return 0, 0, false
	}
	half := StudentT95(n-1) * std / math.Sqrt(float64(n))
	return mean - half, mean + half, true
}

// Bootstrap95 is the 95% percentile bootstrap interval of the mean
// of vals, its resamples drawn from a fixed stream (the same values give
// the same interval).
func Bootstrap95(vals []float64) (lo, hi float64) {
	n := len(vals)
	r := rng.New(0, "bootstrap")
	means := make([]float64, BootstrapResamples)
	for b := range means {
		var sum float64
		for range n {
			sum += vals[r.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	slices.Sort(means)
	return Quantile(means, 0.025), Quantile(means, 0.975)
}

// Quantile is the q-quantile of sorted values, linearly interpolated
// between order statistics.
func Quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// Improvement is the probability that a value of a beats one of b, over
// all pairs (a tie counts half; better is "min" or "max").
func Improvement(a, b []float64, better string) float64 {
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

// KendallTauB is Kendall's tau-b of the pairs (x[i], y[i]): NaN when
// fewer than two or every pair tied on one side.
func KendallTauB(x, y []float64) float64 {
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
