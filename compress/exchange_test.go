package compress

import (
	"math"
	"slices"
	"testing"

	"github.com/ump-lab/ump/codecs"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/kinds"
)

// ring is the Metropolis-Hastings mixing matrix of a ring of n >= 3.
func ring(t *testing.T, n int) algorithms.Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i], w[i][(i+1)%n], w[i][(i+n-1)%n] = 1.0/3, 1.0/3, 1.0/3
	}
	m, err := algorithms.NewMixing(w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// train runs an algorithm on the heterogeneous quadratic and returns the
// optimizer; comm may be nil (exact). after is called after every round.
func train(
	t *testing.T,
	name string,
	comm algorithms.Comm,
	n, rounds int,
	lr float64,
	after func(x [][]float32),
) algorithms.Optimizer {
	t.Helper()
	q := datasets.NewQuadratic(n, 20, 1, 4, 0, 1)
	cfg := algorithms.Config{Name: name, Params: kinds.Values{}}
	kind, _ := algorithms.Family.Lookup(name)
	for _, p := range kind.Params { // the algorithm's own, set to the test's values
		if v, ok := (kinds.Values{"alpha": 2.0, "beta": 0.5, "lambda": 0.8, "mu": 0.5, "slow_beta": 0.5})[p.Name]; ok {
			cfg.Params[p.Name] = v
		}
	}
	opt, err := algorithms.New(cfg, n, make([]float32, 20))
	if err != nil {
		t.Fatal(err)
	}
	k := 3
	if len(kind.Validate(cfg.Params, kinds.Cell{LocalSteps: k})) > 0 { // defined for K = 1 only
		k = 1
	}
	mix := ring(t, n)
	for r := range rounds {
		round := &algorithms.Round{
			T:    r,
			K:    k,
			LR:   lr,
			Mix:  mix,
			Comm: comm,
			Grad: func(step int, x, g [][]float32) error {
				for i := range x {
					q.Grad(i, r, step, x[i], g[i])
				}
				return nil
			},
		}
		if err := opt.Round(round); err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(opt.X())
		}
	}
	return opt
}

// TestNoneIsTheExactPath: through an Exchange with codec none, every
// algorithm's state is bit-identical to exact communication, and the
// exchange counts 32 bits per entry of each vector sent.
func TestNoneIsTheExactPath(t *testing.T) {
	for _, name := range algorithms.Family.Names() {
		ex, err := NewExchange(Config{Spec: Spec{Codec: "none"}}, 5, 20)
		if err != nil {
			t.Fatal(err)
		}
		exact := train(t, name, nil, 5, 25, 0.05, nil)
		counted := train(t, name, ex, 5, 25, 0.05, nil)
		for vec, want := range exact.State() {
			for i := range want {
				if !slices.Equal(counted.State()[vec][i], want[i]) {
					t.Fatalf("%s: state %s of worker %d differs through the none exchange", name, vec, i)
				}
			}
		}
		row := ex.Row()
		trace, err := algorithms.TraceRound(algorithms.Config{Name: name}, algorithms.At{K: 1, LR: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(len(trace.Sends) * 25 * 32 * 20); row[0] != want {
			t.Errorf("%s: %g bits sent per worker, want %g (%v each round)", name, row[0], want, trace.Sends)
		}
	}
}

// TestChocoReachesConsensus: CHOCO-gossip alone (no gradients) keeps the
// mean and drives the consensus distance to zero: topk 0.1 with gamma 0.2
// (with gamma 0.5, the spec default, topk 0.1 on this ring diverges: CHOCO
// needs gamma of the order of the fraction sent), and qsgd with 16 levels
// on buckets of 512, whose variance bound exceeds |t|^2, with gamma 0.5
// thanks to the 1/(1+omega) rescaling.
func TestChocoReachesConsensus(t *testing.T) {
	const n = 8
	for _, c := range []struct {
		spec   Spec
		gamma  float64
		d      int
		rounds int
	}{
		{Spec{Codec: "topk", Params: kinds.Values{"ratio": 0.1}}, 0.2, 50, 600},
		{Spec{Codec: "qsgd", Params: kinds.Values{"levels": 16, "bucket": 512}}, 0.5, 4096, 600},
	} {
		c.spec.Params["gamma"] = c.gamma
		ex, err := NewExchange(Config{Spec: c.spec, Seed: 1}, n, c.d)
		if err != nil {
			t.Fatal(err)
		}
		x := make([][]float32, n)
		for i := range x {
			x[i] = randomVector(uint64(i), c.d)
		}
		mean0 := make([]float32, c.d)
		algorithms.Mean(mean0, x)
		start := consensusDistance(x)
		for r := range c.rounds {
			ex.Gossip(r, "x", nil, x, ring(t, n))
		}
		end := consensusDistance(x)
		mean := make([]float32, c.d)
		algorithms.Mean(mean, x)
		for k := range mean {
			if math.Abs(float64(mean[k]-mean0[k])) > 1e-4*(1+math.Abs(float64(mean0[k]))) {
				t.Fatalf("%s entry %d: the mean moved from %g to %g", c.spec.Codec, k, mean0[k], mean[k])
			}
		}
		if !(end < 1e-8*start) {
			t.Errorf(
				"%s: consensus distance %g -> %g after %d rounds of CHOCO-gossip",
				c.spec.Codec,
				start,
				end,
				c.rounds,
			)
		}
	}
}

// TestChocoTrainsTheQuadratic: with topk 0.1 through CHOCO-gossip, DSGT
// (gradient tracking) still reaches the exact optimum and consensus; D-SUM
// settles in a neighbourhood that shrinks with the learning rate; GT-DSUM's
// tracker keeps its mean (CHOCO preserves averages).
func TestChocoTrainsTheQuadratic(t *testing.T) {
	const n, d = 6, 20
	q := datasets.NewQuadratic(n, d, 1, 4, 0, 1)
	// run returns the final objective gap and consensus distance.
	run := func(name string, lr float64, rounds int) (gap, dist float64, opt algorithms.Optimizer) {
		ex, err := NewExchange(
			Config{Spec: Spec{Codec: "topk", Params: kinds.Values{"ratio": 0.1, "gamma": 0.2}}, Seed: 1},
			n,
			d,
		)
		if err != nil {
			t.Fatal(err)
		}
		opt = train(t, name, ex, n, rounds, lr, nil)
		xbar := make([]float64, d)
		for i := range opt.X() {
			for k, v := range opt.X()[i] {
				xbar[k] += float64(v) / n
			}
		}
		return q.Gap(xbar), consensusDistance(opt.X()), opt
	}
	if gap, dist, _ := run("dsgt", 0.01, 1500); !(gap < 1e-8 && dist < 1e-8) {
		t.Errorf("dsgt with CHOCO topk 0.1: objective gap %g, consensus distance %g; want both < 1e-8", gap, dist)
	}
	gapBig, distBig, _ := run("d-sum", 0.01, 1500)
	gapSmall, distSmall, _ := run("d-sum", 0.001, 15000)
	t.Logf(
		"d-sum: lr 0.01: gap %.3g, distance %.3g; lr 0.001: gap %.3g, distance %.3g",
		gapBig,
		distBig,
		gapSmall,
		distSmall,
	)
	if !(gapSmall < 0.2*gapBig && distSmall < 0.1*distBig) {
		t.Errorf(
			"d-sum with CHOCO topk 0.1: the neighbourhood does not shrink with lr: gap %g -> %g, consensus distance "+
				"%g -> %g",
			gapBig,
			gapSmall,
			distBig,
			distSmall,
		)
	}
	// GT-DSUM (paper init): mean(y) - mean(d_prev) stays mean_i g_i(x0).
	_, _, opt := run("gt-dsum", 0.01, 1500)
	y, dPrev := opt.State()["y"], opt.State()["d_prev"]
	g := make([]float32, d)
	for k := range d {
		want, got := 0.0, 0.0
		for i := range n {
			q.Grad(i, 0, 0, make([]float32, d), g)
			want += float64(g[k]) / n
			got += (float64(y[i][k]) - float64(dPrev[i][k])) / n
		}
		if math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
			t.Errorf("gt-dsum tracker entry %d: mean(y - d_prev) = %g, want mean g(x0) = %g", k, got, want)
		}
	}
}

func consensusDistance(x [][]float32) float64 {
	mean := make([]float32, len(x[0]))
	algorithms.Mean(mean, x)
	s := 0.0
	for i := range x {
		for k, v := range x[i] {
			d := float64(v - mean[k])
			s += d * d
		}
	}
	return s / float64(len(x))
}

// TestAVectorWithoutColumnsCounts: a vector of a name without columns of
// its own (a new algorithm's) counts in bits_sent_per_worker, and its
// counts survive a checkpoint.
func TestAVectorWithoutColumnsCounts(t *testing.T) {
	ex, err := NewExchange(Config{Spec: Spec{Codec: "none"}}, 3, 20)
	if err != nil {
		t.Fatal(err)
	}
	x := [][]float32{make([]float32, 20), make([]float32, 20), make([]float32, 20)}
	ex.Gossip(0, "x", nil, x, ring(t, 3))
	ex.Gossip(0, "m", nil, x, ring(t, 3))
	again, _ := NewExchange(Config{Spec: Spec{Codec: "none"}}, 3, 20)
	if err := again.Restore(ex.State(), ex.Counters()); err != nil {
		t.Fatal(err)
	}
	for what, e := range map[string]*Exchange{"sent": ex, "restored": again} {
		if row := e.Row(); row[0] != 2*32*20 || row[1] != 32*20 {
			t.Errorf("%s: bits_sent_per_worker %g, bits_x %g; want %d and %d", what, row[0], row[1], 2*32*20, 32*20)
		}
	}
}

// TestCompressionRatioAgainstFloat32: compression_ratio_x is 32 bits per
// entry over the bits sent: 1 for none, 2 for fp16, 32*d/(64+d) for
// onebit (two float32 means and a bit per entry).
func TestCompressionRatioAgainstFloat32(t *testing.T) {
	const n, d = 3, 20
	for codec, want := range map[string]float64{"none": 1, "fp16": 2, "onebit": 32.0 * d / (64 + d)} {
		ex, err := NewExchange(Config{Spec: Spec{Codec: codec}}, n, d)
		if err != nil {
			t.Fatal(err)
		}
		x := make([][]float32, n)
		for i := range x {
			x[i] = make([]float32, d)
			for k := range x[i] {
				x[i][k] = float32(i+k) - 5
			}
		}
		ex.Gossip(0, "x", nil, x, ring(t, n))
		cols, row := codecs.Columns, ex.Row()
		at := slices.Index(cols, "compression_ratio_x")
		if at < 0 {
			t.Fatalf("no compression_ratio_x among %v", cols)
		}
		if got := row[at]; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: compression_ratio_x %g, want %g", codec, got, want)
		}
	}
}

// TestChocoRescalesUnbiasedCodecs: after one CHOCO step from a zero
// public copy, worker i's copy is its decoded message q scaled by
// 1/(1+omega) for the unbiased codecs: 8/9 for natural (omega 1/8) and
// 1/4 for terngrad on 16 entries (omega sqrt(16)-1 = 3); 1 for topk.
func TestChocoRescalesUnbiasedCodecs(t *testing.T) {
	const n, d = 3, 16
	for codec, scale := range map[string]float32{"natural": 8.0 / 9, "terngrad": 0.25, "topk": 1} {
		spec := Spec{Codec: codec}
		ex, err := NewExchange(Config{Spec: spec, Seed: 4}, n, d)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := NewCodec(spec)
		x := make([][]float32, n)
		for i := range x {
			x[i] = randomVector(uint64(i+1), d)
		}
		sent := make([][]float32, n)
		for i := range x {
			sent[i] = slices.Clone(x[i])
		}
		ex.Gossip(0, "x", make([]float32, d), x, ring(t, n))
		copies := ex.State()["choco_x"]
		for i := range sent {
			at := Draw{Seed: 4, Round: 0, Kind: "x", Worker: i}
			q := make([]float32, d)
			c.Decode(c.Encode(sent[i], at), at, q)
			for k := range q {
				if want := q[k] * scale; copies[i][k] != want {
					t.Fatalf(
						"%s: worker %d's public copy[%d] = %g after one step, want q x %g = %g",
						codec,
						i,
						k,
						copies[i][k],
						scale,
						want,
					)
				}
			}
		}
	}
}
