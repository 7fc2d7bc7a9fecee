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
	"github.com/ump-lab/ump/stages/mixing"
	"gonum.org/v1/gonum/mat"
)

// Stage builds the mixing matrices.
type Stage struct{}

var _ stages.Step[Params] = Stage{}

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

func (Stage) Params(cfg *manifests.Manifest) Params {
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

func (Stage) Run(ctx context.Context, cfg Params, env *stages.Env) (*stages.Result, error) {
	tp := cfg.Topology
	steps, err := graphs.Schedule(tp.Kind, tp.Params, cfg.Workers, cfg.Rounds, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	sum := Summary{Matrices: len(steps), MinSpectralGap: math.Inf(1), MinEdges: math.MaxInt}
	t := &mixing.Table{}
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
		t.Add(st.From, w, gap)
		sum.MinSpectralGap, sum.MaxSpectralGap = math.Min(sum.MinSpectralGap, gap), math.Max(sum.MaxSpectralGap, gap)
		edges := st.Graph.Edges()
		sum.MinEdges, sum.MaxEdges = min(sum.MinEdges, edges), max(sum.MaxEdges, edges)
	}
	if !graphs.Union(steps).Connected() {
		return nil, fmt.Errorf(
			"the %s graph on %d workers is disconnected; workers could never agree",
			cfg.Topology.Kind,
			cfg.Workers,
		)
	}
	ref, err := stages.PutTable(ctx, env.Store, t.Arrow())
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
