package topology

import (
	"fmt"
	"math/bits"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/manifests"
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

// circulant links i to i±d for d = 1..h (mod n).
func circulant(n, h int) Graph {
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

// Schedule returns the graphs of a topology over the run, in round order.
// Static kinds have one step from round 1; mesh-to-ring, time-varying-ring
// and one-peer-exponential change over the rounds (see the package doc).
func Schedule(tp manifests.Topology, n, rounds int, seed uint64) ([]Step, error) {
	static := func(g Graph) []Step { return []Step{{From: 1, Graph: g}} }
	switch tp.Kind {
	case "ring":
		return static(circulant(n, 1)), nil
	case "full":
		return static(circulant(n, n/2)), nil
	case "star":
		g := newGraph(n)
		for i := 1; i < n; i++ {
			g.link(0, i)
		}
		return static(g), nil
	case "torus":
		rows := *tp.Rows
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
	case "exponential":
		g := newGraph(n)
		for i := 0; i < n; i++ {
			for d := 1; d < n; d *= 2 {
				g.link(i, (i+d)%n)
			}
		}
		return static(g), nil
	case "erdos-renyi":
		for attempt := 0; attempt < maxAttempts; attempt++ {
			r := rng.New(seed, "topology-erdos-renyi", uint64(attempt))
			g := newGraph(n)
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					if r.Float64() < *tp.P {
						g.link(i, j)
					}
				}
			}
			if g.Connected() {
				return static(g), nil
			}
		}
		return nil, fmt.Errorf("no connected erdos-renyi graph with p=%g on %d workers in %d draws; raise topology.p", *tp.P, n, maxAttempts)
	case "random-regular":
		for attempt := 0; attempt < maxAttempts; attempt++ {
			if g := randomRegular(n, *tp.Degree, seed, attempt); g != nil && g.Connected() {
				return static(g), nil
			}
		}
		return nil, fmt.Errorf("no connected random-regular graph of degree %d on %d workers in %d draws", *tp.Degree, n, maxAttempts)
	case "mesh-to-ring":
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
			steps = append(steps, Step{From: from, Graph: circulant(n, phases-p)})
		}
		return steps, nil
	case "time-varying-ring":
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
	case "one-peer-exponential":
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
	}
	return nil, fmt.Errorf("unknown topology kind %q", tp.Kind)
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
