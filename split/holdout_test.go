package split

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestHoldOutTakesExactlyTheFractionOfEachWorker: each worker holds out
// round(F × n) of its samples, every class within one sample of F × n_c,
// validation and training disjoint and together the worker's partition,
// the same draw for the same seed and another for another seed.
func TestHoldOutTakesExactlyTheFractionOfEachWorker(t *testing.T) {
	labels := make([]int32, 1000)
	for i := range labels {
		labels[i] = int32((i * 7) % 10 % (1 + i%4)) // uneven classes
	}
	parts, _, err := Assign("dirichlet", map[string]any{"alpha": 0.5}, labels, 10, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{0.1, 0.25, 0.5} {
		train, val, err := HoldOut(parts, labels, 10, f, 3)
		if err != nil {
			t.Fatal(err)
		}
		for w, p := range parts {
			if want := int(math.Round(f * float64(len(p)))); len(val[w]) != want {
				t.Errorf("F=%v worker %d: %d held out of %d, want %d", f, w, len(val[w]), len(p), want)
			}
			both := slices.Concat(train[w], val[w])
			slices.Sort(both)
			sorted := slices.Sorted(slices.Values(p))
			if !slices.Equal(both, sorted) {
				t.Errorf("F=%v worker %d: training and validation are not a split of its partition", f, w)
			}
			for c := int32(0); c < 10; c++ {
				nc, vc := 0, 0
				for _, s := range p {
					if labels[s] == c {
						nc++
					}
				}
				for _, s := range val[w] {
					if labels[s] == c {
						vc++
					}
				}
				if math.Abs(float64(vc)-f*float64(nc)) >= 1 {
					t.Errorf(
						"F=%v worker %d class %d: %d held out of %d, not within one of %v",
						f,
						w,
						c,
						vc,
						nc,
						f*float64(nc),
					)
				}
			}
		}
		_, again, _ := HoldOut(parts, labels, 10, f, 3)
		_, other, _ := HoldOut(parts, labels, 10, f, 4)
		if !slices.EqualFunc(val, again, slices.Equal[[]int]) || slices.EqualFunc(val, other, slices.Equal[[]int]) {
			t.Errorf("F=%v: the draw is not the seed's (the same seed must repeat it, another must not)", f)
		}
	}
	if _, _, err := HoldOut([][]int{{0, 1, 2}, {3}}, labels, 10, 0.5, 1); err == nil ||
		!strings.Contains(err.Error(), "worker 1 would hold out all its 1 samples") {
		t.Errorf("a worker of one sample at F=0.5 (round(0.5) = 1 held out): %v; want an error naming it", err)
	}
}
