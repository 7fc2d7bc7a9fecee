package stats

import (
	"math"
	"testing"
)

// TestIntervalAndRankAgreementByHand checks the statistics against values
// worked out by hand (and by scipy.stats: t.ppf(0.975, 2), kendalltau).
func TestIntervalAndRankAgreementByHand(t *testing.T) {
	if q := StudentT95(2); math.Abs(q-4.302652729911275) > 1e-9 {
		t.Errorf("t(0.975, 2 df) = %v, want 4.302652729911275", q)
	}
	if q := StudentT95(4); math.Abs(q-2.7764451051977987) > 1e-9 {
		t.Errorf("t(0.975, 4 df) = %v, want 2.7764451051977987", q)
	}
	// Seeds 1, 2, 3: mean 2, sample std 1, half-width 4.3027 / sqrt(3).
	lo, hi, ok := MeanInterval(2, 1, 3)
	if !ok || math.Abs(lo-(2-2.4841377118)) > 1e-9 || math.Abs(hi-(2+2.4841377118)) > 1e-9 {
		t.Errorf("interval of 1, 2, 3 = [%v, %v] (%v), want 2 ∓ 2.4841377118", lo, hi, ok)
	}
	if _, _, ok := MeanInterval(5, 0, 1); ok {
		t.Error("one seed has an interval")
	}
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 4.0 / 6},             // 5 concordant, 1 discordant
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, -1},                        // reversed
		{[]float64{1, 1, 2}, []float64{1, 2, 3}, 2 / math.Sqrt(2*3)},        // one tie in x: tau-b
		{[]float64{1, 2, 3, 4}, []float64{2, 2, 1, 1}, -4 / math.Sqrt(6*4)}, // ties in y
	} {
		if got := KendallTauB(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("tau-b(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	if got := KendallTauB([]float64{1}, []float64{2}); !math.IsNaN(got) {
		t.Errorf("tau-b of one pair = %v, want NaN", got)
	}
}

// TestImprovementByHand checks the probability of improvement against a
// count by hand.
func TestImprovementByHand(t *testing.T) {
	if got := Improvement([]float64{1, 2, 3}, []float64{2, 2.5}, "max"); math.Abs(got-2.5/6) > 1e-12 {
		// pairs won: (3,2), (3,2.5); tied: (2,2): 2.5 of 6
		t.Errorf("P(improvement) = %v, want 2.5/6", got)
	}
	if got := Improvement([]float64{1, 2, 3}, []float64{2, 2.5}, "min"); math.Abs(got-3.5/6) > 1e-12 {
		t.Errorf("P(improvement), lower better = %v, want 3.5/6", got)
	}
}
