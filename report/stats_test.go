package report

import (
	"encoding/json"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestBootstrapIntervalAgainstTheExactDistribution: for 6 seeds the
// bootstrap distribution of the mean can be enumerated (6^6 resamples);
// the interval drawn from 10,000 resamples lies within Monte Carlo error
// of its exact 2.5% and 97.5% quantiles, and the same values give the
// same interval.
func TestBootstrapIntervalAgainstTheExactDistribution(t *testing.T) {
	vals := []float64{0.90, 0.93, 0.94, 0.95, 0.97, 0.99}
	var means []float64
	idx := make([]int, len(vals))
	for {
		var sum float64
		for _, i := range idx {
			sum += vals[i]
		}
		means = append(means, sum/6)
		k := 0
		for k < len(idx) && idx[k] == len(vals)-1 {
			idx[k] = 0
			k++
		}
		if k == len(idx) {
			break
		}
		idx[k]++
	}
	slices.Sort(means)
	exactLo, exactHi := means[int(0.025*float64(len(means)))], means[int(0.975*float64(len(means)))]
	lo, hi, ok := Stat{Mean: 0.9467, Std: 0.03, Values: vals}.interval(len(vals))
	if !ok || math.Abs(lo-exactLo) > 0.002 || math.Abs(hi-exactHi) > 0.002 {
		t.Errorf("bootstrap interval [%v, %v], the exact distribution's [%v, %v]", lo, hi, exactLo, exactHi)
	}
	if lo2, hi2, _ := (Stat{Values: slices.Clone(vals)}).interval(len(vals)); lo2 != lo || hi2 != hi {
		t.Errorf("the same values gave [%v, %v], then [%v, %v]", lo, hi, lo2, hi2)
	}
	// Up to 5 seeds the interval is Student's t of the mean and std.
	if lo, hi, _ := (Stat{Mean: 2, Std: 1, Values: []float64{1, 2, 3}}).interval(3); math.Abs(
		hi-lo-2*2.4841377118,
	) > 1e-9 {
		t.Errorf("3 seeds: [%v, %v], want Student's t", lo, hi)
	}
}

// TestWelchAgainstScipy checks Welch's p-value against
// scipy.stats.ttest_ind(equal_var=False) run by Debian's python3-scipy.
func TestWelchAgainstScipy(t *testing.T) {
	a, b := []float64{0.9858, 0.9851, 0.9865}, []float64{0.9697, 0.9651, 0.9743, 0.9702}
	if p := welchP([]float64{1}, b); !math.IsNaN(p) {
		t.Errorf("Welch's p with one value = %v, want NaN", p)
	}
	script := `import json, sys; from scipy import stats; a, b = json.load(sys.stdin); print(stats.ttest_ind(a, b, ` +
		`equal_var=False).pvalue)`
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	in, _ := json.Marshal([][]float64{a, b})
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("Debian's python3-scipy is not installed (.ci/run installs it): %v", err)
	}
	var want float64
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &want); err != nil {
		t.Fatalf("scipy printed %q", out)
	}
	if got := welchP(a, b); math.Abs(got-want) > 1e-9*math.Max(1, want) {
		t.Errorf("Welch's p = %v, scipy's %v", got, want)
	}
}

// TestIntervalsStayInTheFiguresRange: an interval of an accuracy is cut to
// [0, 1] (or [0, 100] in percent), one of a distance or gap at 0, and one
// of a figure of no known range (a quadratic's loss) is left as it is;
// the legend says so.
func TestIntervalsStayInTheFiguresRange(t *testing.T) {
	for _, c := range []struct {
		name           string
		scale, lo, hi  float64
		wantLo, wantHi float64
	}{
		{"test_acc_mean", 1, 0.5094, 1.2273, 0.5094, 1},
		{"consensus_acc", 100, -3, 99, 0, 99},
		{"val_acc_mean", 1, 0.2, 0.3, 0.2, 0.3},
		{"objective_gap", 1, -0.5, 2, 0, 2},
		{"consensus_distance", 1, -1e-3, 1e-2, 0, 1e-2},
		{"train_loss", 1, -0.5, 2, -0.5, 2},
	} {
		if lo, hi := within(c.name, c.scale, c.lo, c.hi); lo != c.wantLo || hi != c.wantHi {
			t.Errorf(
				"%s at scale %g: [%g, %g] -> [%g, %g], want [%g, %g]",
				c.name,
				c.scale,
				c.lo,
				c.hi,
				lo,
				hi,
				c.wantLo,
				c.wantHi,
			)
		}
	}
	g := &Grid{Spec: manifests.Table{Value: "test_acc_mean", Best: "max", Digits: 4}, Intervals: true}
	if l := g.Legend(); !strings.Contains(l, "cut to [0, 1], test_acc_mean's range") {
		t.Errorf("the legend of an accuracy's intervals does not say they are cut: %s", l)
	}
	if e := (Stat{Mean: 0.9, Std: 0.2}); !strings.Contains(g.stat(e, 3, "±"), "[0.4032, 1.0000]") {
		t.Errorf("an accuracy 0.9 ± 0.2 over 3 seeds prints %s, want [0.4032, 1.0000]", g.stat(e, 3, "±"))
	}
}
