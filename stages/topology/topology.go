// Package topology is the stage that builds the cell's communication graph
// and its mixing matrix W (Metropolis-Hastings weights), records W as an
// Arrow table (from_round, i, j, weight; non-zeros only, i then j
// ascending) and reports the spectral gap 1 - max(|lambda_2|, |lambda_n|).
// Static topologies have one matrix, from round 0.
package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"gonum.org/v1/gonum/mat"
)

// Stage builds the mixing matrices.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "topology" }
func (Stage) Version() int { return 1 }

func (Stage) Params(cfg *manifests.Manifest) any {
	return struct {
		Topology manifests.Topology `json:"topology"`
		Workers  int                `json:"workers"`
	}{cfg.Topology, cfg.Workers}
}

// Summary is the stage's JSON summary.
type Summary struct {
	SpectralGap float64 `json:"spectral_gap"`
	Edges       int     `json:"edges"`
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := &env.Cell.Config
	adj, err := Graph(cfg.Topology.Kind, cfg.Workers)
	if err != nil {
		return nil, err
	}
	w := MetropolisHastings(adj)
	ref, err := stages.PutTable(ctx, env.Store, ToTable(w))
	if err != nil {
		return nil, err
	}
	edges := 0
	for i := range adj {
		for j := i + 1; j < len(adj); j++ {
			if adj[i][j] {
				edges++
			}
		}
	}
	summary, _ := json.Marshal(Summary{SpectralGap: SpectralGap(w), Edges: edges})
	return &stages.Result{Outputs: map[string]artifacts.Ref{"mixing": ref}, Summary: summary}, nil
}

// Graph returns the adjacency matrix (no self loops) of a static topology.
func Graph(kind string, n int) ([][]bool, error) {
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	link := func(i, j int) {
		if i != j {
			adj[i][j], adj[j][i] = true, true
		}
	}
	switch kind {
	case "ring":
		for i := 0; i < n; i++ {
			link(i, (i+1)%n)
		}
	case "full":
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				link(i, j)
			}
		}
	default:
		return nil, fmt.Errorf("unknown topology kind %q (use ring or full)", kind)
	}
	return adj, nil
}

// MetropolisHastings returns w_ij = min(1/(deg i + 1), 1/(deg j + 1)) for
// each edge and w_ii = 1 - sum_{j != i} w_ij (paper, Section 6).
func MetropolisHastings(adj [][]bool) [][]float64 {
	n := len(adj)
	deg := make([]int, n)
	for i := range adj {
		for _, e := range adj[i] {
			if e {
				deg[i]++
			}
		}
	}
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		off := 0.0
		for j := 0; j < n; j++ {
			if adj[i][j] {
				w[i][j] = math.Min(1/float64(deg[i]+1), 1/float64(deg[j]+1))
				off += w[i][j]
			}
		}
		w[i][i] = 1 - off
	}
	return w
}

// SpectralGap returns 1 - max(|lambda_2|, |lambda_n|) of a symmetric W.
func SpectralGap(w [][]float64) float64 {
	n := len(w)
	if n == 1 {
		return 1
	}
	sym := mat.NewSymDense(n, nil)
	for i := range w {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, w[i][j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return math.NaN()
	}
	vals := eig.Values(nil)
	sort.Float64s(vals) // ascending: vals[n-1] is 1
	return 1 - math.Max(math.Abs(vals[n-2]), math.Abs(vals[0]))
}

// ToTable records a static W as non-zeros from round 0.
func ToTable(w [][]float64) *artifacts.Table {
	from, is, js, ws := []int64{}, []int64{}, []int64{}, []float64{}
	for i := range w {
		for j, v := range w[i] {
			if v != 0 {
				from, is, js, ws = append(from, 0), append(is, int64(i)), append(js, int64(j)), append(ws, v)
			}
		}
	}
	return &artifacts.Table{Columns: []artifacts.Column{
		{Name: "from_round", Ints: from}, {Name: "i", Ints: is}, {Name: "j", Ints: js}, {Name: "weight", Floats: ws}}}
}

// FromTable reads the matrix in force from round 0 back from a table.
func FromTable(t *artifacts.Table, n int) ([][]float64, error) {
	cols := []string{"from_round", "i", "j", "weight"}
	for _, c := range cols {
		if t.Column(c) == nil {
			return nil, fmt.Errorf("mixing table lacks column %q", c)
		}
	}
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	from, is, js, ws := t.Column("from_round").Ints, t.Column("i").Ints, t.Column("j").Ints, t.Column("weight").Floats
	for r := range from {
		if from[r] != 0 {
			continue
		}
		if is[r] < 0 || is[r] >= int64(n) || js[r] < 0 || js[r] >= int64(n) {
			return nil, fmt.Errorf("mixing table row %d: index (%d,%d) outside %d workers", r, is[r], js[r], n)
		}
		w[is[r]][js[r]] = ws[r]
	}
	return w, nil
}
