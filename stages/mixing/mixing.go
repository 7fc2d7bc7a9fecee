package mixing

import (
	"fmt"
	"sort"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
)

// Table accumulates a mixing table: Add each matrix, then Arrow.
type Table struct {
	round, i, j []int64
	weight, gap []float64
}

// Add appends the nonzero weights of matrix w, which applies from round
// (1-based), with its spectral gap.
func (t *Table) Add(round int, w [][]float64, gap float64) {
	for i := range w {
		for j, v := range w[i] {
			if v != 0 {
				t.round, t.i, t.j = append(t.round, int64(round)), append(t.i, int64(i)), append(t.j, int64(j))
				t.weight, t.gap = append(t.weight, v), append(t.gap, gap)
			}
		}
	}
}

// Arrow is the table as the topology stage stores it.
func (t *Table) Arrow() *artifacts.Table {
	return &artifacts.Table{Columns: []artifacts.Column{
		{Name: "round", Ints: t.round}, {Name: "i", Ints: t.i}, {Name: "j", Ints: t.j},
		{Name: "weight", Floats: t.weight}, {Name: "spectral_gap", Floats: t.gap}}}
}

// Mixings is a schedule of mixing matrices: ws[k] applies from round
// from[k] (1-based) until from[k+1].
type Mixings struct {
	from []int
	ws   []algorithms.Mixing
}

// At returns the matrix of round r (1-based).
func (m *Mixings) At(r int) algorithms.Mixing {
	k := sort.Search(len(m.from), func(k int) bool { return m.from[k] > r }) - 1
	return m.ws[k]
}

// Read reads a mixing table back, checking every matrix.
func Read(t *artifacts.Table, n int) (*Mixings, error) {
	from, ws, err := matrices(t, n)
	if err != nil {
		return nil, err
	}
	return &Mixings{from: from, ws: ws}, nil
}

func matrices(t *artifacts.Table, n int) (from []int, ws []algorithms.Mixing, err error) {
	for _, c := range []string{"round", "i", "j", "weight"} {
		if t.Column(c) == nil {
			return nil, nil, fmt.Errorf("mixing table lacks column %q", c)
		}
	}
	rounds, is, js, vals := t.Column("round").Ints, t.Column("i").Ints, t.Column("j").Ints, t.Column("weight").Floats
	var dense [][]float64
	flush := func() error {
		if dense == nil {
			return nil
		}
		m, err := algorithms.NewMixing(dense)
		if err != nil {
			return fmt.Errorf("mixing table, matrix from round %d: %w", from[len(from)-1], err)
		}
		ws = append(ws, m)
		return nil
	}
	for r := range rounds {
		if len(from) == 0 || int(rounds[r]) != from[len(from)-1] {
			if err := flush(); err != nil {
				return nil, nil, err
			}
			if len(from) > 0 && int(rounds[r]) < from[len(from)-1] {
				return nil, nil, fmt.Errorf(
					"mixing table row %d: round %d after round %d",
					r,
					rounds[r],
					from[len(from)-1],
				)
			}
			from = append(from, int(rounds[r]))
			dense = make([][]float64, n)
			for i := range dense {
				dense[i] = make([]float64, n)
			}
		}
		if is[r] < 0 || is[r] >= int64(n) || js[r] < 0 || js[r] >= int64(n) {
			return nil, nil, fmt.Errorf("mixing table row %d: index (%d,%d) outside %d workers", r, is[r], js[r], n)
		}
		dense[is[r]][js[r]] = vals[r]
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	if len(from) == 0 || from[0] != 1 {
		return nil, nil, fmt.Errorf("mixing table has no matrix from round 1")
	}
	return from, ws, nil
}
