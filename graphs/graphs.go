package graphs

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
)

// Graph is an undirected graph without self loops as an adjacency matrix.
type Graph [][]bool

func newGraph(n int) Graph {
	g := make(Graph, n)
	for i := range g {
		g[i] = make([]bool, n)
	}
	return g
}

func (g Graph) link(i, j int) {
	if i != j {
		g[i][j], g[j][i] = true, true
	}
}

// Degrees returns each node's number of neighbours.
func (g Graph) Degrees() []int {
	deg := make([]int, len(g))
	for i := range g {
		for _, e := range g[i] {
			if e {
				deg[i]++
			}
		}
	}
	return deg
}

// Edges counts the undirected edges.
func (g Graph) Edges() int {
	sum := 0
	for _, d := range g.Degrees() {
		sum += d
	}
	return sum / 2
}

// Connected reports whether every node reaches every other.
func (g Graph) Connected() bool {
	n := len(g)
	if n == 0 {
		return true
	}
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for j, e := range g[i] {
			if e && !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	for _, s := range seen {
		if !s {
			return false
		}
	}
	return true
}

// Circulant links i to i±d for d = 1..h (mod n).
func Circulant(n, h int) Graph {
	g := newGraph(n)
	for i := 0; i < n; i++ {
		for d := 1; d <= h; d++ {
			g.link(i, (i+d)%n)
		}
	}
	return g
}

// Step is a graph in force from a round (1-based) until the next step.
type Step struct {
	From  int
	Graph Graph
}

// maxAttempts bounds the resampling of random graphs.
const maxAttempts = 1000

// schedule is a topology kind's constructor: its graphs over the run.
type schedule func(v kinds.Values, n, rounds int, seed uint64) ([]Step, error)

// static is the one step of a static topology.
func static(g Graph) []Step { return []Step{{From: 1, Graph: g}} }

// staticKind builds a static topology from the number of workers.
func staticKind(build func(n int) Graph) schedule {
	return func(_ kinds.Values, n, _ int, _ uint64) ([]Step, error) { return static(build(n)), nil }
}

// weights is every topology's mixing weights (Weights).
var weights = kinds.Param{Name: "weights", Type: kinds.String, Choices: []string{"metropolis-hastings", "uniform"},
	Default: "metropolis-hastings", Doc: "the mixing weights"}

// regularOnly refuses uniform weights on a kind whose graphs are not
// regular.
func regularOnly(kind string) func(kinds.Values, kinds.Cell) []kinds.Problem {
	return func(v kinds.Values, _ kinds.Cell) []kinds.Problem {
		if v.String("weights") == "uniform" {
			return []kinds.Problem{
				{
					Param: "weights",
					Msg: fmt.Sprintf(
						"uniform weights 1/(deg+1) are doubly stochastic only on regular graphs and %s is not "+
							"regular; use metropolis-hastings",
						kind,
					),
				},
			}
		}
		return nil
	}
}

// Topologies declares every topology kind: its parameters, the cell
// fields its graphs depend on, and its schedule (see the package doc).
var Topologies = kinds.Family[schedule]{Field: "topology", Key: "kind", Kinds: []kinds.Kind[schedule]{
	{Name: "ring", Doc: "each worker linked to its two neighbours", Params: []kinds.Param{weights},
		New: staticKind(func(n int) Graph { return Circulant(n, 1) })},
	{Name: "full", Doc: "every pair linked", Params: []kinds.Param{weights},
		New: staticKind(func(n int) Graph { return Circulant(n, n/2) })},
	{Name: "star", Doc: "worker 0 linked to every other", Params: []kinds.Param{weights}, Check: regularOnly("star"),
		New: staticKind(func(n int) Graph {
			g := newGraph(n)
			for i := 1; i < n; i++ {
				g.link(0, i)
			}
			return g
		})},
	{Name: "exponential", Doc: "i linked to i + 2^k", Params: []kinds.Param{weights},
		New: staticKind(func(n int) Graph {
			g := newGraph(n)
			for i := 0; i < n; i++ {
				for d := 1; d < n; d *= 2 {
					g.link(i, (i+d)%n)
				}
			}
			return g
		})},
	{Name: "erdos-renyi", Doc: "each pair linked with probability p, redrawn until connected", Uses: []string{"seed"},
		Params: []kinds.Param{weights, {Name: "p", Type: kinds.Float, Range: "(0, 1]", Doc: "the edge probability",
			Required: "erdos-renyi needs p, the edge probability in (0, 1]"}},
		Check: regularOnly("erdos-renyi"),
		New: func(v kinds.Values, n, _ int, seed uint64) ([]Step, error) {
			p := v.Float("p")
			for attempt := 0; attempt < maxAttempts; attempt++ {
				r := rng.New(seed, "topology-erdos-renyi", uint64(attempt))
				g := newGraph(n)
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						if r.Float64() < p {
							g.link(i, j)
						}
					}
				}
				if g.Connected() {
					return static(g), nil
				}
			}
			return nil, fmt.Errorf(
				"no connected erdos-renyi graph with p=%g on %d workers in %d draws; raise topology.p",
				p,
				n,
				maxAttempts,
			)
		}},
	{Name: "random-regular", Doc: "a random degree-regular graph, redrawn until connected", Uses: []string{"seed"},
		Params: []kinds.Param{
			weights,
			{Name: "degree", Type: kinds.Int, Range: "[2, inf)", Doc: "the degree, up to workers-1",
				Required: "random-regular needs degree, an integer from 2 to workers-1"},
		},
		Check: func(v kinds.Values, c kinds.Cell) []kinds.Problem {
			if d, n := v.Int("degree"), c.Workers; d > n-1 || d*n%2 != 0 {
				return []kinds.Problem{
					{
						Param: "degree",
						Msg: fmt.Sprintf(
							"%d is out of range for %d workers; use an integer from 2 to %d with workers*degree even",
							d,
							n,
							n-1,
						),
					},
				}
			}
			return nil
		},
		New: func(v kinds.Values, n, _ int, seed uint64) ([]Step, error) {
			d := v.Int("degree")
			for attempt := 0; attempt < maxAttempts; attempt++ {
				if g := randomRegular(n, d, seed, attempt); g != nil && g.Connected() {
					return static(g), nil
				}
			}
			return nil, fmt.Errorf(
				"no connected random-regular graph of degree %d on %d workers in %d draws",
				d,
				n,
				maxAttempts,
			)
		}},
	{Name: "torus", Doc: "a rows x (workers/rows) wrap-around grid", Params: []kinds.Param{weights,
		{
			Name:      "rows",
			Type:      kinds.Int,
			Range:     "[1, inf)",
			Doc:       "the rows of the torus (default: the largest divisor of workers up to its square root)",
			DefaultOf: func(_ kinds.Values, c kinds.Cell) any { return torusRows(c.Workers) },
		}},
		Check: func(v kinds.Values, c kinds.Cell) []kinds.Problem {
			if rows := v.Int("rows"); c.Workers%rows != 0 {
				return []kinds.Problem{
					{
						Param: "rows",
						Msg:   fmt.Sprintf("%d does not divide %d workers; use a divisor of workers", rows, c.Workers),
					},
				}
			}
			return nil
		},
		New: func(v kinds.Values, n, _ int, _ uint64) ([]Step, error) {
			rows := v.Int("rows")
			cols := n / rows
			g := newGraph(n)
			for r := 0; r < rows; r++ {
				for c := 0; c < cols; c++ {
					i := r*cols + c
					g.link(i, r*cols+(c+1)%cols)
					g.link(i, ((r+1)%rows)*cols+c)
				}
			}
			return static(g), nil
		}},
	{
		Name:   "mesh-to-ring",
		Doc:    "circulant graphs from the full mesh down to the ring, each for an equal share of the rounds",
		Params: []kinds.Param{weights},
		Uses:   []string{"rounds"},
		New: func(_ kinds.Values, n, rounds int, _ uint64) ([]Step, error) {
			phases := n / 2
			if phases == 0 {
				return static(newGraph(n)), nil
			}
			var steps []Step
			for p := 0; p < phases; p++ {
				from := p*rounds/phases + 1
				if next := (p+1)*rounds/phases + 1; next == from {
					continue // more phases than rounds: this one gets no round
				}
				steps = append(steps, Step{From: from, Graph: Circulant(n, phases-p)})
			}
			return steps, nil
		},
	},
	{Name: "time-varying-ring", Doc: "a seeded random relabelling of the ring each round",
		Params: []kinds.Param{weights}, Uses: []string{"rounds", "seed"},
		New: func(_ kinds.Values, n, rounds int, seed uint64) ([]Step, error) {
			steps := make([]Step, rounds)
			for t := range steps {
				perm := rng.New(seed, "topology-time-varying-ring", uint64(t)).Perm(n)
				g := newGraph(n)
				for k := range perm {
					g.link(perm[k], perm[(k+1)%n])
				}
				steps[t] = Step{From: t + 1, Graph: g}
			}
			return steps, nil
		}},
	{Name: "one-peer-exponential", Doc: "i paired with i XOR 2^(t mod log2 n) in round t+1",
		Params: []kinds.Param{weights}, Uses: []string{"rounds"},
		Check: func(_ kinds.Values, c kinds.Cell) []kinds.Problem {
			if n := c.Workers; n&(n-1) != 0 || n < 2 {
				return []kinds.Problem{
					{
						Msg: fmt.Sprintf(
							"one-peer-exponential pairs each worker with one peer per round and needs a power of 2 "+
								"workers (got %d); use exponential or time-varying-ring",
							n,
						),
					},
				}
			}
			return nil
		},
		New: func(_ kinds.Values, n, rounds int, _ uint64) ([]Step, error) {
			period := bits.TrailingZeros(uint(n)) // n is a power of 2
			steps := make([]Step, rounds)
			for t := range steps {
				g := newGraph(n)
				for i := 0; i < n; i++ {
					g.link(i, i^(1<<(t%period)))
				}
				steps[t] = Step{From: t + 1, Graph: g}
			}
			return steps, nil
		}},
}}

// Union is the graph of every edge of the steps.
func Union(steps []Step) Graph {
	var u Graph
	for _, st := range steps {
		if u == nil {
			u = newGraph(len(st.Graph))
		}
		for i := range st.Graph {
			for j, e := range st.Graph[i] {
				if e {
					u.link(i, j)
				}
			}
		}
	}
	return u
}

// Schedule returns the graphs of a topology over the run, in round order.
// Static kinds have one step from round 1; mesh-to-ring, time-varying-ring
// and one-peer-exponential change over the rounds (see the package doc).
func Schedule(kind string, v kinds.Values, n, rounds int, seed uint64) ([]Step, error) {
	k, ok := Topologies.Lookup(kind)
	if !ok {
		return nil, fmt.Errorf("unknown topology kind %q; use one of %v", kind, Topologies.Names())
	}
	return k.New(v, n, rounds, seed)
}

// torusRows is the default torus shape: the largest divisor of n that is
// at most its square root.
func torusRows(n int) int {
	rows := 1
	for r := 1; r*r <= n; r++ {
		if n%r == 0 {
			rows = r
		}
	}
	return rows
}

// randomRegular draws a d-regular simple graph by joining two free stubs
// at random while they may still be joined (Steger-Wormald); nil when a
// draw gets stuck.
func randomRegular(n, d int, seed uint64, attempt int) Graph {
	r := rng.New(seed, "topology-random-regular", uint64(attempt))
	g := newGraph(n)
	stubs := make([]int, 0, n*d)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			stubs = append(stubs, i)
		}
	}
	suitable := func(u, v int) bool { return u != v && !g[u][v] }
	for len(stubs) > 0 {
		for tries := 0; ; tries++ {
			a, b := r.IntN(len(stubs)), r.IntN(len(stubs)-1)
			if b >= a {
				b++
			}
			if u, v := stubs[a], stubs[b]; suitable(u, v) {
				g.link(u, v)
				a, b = max(a, b), min(a, b) // remove the later index first
				stubs[a] = stubs[len(stubs)-1]
				stubs = stubs[:len(stubs)-1]
				stubs[b] = stubs[len(stubs)-1]
				stubs = stubs[:len(stubs)-1]
				break
			}
			if tries%100 == 99 && !anyPair(stubs, suitable) {
				return nil
			}
		}
	}
	return g
}

func anyPair(stubs []int, ok func(u, v int) bool) bool {
	for a := range stubs {
		for b := a + 1; b < len(stubs); b++ {
			if ok(stubs[a], stubs[b]) {
				return true
			}
		}
	}
	return false
}

// Weights returns the mixing matrix of a graph.
func Weights(kind string, g Graph) ([][]float64, error) {
	n := len(g)
	deg := g.Degrees()
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		off := 0.0
		for j := 0; j < n; j++ {
			if !g[i][j] {
				continue
			}
			switch kind {
			case "metropolis-hastings":
				w[i][j] = math.Min(1/float64(deg[i]+1), 1/float64(deg[j]+1))
			case "uniform":
				if deg[i] != deg[j] {
					return nil, fmt.Errorf(
						"uniform weights need a regular graph, but workers %d and %d have degrees %d and %d; use "+
							"metropolis-hastings",
						i,
						j,
						deg[i],
						deg[j],
					)
				}
				w[i][j] = 1 / float64(deg[i]+1)
			default:
				return nil, fmt.Errorf("unknown weights %q", kind)
			}
			off += w[i][j]
		}
		w[i][i] = 1 - off
	}
	return w, nil
}
