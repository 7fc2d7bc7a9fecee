package pipeline

import (
	"math"
	"slices"
	"testing"
)

// TestShortenLabels drops the parameters at their declared defaults and
// those every row shares, keeping what tells the rows apart.
func TestShortenLabels(t *testing.T) {
	got := shorten([]string{"d-sum(alpha=2,beta=0.9)", "d-sum(alpha=0,beta=0.9)", "gt-dsum(alpha=2,beta=0.9,lambda=0.8,momentum_restart=step,tracker_init=paper)", "dpsgd()", "ring"})
	want := []string{"d-sum", "d-sum (alpha=0)", "gt-dsum (momentum_restart=step)", "dpsgd", "ring"}
	if !slices.Equal(got, want) {
		t.Errorf("shorten: %q, want %q", got, want)
	}
	if got := shorten([]string{"qg-dsgdm(beta=0.5,mu=0.8)", "qg-dsgdm(beta=0.5,mu=0.9)"}); !slices.Equal(got, []string{"qg-dsgdm (mu=0.8)", "qg-dsgdm (mu=0.9)"}) {
		t.Errorf("shorten drops only what all rows share: %q", got)
	}
}

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
		f := Figure{Series: []Series{{Mean: tc.means}}}
		if got := f.spansDecades(); got != tc.log {
			t.Errorf("%v: log axis %v, want %v", tc.means, got, tc.log)
		}
	}
}
