package split

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
)

// labels returns n labels of 10 classes in random order.
func labels(n int) []int32 {
	r := rng.New(1, "test-labels")
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.IntN(10))
	}
	return out
}

// checkExact fails unless every sample is on exactly one worker.
func checkExact(t *testing.T, parts [][]int, total int) {
	t.Helper()
	seen := make([]int, total)
	for _, p := range parts {
		if !slices.IsSorted(p) {
			t.Fatal("a worker's samples are not ascending")
		}
		for _, s := range p {
			seen[s]++
		}
	}
	for s, k := range seen {
		if k != 1 {
			t.Fatalf("sample %d is on %d workers", s, k)
		}
	}
}

// classesHeld is the mean number of classes a worker holds.
func classesHeld(parts [][]int, lab []int32) float64 {
	sum := 0
	for _, p := range parts {
		seen := map[int32]bool{}
		for _, s := range p {
			seen[lab[s]] = true
		}
		sum += len(seen)
	}
	return float64(sum) / float64(len(parts))
}

func TestEveryKindAssignsEachSampleOnce(t *testing.T) {
	lab := labels(6000)
	for _, p := range []struct {
		kind string
		v    kinds.Values
	}{
		{"iid", nil},
		{"dirichlet", kinds.Values{"alpha": 0.1, "min_size": 10}},
		{"dirichlet", kinds.Values{"alpha": 100.0, "min_size": 10}},
		{"shards", kinds.Values{"shards": 2}},
	} {
		parts, _, err := Assign(p.kind, p.v, lab, 10, 10, 1)
		if err != nil {
			t.Fatalf("%s: %v", p.kind, err)
		}
		checkExact(t, parts, len(lab))
		again, _, _ := Assign(p.kind, p.v, lab, 10, 10, 1)
		other, _, _ := Assign(p.kind, p.v, lab, 10, 10, 2)
		if !slices.EqualFunc(parts, again, slices.Equal) {
			t.Errorf("%s: the same seed gave another partition", p.kind)
		}
		if slices.EqualFunc(parts, other, slices.Equal) {
			t.Errorf("%s: seeds 1 and 2 gave the same partition", p.kind)
		}
	}
}

func TestDirichletSkewAndMinSize(t *testing.T) {
	lab := labels(6000)
	skewed, draws, err := Assign("dirichlet", kinds.Values{"alpha": 0.1, "min_size": 50}, lab, 10, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range skewed {
		if len(p) < 50 {
			t.Errorf("worker %d holds %d samples, below min_size 50 (after %d draws)", i, len(p), draws)
		}
	}
	even, _, _ := Assign("dirichlet", kinds.Values{"alpha": 100.0, "min_size": 10}, lab, 10, 10, 1)
	if s, e := classesHeld(skewed, lab), classesHeld(even, lab); !(s < 6 && e == 10) {
		t.Errorf("mean classes per worker: %.1f at alpha 0.1, %.1f at alpha 100; want few vs all 10", s, e)
	}
	_, _, err = Assign("dirichlet", kinds.Values{"alpha": 0.01, "min_size": 50}, lab, 10, 100, 1)
	if err == nil ||
		!strings.Contains(err.Error(), "raise partition.alpha, lower partition.min_size or use fewer workers") {
		t.Errorf("impossible draw: got %v", err)
	}
	_, _, err = Assign("dirichlet", kinds.Values{"alpha": 1.0, "min_size": 10}, lab, 10, 1000, 1)
	if err == nil || !strings.Contains(err.Error(), "6000 samples cannot give 1000 workers at least 10 each") {
		t.Errorf("too few samples: got %v", err)
	}
}

func TestShardsDealLabelSortedShards(t *testing.T) {
	lab := labels(6000)
	parts, _, err := Assign("shards", kinds.Values{"shards": 2}, lab, 10, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		if len(p) != 600 {
			t.Errorf("worker %d holds %d samples, want 2 shards of 300", i, len(p))
		}
	}
	if c := classesHeld(parts, lab); c > 4 {
		t.Errorf("workers hold %.1f classes on average; two label-sorted shards give at most 4", c)
	}
}

// BenchmarkDirichlet60kOver1000 partitions an MNIST-sized label set over
// 1,000 workers (the target is under a second).
func BenchmarkDirichlet60kOver1000(b *testing.B) {
	lab := labels(60000)
	p := kinds.Values{"alpha": 0.5, "min_size": 10}
	for b.Loop() {
		if _, _, err := Assign("dirichlet", p, lab, 10, 1000, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDirichletMinSizeIsAFloor: with min_size one more than the smallest
// share of the draw that min_size 1 accepts, that draw is refused and
// every worker of the one taken holds at least min_size.
func TestDirichletMinSizeIsAFloor(t *testing.T) {
	lab := labels(2000)
	for seed := range uint64(5) {
		first, draws, err := Assign("dirichlet", kinds.Values{"alpha": 0.5, "min_size": 1}, lab, 10, 8, seed)
		if err != nil || draws != 1 {
			t.Fatalf("seed %d: min_size 1 took %d draws (%v); want the first", seed, draws, err)
		}
		floor := slices.MinFunc(first, func(a, b []int) int { return len(a) - len(b) })
		minSize := len(floor) + 1
		parts, draws, err := Assign("dirichlet", kinds.Values{"alpha": 0.5, "min_size": minSize}, lab, 10, 8, seed)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range parts {
			if len(p) < minSize {
				t.Errorf(
					"seed %d: worker %d holds %d samples after %d draws, below min_size %d",
					seed,
					i,
					len(p),
					draws,
					minSize,
				)
			}
		}
	}
}

// TestDirichletGoldenPartition pins a Dirichlet partition (24 samples of
// 3 classes, 3 workers, alpha 1, seed 7): which samples each worker holds
// depends on the seed through the proportions drawn and through the
// order of each class's samples. A change here changes every user's
// partitions, and so needs a new version of the partition stage. (Pinned
// again for its version 3: normal variates by rng.Normal, fmath's exp
// and log.)
func TestDirichletGoldenPartition(t *testing.T) {
	lab := make([]int32, 24)
	for i := range lab {
		lab[i] = int32(i % 3)
	}
	parts, draws, err := Assign("dirichlet", kinds.Values{"alpha": 1.0, "min_size": 2}, lab, 3, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 4, 6, 7, 12, 16, 19}, {3, 8, 9, 22}, {0, 2, 5, 10, 11, 13, 14, 15, 17, 18, 20, 21, 23}}
	if draws != 1 || fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Errorf("partition %v after %d draws; pinned %v after 1", parts, draws, want)
	}
}
