package algorithms

import (
	"fmt"
	"math"
)

// Entry is one non-zero weight w_ij of a mixing matrix row i.
type Entry struct {
	J int
	W float64
}

// Mixing is a sparse mixing matrix: Rows[i] lists row i's non-zero
// entries with J ascending.
type Mixing struct{ Rows [][]Entry }

// NewMixing builds a Mixing from a dense matrix and checks that it is
// symmetric and doubly stochastic (to 1e-12).
func NewMixing(w [][]float64) (Mixing, error) {
	n := len(w)
	m := Mixing{Rows: make([][]Entry, n)}
	for i := range w {
		if len(w[i]) != n {
			return Mixing{}, fmt.Errorf("mixing matrix row %d has %d entries, want %d", i, len(w[i]), n)
		}
		sum := 0.0
		for j, v := range w[i] {
			if v < 0 || math.Abs(v-w[j][i]) > 1e-12 {
				return Mixing{}, fmt.Errorf("mixing matrix entry (%d,%d)=%g is negative or not symmetric", i, j, v)
			}
			if v != 0 {
				m.Rows[i] = append(m.Rows[i], Entry{J: j, W: v})
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			return Mixing{}, fmt.Errorf("mixing matrix row %d sums to %g, want 1", i, sum)
		}
	}
	return m, nil
}

// Apply sets dst_i = sum_j w_ij src_j, summing in float64 with j ascending.
// dst and src must not share vectors.
func (m Mixing) Apply(dst, src [][]float32) {
	Parallel(len(dst), func(i int) {
		row := m.Rows[i]
		d := dst[i]
		for k := range d {
			s := 0.0
			for _, e := range row {
				s += float64(e.W * float64(src[e.J][k]))
			}
			d[k] = float32(s)
		}
	})
}

// Comm is a round's communication. A nil Round.Comm is exact: gossip
// x_i = mix(X)_i and all-reduce x_i = mean_j x_j. Another Comm may
// approximate them (compression) but must keep the gossip's mean over
// workers and leave every worker equal after an average. Calls come from
// one goroutine.
type Comm interface {
	// Gossip replaces every worker's x_i by mix(X)_i under m, in round t.
	// kind names the vector ("x", "v", "y"); start is every worker's value
	// of it before round 0 (nil: zeros).
	Gossip(t int, kind string, start []float32, x [][]float32, m Mixing)
	// Average replaces every worker's x_i by mean_j x_j, in round t; from
	// holds the workers' common value at the round's start.
	Average(t int, kind string, x, from [][]float32)
}

// Mean sets dst to the exact mean over workers of x, summed in float64
// with j ascending.
func Mean(dst []float32, x [][]float32) {
	n := len(x)
	const chunk = 4096
	Parallel((len(dst)+chunk-1)/chunk, func(c int) {
		for k := c * chunk; k < min(len(dst), (c+1)*chunk); k++ {
			s := 0.0
			for j := 0; j < n; j++ {
				s += float64(x[j][k])
			}
			dst[k] = float32(s / float64(n))
		}
	})
}
