package topology

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/graphs"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/mixing"
)

// closedFormGap is 1 - max(|lambda_2|, |lambda_n|)^2 from a list of all
// eigenvalues (one of them 1).
func closedFormGap(eig []float64) float64 {
	m, seenOne := 0.0, false
	for _, v := range eig {
		if !seenOne && math.Abs(v-1) < 1e-12 {
			seenOne = true
			continue
		}
		m = math.Max(m, math.Abs(v))
	}
	return 1 - m*m
}

func TestKnownSpectralGaps(t *testing.T) {
	ring := func(n int) []float64 { // MH on a ring: 1/3 + 2/3 cos(2 pi k/n)
		var e []float64
		for k := 0; k < n; k++ {
			e = append(e, 1.0/3+2.0/3*math.Cos(2*math.Pi*float64(k)/float64(n)))
		}
		return e
	}
	torus := func(k int) []float64 { // MH on a k x k torus, degree 4: (1 + 2cos + 2cos)/5
		var e []float64
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				e = append(
					e,
					(1+2*math.Cos(2*math.Pi*float64(a)/float64(k))+2*math.Cos(2*math.Pi*float64(b)/float64(k)))/5,
				)
			}
		}
		return e
	}
	cases := []struct {
		name string
		tp   manifests.Topology
		n    int
		gap  float64
	}{
		{"ring 10", manifests.Topology{Kind: "ring"}, 10, closedFormGap(ring(10))},
		{"ring 7", manifests.Topology{Kind: "ring"}, 7, closedFormGap(ring(7))},
		{"full 5", manifests.Topology{Kind: "full"}, 5, 1},
		{"full 6", manifests.Topology{Kind: "full"}, 6, 1},
		{"torus 4x4", manifests.Topology{Kind: "torus", Params: kinds.Values{"rows": 4}}, 16, closedFormGap(torus(4))},
		{"torus 5x5", manifests.Topology{Kind: "torus", Params: kinds.Values{"rows": 5}}, 25, closedFormGap(torus(5))},
	}
	for _, c := range cases {
		steps, err := graphs.Schedule(c.tp.Kind, c.tp.Params, c.n, 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		w, err := graphs.Weights("metropolis-hastings", steps[0].Graph)
		if err != nil {
			t.Fatal(err)
		}
		if gap := SpectralGap(w); math.Abs(gap-c.gap) > 1e-12 {
			t.Errorf("%s: spectral gap %v, want %v", c.name, gap, c.gap)
		}
	}
}

// run runs the stage on a memory store and reads its table back.
func run(t *testing.T, cfg manifests.Manifest) (*mixing.Mixings, *artifacts.Table, error) {
	t.Helper()
	k, _ := graphs.Topologies.Lookup(cfg.Topology.Kind)
	cfg.Topology.Params = k.WithDefaults(cfg.Topology.Params, kinds.Cell{Workers: cfg.Workers})
	mem := artifacts.NewMemory()
	env := &stages.Env{Store: mem}
	res, err := Stage{}.Run(context.Background(), Stage{}.Params(&cfg), env)
	if err != nil {
		return nil, nil, err
	}
	data, _ := mem.Get(context.Background(), res.Outputs[stages.Mixing.Name])
	tab, err := artifacts.ReadArrow(data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mixing.Read(tab, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	return m, tab, nil
}

// dense turns round r's mixing matrix back into a dense matrix.
func dense(m *mixing.Mixings, r, n int) [][]float64 {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		for _, e := range m.At(r).Rows[i] {
			w[i][e.J] = e.W
		}
	}
	return w
}

func TestEveryKindIsDoublyStochasticAndConnected(t *testing.T) {
	topologies := []manifests.Topology{
		{
			Kind: "ring",
		}, {Kind: "full"}, {Kind: "star"}, {Kind: "exponential"}, {Kind: "torus", Params: kinds.Values{"rows": 4}},
		{
			Kind:   "erdos-renyi",
			Params: kinds.Values{"p": 0.3},
		}, {Kind: "random-regular", Params: kinds.Values{"degree": 3}},
		{Kind: "mesh-to-ring"}, {Kind: "time-varying-ring"}, {Kind: "one-peer-exponential"},
		{
			Kind:   "ring",
			Params: kinds.Values{"weights": "uniform"},
		}, {Kind: "random-regular", Params: kinds.Values{"degree": 5, "weights": "uniform"}},
	}
	for _, tp := range topologies {
		cfg := manifests.Manifest{Workers: 16, Rounds: 12, Seed: 3, Topology: tp}
		m, _, err := run(t, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tp.Kind, err)
		}
		for r := 1; r <= cfg.Rounds; r++ {
			w := dense(m, r, 16)
			for i := range w {
				row, col := 0.0, 0.0
				for j := range w {
					row, col = row+w[i][j], col+w[j][i]
					if w[i][j] != w[j][i] || w[i][j] < 0 {
						t.Fatalf(
							"%s round %d: w[%d][%d] = %v, w[%d][%d] = %v",
							tp.Kind,
							r,
							i,
							j,
							w[i][j],
							j,
							i,
							w[j][i],
						)
					}
				}
				if math.Abs(row-1) > 1e-12 || math.Abs(col-1) > 1e-12 {
					t.Fatalf("%s round %d: row %d sums to %v, column to %v", tp.Kind, r, i, row, col)
				}
			}
		}
	}
}

func TestRandomKindsAreSeeded(t *testing.T) {
	for _, tp := range []manifests.Topology{{Kind: "erdos-renyi", Params: kinds.Values{"p": 0.3}}, {
		Kind: "random-regular", Params: kinds.Values{"degree": 4}}, {Kind: "time-varying-ring"}} {
		cfg := manifests.Manifest{Workers: 12, Rounds: 5, Seed: 7, Topology: tp}
		_, a, _ := run(t, cfg)
		_, b, _ := run(t, cfg)
		cfg.Seed = 8
		_, c, _ := run(t, cfg)
		ea, _ := artifacts.WriteArrow(a)
		eb, _ := artifacts.WriteArrow(b)
		ec, _ := artifacts.WriteArrow(c)
		if string(ea) != string(eb) {
			t.Errorf("%s: the same seed gave different graphs", tp.Kind)
		}
		if string(ea) == string(ec) {
			t.Errorf("%s: seeds 7 and 8 gave the same graphs", tp.Kind)
		}
	}
	steps, _ := graphs.Schedule("random-regular", kinds.Values{"degree": 4}, 12, 1, 7)
	for i, d := range steps[0].Graph.Degrees() {
		if d != 4 {
			t.Errorf("random-regular: worker %d has degree %d, want 4", i, d)
		}
	}
}

func TestMeshToRingSchedule(t *testing.T) {
	// 10 workers, 20 rounds: h = 5, 4, 3, 2, 1 for 4 rounds each; degrees
	// 9 (full mesh), 8, 6, 4, 2 (ring).
	steps, err := graphs.Schedule("mesh-to-ring", nil, 10, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantFrom, wantDeg := []int{1, 5, 9, 13, 17}, []int{9, 8, 6, 4, 2}
	if len(steps) != len(wantFrom) {
		t.Fatalf("%d steps, want %d", len(steps), len(wantFrom))
	}
	for k, st := range steps {
		if st.From != wantFrom[k] || st.Graph.Degrees()[0] != wantDeg[k] {
			t.Errorf(
				"step %d: from round %d degree %d, want %d and %d",
				k,
				st.From,
				st.Graph.Degrees()[0],
				wantFrom[k],
				wantDeg[k],
			)
		}
	}
	// Fewer rounds than phases: every round still has a graph, the last is the ring.
	steps, _ = graphs.Schedule("mesh-to-ring", nil, 10, 3, 1)
	if steps[0].From != 1 || steps[len(steps)-1].Graph.Degrees()[0] != 2 || len(steps) != 3 {
		t.Errorf("3 rounds: %d steps, first from %d", len(steps), steps[0].From)
	}
}

func TestOnePeerExponentialAveragesExactly(t *testing.T) {
	m, _, err := run(
		t,
		manifests.Manifest{Workers: 8, Rounds: 3, Topology: manifests.Topology{Kind: "one-peer-exponential"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	x := [][]float32{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}
	for r := 1; r <= 3; r++ {
		if got := len(m.At(r).Rows[0]); got != 2 {
			t.Errorf("round %d: worker 0 talks to %d (itself included), want exactly one peer", r, got-1)
		}
		y := [][]float32{{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}}
		m.At(r).Apply(y, x)
		x = y
	}
	for i := range x {
		if x[i][0] != 4.5 {
			t.Errorf("after log2(8) rounds worker %d holds %v, want the mean 4.5", i, x[i][0])
		}
	}
}

func TestTopologyErrors(t *testing.T) {
	// erdos-renyi with a tiny p stays disconnected; uniform weights on a
	// star are not doubly stochastic.
	cases := []struct {
		tp   manifests.Topology
		want string
	}{
		{manifests.Topology{Kind: "erdos-renyi", Params: kinds.Values{"p": 0.001}}, "no connected erdos-renyi graph"},
		{
			manifests.Topology{Kind: "star", Params: kinds.Values{"weights": "uniform"}},
			"uniform weights need a regular graph",
		},
	}
	for _, c := range cases {
		_, _, err := run(t, manifests.Manifest{Workers: 10, Rounds: 2, Topology: c.tp})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.tp.Kind, err, c.want)
		}
	}
}
