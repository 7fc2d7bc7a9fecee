package topology

import (
	"math"
	"testing"
)

func TestMetropolisHastings(t *testing.T) {
	cases := []struct {
		kind      string
		n         int
		self, off float64 // w_ii and each neighbour's weight
		neighbors int
		gap       float64
	}{
		// Ring: degree 2, weights 1/3; eigenvalues 1/3 + 2/3 cos(2 pi k / n).
		{"ring", 10, 1.0 / 3, 1.0 / 3, 2, 1 - (1.0/3 + 2.0/3*math.Cos(2*math.Pi/10))},
		{"ring", 2, 0.5, 0.5, 1, 1},
		// Full: degree n-1, weights 1/n: W = J/n, gap 1.
		{"full", 5, 0.2, 0.2, 4, 1},
		{"ring", 1, 1, 0, 0, 1},
	}
	for _, c := range cases {
		adj, err := Graph(c.kind, c.n)
		if err != nil {
			t.Fatal(err)
		}
		w := MetropolisHastings(adj)
		for i := 0; i < c.n; i++ {
			nb := 0
			for j := 0; j < c.n; j++ {
				switch {
				case i == j:
					if math.Abs(w[i][j]-c.self) > 1e-15 {
						t.Errorf("%s n=%d: w[%d][%d] = %v, want %v", c.kind, c.n, i, j, w[i][j], c.self)
					}
				case w[i][j] != 0:
					nb++
					if math.Abs(w[i][j]-c.off) > 1e-15 || w[i][j] != w[j][i] {
						t.Errorf("%s n=%d: w[%d][%d] = %v, want %v (symmetric)", c.kind, c.n, i, j, w[i][j], c.off)
					}
				}
			}
			if nb != c.neighbors {
				t.Errorf("%s n=%d: worker %d has %d neighbours, want %d", c.kind, c.n, i, nb, c.neighbors)
			}
		}
		if gap := SpectralGap(w); math.Abs(gap-c.gap) > 1e-12 {
			t.Errorf("%s n=%d: spectral gap %v, want %v", c.kind, c.n, gap, c.gap)
		}
		back, err := FromTable(ToTable(w), c.n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			for j := range w[i] {
				if back[i][j] != w[i][j] {
					t.Fatalf("%s n=%d: table round trip changed w[%d][%d]", c.kind, c.n, i, j)
				}
			}
		}
	}
	if _, err := Graph("star", 4); err == nil {
		t.Error("unknown kind accepted")
	}
}
