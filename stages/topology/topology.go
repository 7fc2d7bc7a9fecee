package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/graphs"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"gonum.org/v1/gonum/mat"
)

// Stage builds the mixing matrices.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string             { return stages.Topology }
func (Stage) Version() int             { return 2 }
func (Stage) Inputs() []stages.Output  { return nil }
func (Stage) Outputs() []stages.Output { return []stages.Output{stages.Mixing} }

// Params is what the graphs depend on: the rounds and the seed only for
// the kinds whose graphs use them (graphs.Topologies), so that identical
// graphs share one cache entry.
type Params struct {
	Topology manifests.Topology `json:"topology"`
	Workers  int                `json:"workers"`
	Rounds   int                `json:"rounds,omitempty"`
	Seed     int                `json:"seed,omitempty"`
}

func (Stage) Params(cfg *manifests.Manifest) any {
	p := Params{Topology: cfg.Topology, Workers: cfg.Workers}
	if k, ok := graphs.Topologies.Lookup(cfg.Topology.Kind); ok {
		if slices.Contains(k.Uses, "rounds") {
			p.Rounds = cfg.Rounds
		}
		if slices.Contains(k.Uses, "seed") {
			p.Seed = cfg.Seed
		}
	}
	return p
}

// Summary is the stage's JSON summary.
type Summary struct {
	Matrices       int     `json:"matrices"`
	MinSpectralGap float64 `json:"min_spectral_gap"`
	MaxSpectralGap float64 `json:"max_spectral_gap"`
	MaxEdges       int     `json:"max_edges"`
	MinEdges       int     `json:"min_edges"`
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := env.Params.(Params)
	tp := cfg.Topology
	steps, err := graphs.Schedule(tp.Kind, tp.Params, cfg.Workers, cfg.Rounds, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	sum := Summary{Matrices: len(steps), MinSpectralGap: math.Inf(1), MinEdges: math.MaxInt}
	t := &table{}
	var relabelledRingGap *float64 // every time-varying ring has the ring's spectrum
	if tp.Kind == "time-varying-ring" {
		w, _ := graphs.Weights(tp.Params.String("weights"), graphs.Circulant(cfg.Workers, 1))
		gap := SpectralGap(w)
		relabelledRingGap = &gap
	}
	for _, st := range steps {
		w, err := graphs.Weights(tp.Params.String("weights"), st.Graph)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", st.From, err)
		}
		if _, err := algorithms.NewMixing(w); err != nil {
			return nil, fmt.Errorf("round %d: %w", st.From, err)
		}
		var gap float64
		if relabelledRingGap != nil {
			gap = *relabelledRingGap
		} else {
			gap = SpectralGap(w)
		}
		t.add(st.From, w, gap)
		sum.MinSpectralGap, sum.MaxSpectralGap = math.Min(sum.MinSpectralGap, gap), math.Max(sum.MaxSpectralGap, gap)
		edges := st.Graph.Edges()
		sum.MinEdges, sum.MaxEdges = min(sum.MinEdges, edges), max(sum.MaxEdges, edges)
	}
	if !graphs.Union(steps).Connected() {
		return nil, fmt.Errorf("the %s graph on %d workers is disconnected; workers could never agree", cfg.Topology.Kind, cfg.Workers)
	}
	ref, err := stages.PutTable(ctx, env.Store, t.table())
	if err != nil {
		return nil, err
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{Outputs: map[string]artifacts.Ref{stages.Mixing.Name: ref}, Summary: summary}, nil
}

// SpectralGap returns rho = 1 - max(|lambda_2|, |lambda_n|)^2 of a
// symmetric W.
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
	m := math.Max(math.Abs(vals[n-2]), math.Abs(vals[0]))
	return 1 - float64(m*m)
}

// table accumulates the mixing table.
type table struct {
	round, i, j []int64
	weight, gap []float64
}

func (t *table) add(round int, w [][]float64, gap float64) {
	for i := range w {
		for j, v := range w[i] {
			if v != 0 {
				t.round, t.i, t.j = append(t.round, int64(round)), append(t.i, int64(i)), append(t.j, int64(j))
				t.weight, t.gap = append(t.weight, v), append(t.gap, gap)
			}
		}
	}
}

func (t *table) table() *artifacts.Table {
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

// ReadMixings reads a mixing table back, checking every matrix.
func ReadMixings(t *artifacts.Table, n int) (*Mixings, error) {
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
				return nil, nil, fmt.Errorf("mixing table row %d: round %d after round %d", r, rounds[r], from[len(from)-1])
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
