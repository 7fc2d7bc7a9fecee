package compress

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ump-lab/ump/kinds"
)

// TestTopKSelectsExactly compares topk with a full sort, with ties.
func TestTopKSelectsExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		d := 1 + r.IntN(300)
		vec := make([]float32, d)
		for k := range vec {
			vec[k] = float32(r.IntN(21) - 10) // many ties, zeros, both signs
		}
		ratio := r.Float64()
		want := make([]int, d)
		for k := range want {
			want[k] = k
		}
		slices.SortStableFunc(want, func(a, b int) int {
			ma, mb := math.Abs(float64(vec[a])), math.Abs(float64(vec[b]))
			switch {
			case ma > mb:
				return -1
			case ma < mb:
				return 1
			}
			return 0
		})
		want = want[:keep(ratio, d)]
		slices.Sort(want)
		if got := largest(vec, keep(ratio, d)); !slices.Equal(got, want) {
			t.Fatalf("trial %d d=%d k=%d: indices %v, want %v", trial, d, keep(ratio, d), got, want)
		}
		c := mustCodec(t, Spec{Codec: "topk", Params: kinds.Values{"ratio": ratio}})
		out := make([]float32, d)
		c.Decode(c.Encode(vec, Draw{}), Draw{}, out)
		for k := range out {
			if in := slices.Contains(want, k); (in && out[k] != vec[k]) || (!in && out[k] != 0) {
				t.Fatalf("trial %d: decoded entry %d = %g", trial, k, out[k])
			}
		}
	}
}
