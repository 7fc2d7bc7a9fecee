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
	parallel(len(dst), func(i int) {
		row := m.Rows[i]
		d := dst[i]
		for k := range d {
			s := 0.0
			for _, e := range row {
				s += e.W * float64(src[e.J][k])
			}
			d[k] = float32(s)
		}
	})
}

// gossiped holds per-worker vectors that are mixed every round, plus a
// spare set to mix into.
type gossiped struct{ cur, spare [][]float32 }

func newGossiped(n int, x0 []float32) gossiped {
	return gossiped{cur: vectors(n, len(x0), x0), spare: vectors(n, len(x0), nil)}
}

// mix replaces the vectors with their mixture.
func (g *gossiped) mix(m Mixing) {
	m.Apply(g.spare, g.cur)
	g.cur, g.spare = g.spare, g.cur
}

// average replaces every worker's vector with the exact mean over workers
// (an all-reduce), summed in float64 with j ascending.
func (g *gossiped) average() {
	n, dim := len(g.cur), len(g.cur[0])
	const chunk = 4096
	mean := g.spare[0]
	parallel((dim+chunk-1)/chunk, func(c int) {
		for k := c * chunk; k < min(dim, (c+1)*chunk); k++ {
			s := 0.0
			for j := 0; j < n; j++ {
				s += float64(g.cur[j][k])
			}
			mean[k] = float32(s / float64(n))
		}
	})
	parallel(n, func(i int) { copy(g.cur[i], mean) })
}
