package algorithms

import (
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/kinds"
)

// allConfigs has, for every algorithm of Family, its defaults and one
// configuration per value of each choice and boolean parameter (the
// others at their defaults), with beta 0.5 where it takes one (every
// GT-DSUM reading is stable there) and weight decay 1e-3 in every other.
func allConfigs() []Config {
	var out []Config
	for _, k := range Family.Kinds {
		base := kinds.Values{}
		if _, ok := k.Param("beta"); ok {
			base["beta"] = 0.5
		}
		variants := []kinds.Values{base}
		for _, p := range k.Params {
			var values []any
			switch p.Type {
			case kinds.String:
				for _, c := range p.Choices {
					values = append(values, c)
				}
			case kinds.Bool:
				values = []any{true}
			}
			for _, v := range values {
				if v == p.Default {
					continue
				}
				variant := maps.Clone(base)
				variant[p.Name] = v
				variants = append(variants, variant)
			}
		}
		for _, v := range variants {
			out = append(out, Config{Name: k.Name, Params: v, WeightDecay: 1e-3 * float64(len(out)%2)})
		}
	}
	return out
}

// stepsFor is k, or 1 for an algorithm defined for one local step only.
func stepsFor(cfg Config, k int) int {
	if kind, _ := Family.Lookup(cfg.Name); kind.Check != nil &&
		len(kind.Check(cfg.Params, kinds.Cell{LocalSteps: k})) > 0 {
		return 1
	}
	return k
}

func mixingOf(t testing.TB, w [][]float64) Mixing {
	t.Helper()
	m, err := NewMixing(w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ringMixing(t testing.TB, n int) Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i], w[i][(i+1)%n], w[i][(i+n-1)%n] = 1.0/3, 1.0/3, 1.0/3
	}
	return mixingOf(t, w)
}

func uniformMixing(t testing.TB, n int) Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		for j := range w[i] {
			w[i][j] = 1 / float64(n)
		}
	}
	return mixingOf(t, w)
}

func identityMixing(t testing.TB, n int) Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i] = 1
	}
	return mixingOf(t, w)
}

// quadraticGrads is the gradient of the spec's heterogeneous quadratic.
func quadraticGrads(q *datasets.Quadratic, round int) Grads {
	return func(step int, x, g [][]float32) error {
		for i := range x {
			q.Grad(i, round, step, x[i], g[i])
		}
		return nil
	}
}

// train runs rounds of cfg on the quadratic and returns the optimizer.
func train(t *testing.T, cfg Config, q *datasets.Quadratic, mix Mixing, rounds, k int, lr float64) Optimizer {
	t.Helper()
	opt, err := New(cfg, q.N, make([]float32, q.Dim))
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rounds; r++ {
		if err := opt.Round(&Round{T: r, K: k, LR: lr, Grad: quadraticGrads(q, r), Mix: mix}); err != nil {
			t.Fatal(err)
		}
	}
	return opt
}

func mean(x [][]float32) []float64 {
	m := make([]float64, len(x[0]))
	for i := range x {
		for k, v := range x[i] {
			m[k] += float64(v) / float64(len(x))
		}
	}
	return m
}

func TestResultsDoNotDependOnParallelism(t *testing.T) {
	q := datasets.NewQuadratic(7, 33, 1, 3, 0.1, 5)
	for _, cfg := range allConfigs() {
		k := stepsFor(cfg, 3)
		runWith := func(procs int) [][]float32 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			return train(t, cfg, q, ringMixing(t, q.N), 20, k, 0.05).X()
		}
		a, b := runWith(1), runWith(4)
		for i := range a {
			for k := range a[i] {
				if math.Float32bits(a[i][k]) != math.Float32bits(b[i][k]) {
					t.Fatalf("%s: worker %d x[%d] = %v with 1 thread, %v with 4", cfg.Name, i, k, a[i][k], b[i][k])
				}
			}
		}
	}
}

// TestEveryAlgorithmConverges checks that each algorithm cuts the
// objective gap of the heterogeneous quadratic (noise-free) from x0 = 0 at
// least 100-fold. Local steps on heterogeneous data leave a bias that
// shrinks with the learning rate, hence the small one.
func TestEveryAlgorithmConverges(t *testing.T) {
	q := datasets.NewQuadratic(8, 20, 1, 4, 0, 1)
	start := q.Gap(make([]float64, q.Dim))
	for _, cfg := range allConfigs() {
		k := stepsFor(cfg, 5)
		opt := train(t, cfg, q, ringMixing(t, q.N), 1000, k, 0.002)
		gap := q.Gap(mean(opt.X()))
		t.Logf("%s %v: gap %.3g", cfg.Name, cfg.Params, gap)
		if cfg.WithDefaults().Params.String("tracker_init") == "paper" {
			continue // see TestGTDSUMPaperTrackerKeepsAnOffset
		}
		if !(gap < start*1e-2) {
			t.Errorf("%s %v: objective gap %g after 1000 rounds, started at %g", cfg.Name, cfg.Params, gap, start)
		}
	}
}

// heavyBallOrNesterov runs the paper's single-sequence forms on one worker
// in float64: eq. (momentum_hb_one) and eq. (momentum_nesterov_one), with
// x^(-1) = x^(0) and g^(-1) = 0 (D-SUM's v starts at x0).
func heavyBallOrNesterov(q *datasets.Quadratic, worker, steps int, eta, beta float64, nesterov bool) []float64 {
	x := make([]float64, q.Dim)
	prev := make([]float64, q.Dim)
	gPrev := make([]float64, q.Dim)
	for s := 0; s < steps; s++ {
		g := make([]float64, q.Dim)
		for j := range g {
			g[j] = q.A[worker][j] * (x[j] - q.B[worker][j])
		}
		next := make([]float64, q.Dim)
		for j := range x {
			if nesterov {
				next[j] = x[j] - eta*g[j] + beta*(x[j]-eta*g[j]-prev[j]+eta*gPrev[j])
			} else {
				next[j] = x[j] - eta*g[j] + beta*(x[j]-prev[j])
			}
		}
		prev, x, gPrev = x, next, g
	}
	return x
}

func TestDSUMAlphaZeroIsHeavyBallAndAlphaOneIsNesterov(t *testing.T) {
	q := datasets.NewQuadratic(3, 16, 1, 4, 0, 1)
	const rounds, k, eta, beta = 12, 5, 0.05, 0.9
	for _, c := range []struct {
		alpha    float64
		nesterov bool
	}{{0, false}, {1, true}} {
		// With W = I, v's gossip is the identity, so D-SUM's rounds form one
		// sequence of K*rounds local steps per worker.
		opt := train(
			t,
			Config{Name: "d-sum", Params: kinds.Values{"alpha": c.alpha, "beta": beta}},
			q,
			identityMixing(t, q.N),
			rounds,
			k,
			eta,
		)
		for i, x := range opt.X() {
			want := heavyBallOrNesterov(q, i, rounds*k, eta, beta, c.nesterov)
			for j := range want {
				if d := math.Abs(float64(x[j]) - want[j]); d > 1e-5*(1+math.Abs(want[j])) {
					t.Fatalf("alpha=%g worker %d x[%d] = %.8g, single-sequence form %.8g", c.alpha, i, j, x[j], want[j])
				}
			}
		}
	}
}

func TestGTDSUMWithLambdaOneIsDSUM(t *testing.T) {
	q := datasets.NewQuadratic(6, 20, 1, 4, 0.3, 9)
	for _, init := range []string{"paper", "unbiased"} {
		a := train(
			t,
			Config{
				Name:   "gt-dsum",
				Params: kinds.Values{"alpha": 2.0, "beta": 0.9, "lambda": 1.0, "tracker_init": init},
			},
			q,
			ringMixing(t, q.N),
			15,
			4,
			0.03,
		).X()
		b := train(
			t,
			Config{Name: "d-sum", Params: kinds.Values{"alpha": 2.0, "beta": 0.9}},
			q,
			ringMixing(t, q.N),
			15,
			4,
			0.03,
		).X()
		for i := range a {
			for k := range a[i] {
				if math.Float32bits(a[i][k]) != math.Float32bits(b[i][k]) {
					t.Fatalf("tracker_init %s: worker %d x[%d]: gt-dsum %v, d-sum %v", init, i, k, a[i][k], b[i][k])
				}
			}
		}
	}
}

// TestStepRestartIsMomentumFree: with momentum_restart step, D-SUM's
// every local step is x -= (1 + alpha beta) eta g (spec), i.e. D-PSGD at
// that learning rate; and GT-DSUM with lambda 1 (which ignores its
// tracker) under every reading is D-SUM under the same restart.
func TestStepRestartIsMomentumFree(t *testing.T) {
	q := datasets.NewQuadratic(6, 20, 1, 4, 0, 9)
	const alpha, beta, eta = 2.0, 0.9, 0.01
	a := train(
		t,
		Config{Name: "d-sum", Params: kinds.Values{"alpha": alpha, "beta": beta, "momentum_restart": "step"}},
		q,
		ringMixing(t, q.N),
		15,
		4,
		eta,
	).X()
	b := train(t, Config{Name: "dpsgd"}, q, ringMixing(t, q.N), 15, 4, (1+alpha*beta)*eta).X()
	for i := range a {
		for k := range a[i] {
			if d := math.Abs(float64(a[i][k] - b[i][k])); d > 1e-5*(1+math.Abs(float64(b[i][k]))) {
				t.Fatalf(
					"worker %d x[%d]: d-sum with step restarts %v, dpsgd at (1+alpha beta) eta %v",
					i,
					k,
					a[i][k],
					b[i][k],
				)
			}
		}
	}
	for _, restart := range []string{"none", "round", "step"} {
		want := train(
			t,
			Config{Name: "d-sum", Params: kinds.Values{"alpha": alpha, "beta": beta, "momentum_restart": restart}},
			q,
			ringMixing(t, q.N),
			15,
			4,
			eta,
		).X()
		for _, tracker := range []string{"displacement", "normalized", "gradient", "direction"} {
			got := train(t, Config{Name: "gt-dsum", Params: kinds.Values{"alpha": alpha, "beta": beta, "lambda": 1.0,
				"tracker": tracker, "momentum_restart": restart}}, q, ringMixing(t, q.N), 15, 4, eta).X()
			for i := range got {
				for k := range got[i] {
					if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
						t.Fatalf(
							"restart %s tracker %s: worker %d x[%d]: gt-dsum %v, d-sum %v",
							restart,
							tracker,
							i,
							k,
							got[i][k],
							want[i][k],
						)
					}
				}
			}
		}
	}
}

func TestDPSGDWithFullAveragingIsCentralizedSGD(t *testing.T) {
	q := datasets.NewQuadratic(5, 12, 1, 3, 0, 2)
	const rounds, eta = 40, 0.1
	opt := train(t, Config{Name: "dpsgd"}, q, uniformMixing(t, q.N), rounds, 1, eta)
	x := make([]float64, q.Dim) // mini-batch SGD on the mean gradient, float64
	for r := 0; r < rounds; r++ {
		g := make([]float64, q.Dim)
		for i := 0; i < q.N; i++ {
			for j := range g {
				g[j] += q.A[i][j] * (x[j] - q.B[i][j]) / float64(q.N)
			}
		}
		for j := range x {
			x[j] -= eta * g[j]
		}
	}
	for i, xi := range opt.X() {
		for j := range x {
			if d := math.Abs(float64(xi[j]) - x[j]); d > 1e-5*(1+math.Abs(x[j])) {
				t.Fatalf("worker %d x[%d] = %.8g, centralized SGD %.8g", i, j, xi[j], x[j])
			}
		}
	}
}

func TestGradientTrackingReachesTheOptimumWhereDPSGDStalls(t *testing.T) {
	q := datasets.NewQuadratic(10, 20, 1, 4, 0, 1)
	const rounds, eta = 3000, 0.05
	stall := q.Gap(mean(train(t, Config{Name: "dpsgd"}, q, ringMixing(t, q.N), rounds, 1, eta).X()))
	if !(stall > 1e-4) {
		t.Errorf("dpsgd objective gap %g: expected it to stall at a positive gap on heterogeneous data", stall)
	}
	for _, name := range []string{"dsgt", "d2"} {
		gap := q.Gap(mean(train(t, Config{Name: name}, q, ringMixing(t, q.N), rounds, 1, eta).X()))
		if !(gap < 1e-10) {
			t.Errorf("%s objective gap %g after %d rounds, want < 1e-10 (dpsgd stalls at %g)", name, gap, rounds, stall)
		}
		t.Logf("%s gap %.3g, dpsgd %.3g", name, gap, stall)
	}
}

func TestLocalSGDAndSlowMoEndRoundsInAgreement(t *testing.T) {
	q := datasets.NewQuadratic(6, 10, 1, 4, 0.2, 3)
	for _, cfg := range []Config{{Name: "local-sgd-m", Params: kinds.Values{"beta": 0.9}}, {Name: "slowmo",
		Params: kinds.Values{"slow_beta": 0.5, "slow_alpha": 1.0}}} {
		x := train(t, cfg, q, ringMixing(t, q.N), 5, 4, 0.05).X()
		for i := range x {
			for k := range x[i] {
				if x[i][k] != x[0][k] {
					t.Fatalf(
						"%s: worker %d x[%d] = %v, worker 0 %v; an exact average leaves all workers equal",
						cfg.Name,
						i,
						k,
						x[i][k],
						x[0][k],
					)
				}
			}
		}
	}
}

func TestParameterErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "adam"}, `unknown algorithm "adam"`},
		{Config{Name: "d-sum", Params: kinds.Values{"alpha": -1.0, "beta": 0.5}}, "alpha: -1 is out of " +
			"range; use a number >= 0"},
		{Config{Name: "d-sum", Params: kinds.Values{"alpha": 1.0, "beta": 1.0}}, "beta: 1 is out of " +
			"range; use a number in [0, 1)"},
		{Config{Name: "gt-dsum", Params: kinds.Values{"alpha": 1.0, "beta": 0.5, "lambda": 1.5,
			"tracker_init": "paper"}}, "lambda: 1.5 is out of range"},
		{Config{Name: "gt-dsum", Params: kinds.Values{"alpha": 1.0, "beta": 0.5, "lambda": 0.5,
			"tracker_init": "zero"}}, `tracker_init: "zero" is not allowed; use one of: paper, unbiased`},
		{Config{Name: "dsgdm", Params: kinds.Values{"beta": -0.1}}, "beta: -0.1 is out of range"},
		{Config{Name: "qg-dsgdm", Params: kinds.Values{"beta": 0.9, "mu": 1.0}}, "mu: 1 is out of range"},
		{Config{Name: "slowmo", Params: kinds.Values{"slow_beta": 0.5, "slow_alpha": 0.0}}, "slow_alpha: 0 is out of " +
			"range; use a number > 0"},
		{Config{Name: "slowmo", Params: kinds.Values{"slow_beta": 0.5, "slow_alpha": 1.0, "base_beta": 1.0}},
			"base_beta: 1 is out of range"},
		{Config{Name: "dpsgd", WeightDecay: -1}, "weight_decay = -1"},
	} {
		_, err := New(c.cfg, 2, make([]float32, 3))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to contain %q", c.cfg, err, c.want)
		}
	}
	for _, name := range []string{"dsgt", "d2"} {
		opt, err := New(Config{Name: name}, 2, make([]float32, 3))
		if err != nil {
			t.Fatal(err)
		}
		err = opt.Round(
			&Round{
				K:    5,
				LR:   0.1,
				Mix:  identityMixing(t, 2),
				Grad: func(int, [][]float32, [][]float32) error { return nil },
			},
		)
		if err == nil || !strings.Contains(err.Error(), "use local_steps: 1") {
			t.Errorf("%s with K=5: error %v", name, err)
		}
	}
}

func TestNewMixingRejectsBadMatrices(t *testing.T) {
	for name, w := range map[string][][]float64{
		"row sum":    {{0.5, 0.4}, {0.4, 0.6}},
		"asymmetric": {{0.5, 0.5}, {0.4, 0.6}},
		"negative":   {{1.5, -0.5}, {-0.5, 1.5}},
		"ragged":     {{1}, {0.5, 0.5}},
	} {
		if _, err := NewMixing(w); err == nil {
			t.Errorf("%s: accepted %v", name, w)
		}
	}
}

// TestGTDSUMPaperTrackerKeepsAnOffset checks the invariant behind the
// spec's tracker_init: mean(y) - mean(d_prev) stays mean_i g_i(x0) with
// the paper's d_prev = 0 and 0 with the unbiased start, and that the paper's
// offset leaves a gap that a smaller learning rate does not remove.
func TestGTDSUMPaperTrackerKeepsAnOffset(t *testing.T) {
	q := datasets.NewQuadratic(8, 20, 1, 4, 0, 1)
	g0 := make([]float64, q.Dim) // mean_i g_i(0)
	for i := 0; i < q.N; i++ {
		for j := range g0 {
			g0[j] -= q.A[i][j] * q.B[i][j] / float64(q.N)
		}
	}
	gaps := map[string][]float64{}
	for _, init := range []string{"paper", "unbiased"} {
		for _, lr := range []float64{0.002, 0.0005} {
			cfg := Config{
				Name:   "gt-dsum",
				Params: kinds.Values{"alpha": 2.0, "beta": 0.5, "lambda": 0.8, "tracker_init": init},
			}
			opt := train(t, cfg, q, ringMixing(t, q.N), 1000, 5, lr)
			st := opt.State()
			y, d := mean(st["y"]), mean(st["d_prev"])
			for j := range y {
				want := 0.0
				if init == "paper" {
					want = g0[j]
				}
				if diff := y[j] - d[j]; math.Abs(diff-want) > 1e-4 {
					t.Fatalf("%s lr %g: mean(y)-mean(d_prev) [%d] = %.6g, want %.6g", init, lr, j, diff, want)
				}
			}
			gaps[init] = append(gaps[init], q.Gap(mean(opt.X())))
		}
	}
	t.Logf("gaps at lr 0.002, 0.0005: paper %.3g, unbiased %.3g", gaps["paper"], gaps["unbiased"])
	if p := gaps["paper"]; !(p[1] > 0.5*p[0] && p[1] > 10*gaps["unbiased"][1]) {
		t.Errorf("paper tracker: gaps %v do not stay put as lr shrinks (unbiased %v)", p, gaps["unbiased"])
	}
}

// recordingComm records the vectors an optimizer communicates (exactly).
type recordingComm struct{ kinds []string }

func (r *recordingComm) Gossip(_ int, kind string, _ []float32, x [][]float32, m Mixing) {
	r.kinds = append(r.kinds, kind)
	out := buffers(len(x), len(x[0]), nil)
	m.Apply(out, x)
	for i := range x {
		copy(x[i], out[i])
	}
}

func (r *recordingComm) Average(_ int, kind string, x, _ [][]float32) {
	r.kinds = append(r.kinds, kind)
	mean := make([]float32, len(x[0]))
	Mean(mean, x)
	for i := range x {
		copy(x[i], mean)
	}
}

// TestTraceIsWhatTheOptimizerDoes: what TraceRound says a definition sends
// (what the GPU engine counts) is what the CPU optimizer hands to its
// Comm, and StateNames are the vectors it checkpoints.
func TestTraceIsWhatTheOptimizerDoes(t *testing.T) {
	for _, name := range Family.Names() {
		cfg := Config{Name: name}
		opt, err := New(cfg, 3, make([]float32, 4))
		if err != nil {
			t.Fatal(err)
		}
		comm := &recordingComm{}
		grads := func(_ int, _, g [][]float32) error { return nil }
		if err := opt.Round(&Round{K: 1, LR: 0.1, Grad: grads, Mix: ringMixing(t, 3), Comm: comm}); err != nil {
			t.Fatal(err)
		}
		trace, err := TraceRound(cfg, At{K: 1, LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(trace.Sends, comm.kinds) {
			t.Errorf("%s: the trace sends %v, the optimizer sent %v", name, trace.Sends, comm.kinds)
		}
		names, err := StateNames(name)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(maps.Keys(opt.State())); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
			t.Errorf("%s: StateNames %v, the optimizer keeps %v", name, names, want)
		}
	}
}

// TestNoStepAfterAFailedGradient: when a local step's gradient fails, the
// round ends with its error and no algorithm moves x after it: the workers'
// parameters are those the failing gradient was asked at.
func TestNoStepAfterAFailedGradient(t *testing.T) {
	q := datasets.NewQuadratic(4, 6, 1, 2, 0.5, 3)
	failing := errors.New("the gradient failed")
	for _, cfg := range allConfigs() {
		k := stepsFor(cfg, 3)
		if k < 2 {
			continue // one local step: no step after it either way
		}
		opt, err := New(cfg, q.N, make([]float32, q.Dim))
		if err != nil {
			t.Fatal(err)
		}
		var atFailure [][]float32
		grads := quadraticGrads(q, 0)
		err = opt.Round(
			&Round{T: 0, K: k, LR: 0.05, Mix: ringMixing(t, q.N), Grad: func(step int, x, g [][]float32) error {
				if step == 1 {
					atFailure = clone(x)
					return failing
				}
				return grads(step, x, g)
			}},
		)
		if !errors.Is(err, failing) {
			t.Errorf("%s: the round returned %v, want the gradient's error", cfg.Name, err)
			continue
		}
		if !slices.EqualFunc(opt.X(), atFailure, slices.Equal[[]float32]) {
			t.Errorf("%s %v: x moved after the failed gradient", cfg.Name, cfg.Params)
		}
	}
}

func clone(x [][]float32) [][]float32 {
	out := make([][]float32, len(x))
	for i := range x {
		out[i] = slices.Clone(x[i])
	}
	return out
}
