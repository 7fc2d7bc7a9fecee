package graphs

import (
	"fmt"
	"slices"
	"testing"
)

// stepOf returns the graph of round r (1-based) of a schedule.
func stepOf(t *testing.T, steps []Step, r int) Graph {
	t.Helper()
	k := -1
	for i, st := range steps {
		if st.From <= r {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("no step covers round %d", r)
	}
	return steps[k].Graph
}

// TestOnePeerExponentialPairsByRound pins the pairing of each round: in
// round r every worker i is paired with i XOR 2^((r-1) mod log2 n) alone,
// so round 1 pairs 0 with 1, round 2 with 2, round 3 with 4, round 4 with 1.
func TestOnePeerExponentialPairsByRound(t *testing.T) {
	const n, rounds = 8, 7
	steps, err := Schedule("one-peer-exponential", nil, n, rounds, 1)
	if err != nil {
		t.Fatal(err)
	}
	partnerOf0 := []int{1, 2, 4, 1, 2, 4, 1} // rounds 1..7, by hand
	for r := 1; r <= rounds; r++ {
		g, d := stepOf(t, steps, r), partnerOf0[r-1]
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if want := j == i^d; g[i][j] != want {
					t.Fatalf(
						"round %d: edge %d-%d is %v, want %v (each worker paired with i XOR %d)",
						r,
						i,
						j,
						g[i][j],
						want,
						d,
					)
				}
			}
		}
	}
}

// TestTimeVaryingRingRelabelsEveryRound checks that every round is a ring
// of its own: a relabelling drawn per round from the seed, the same for the
// same seed.
func TestTimeVaryingRingRelabelsEveryRound(t *testing.T) {
	const n, rounds = 10, 8
	steps, err := Schedule("time-varying-ring", nil, n, rounds, 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for r := 1; r <= rounds; r++ {
		g := stepOf(t, steps, r)
		if !g.Connected() || slices.ContainsFunc(g.Degrees(), func(d int) bool { return d != 2 }) {
			t.Fatalf("round %d is not a ring: degrees %v", r, g.Degrees())
		}
		key := fmt.Sprint(g)
		if first, ok := seen[key]; ok {
			t.Errorf("rounds %d and %d have the same ring; each round draws its own relabelling", first, r)
		}
		seen[key] = r
	}
	again, _ := Schedule("time-varying-ring", nil, n, rounds, 5)
	other, _ := Schedule("time-varying-ring", nil, n, rounds, 6)
	if fmt.Sprint(again) != fmt.Sprint(steps) {
		t.Error("the same seed gave another schedule")
	}
	if fmt.Sprint(other) == fmt.Sprint(steps) {
		t.Error("another seed gave the same schedule")
	}
}

// TestMeshToRingPhases pins the schedule on 10 workers over 10 rounds:
// circulant graphs of degree 9 (the full mesh), 8, 6, 4 and 2 (the ring),
// two rounds each.
func TestMeshToRingPhases(t *testing.T) {
	steps, err := Schedule("mesh-to-ring", nil, 10, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{9, 9, 8, 8, 6, 6, 4, 4, 2, 2} // each round's degree, by hand
	for r := 1; r <= 10; r++ {
		degrees := stepOf(t, steps, r).Degrees()
		for i, d := range degrees {
			if d != want[r-1] {
				t.Fatalf("round %d: worker %d has degree %d, want %d", r, i, d, want[r-1])
			}
		}
	}
}
