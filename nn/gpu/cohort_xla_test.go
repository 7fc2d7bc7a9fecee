//go:build xla

package gpu

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/nntest"
)

// cohortCase is a small cohort: cells of 4 workers on a ring, LeNet on
// MNIST-shaped data (dropout on), batches of up to 8 with one worker's
// smaller; the cells differ in seed, learning rate and parameters
// (algorithmCases).
type cohortCase struct {
	model string
	cfgs  []algorithms.Config
	k     int
	lrs   []float64
	seeds []uint64
}

const (
	cohortWorkers = 4
	cohortBatch   = 8
)

func cohortData() *datasets.Dataset {
	return nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 10, 96, 0, 0), 40)
}

// cohortBatches are worker i's batches of round r, step k, for a cell.
func cohortBatches(seed uint64, round, k int) [][][]int {
	out := make([][][]int, cohortWorkers)
	for i := range out {
		r := rng.New(seed, "test-batches", uint64(i), uint64(round))
		for range k {
			size := cohortBatch
			if i == 1 {
				size = 5
			}
			out[i] = append(out[i], r.Perm(96)[:size])
		}
	}
	return out
}

// algorithmCases has a cohort of every algorithm of algorithms.Family,
// generated from its declaration: as many cells as its most numerous
// choices (at least 3), cell c taking the c-th value (cyclically) of every
// choice and boolean parameter, (1 - c/10) times every non-zero float
// default (c/10 for a zero one), weight decay c 1e-3 and seed 31 + c
// (from seed 1, four cells sat within rounding of a ReLU or max-pool
// decision: TestCohortCasesAreWellConditioned); K = 3 (the first step and
// two turns of the round program's loop, so that XLA cannot replace a
// one-trip loop by its body), or 1 for those defined for one local step
// only.
func algorithmCases() map[string]cohortCase {
	out := map[string]cohortCase{}
	for _, kind := range algorithms.Family.Kinds {
		cells := 3
		for _, p := range kind.Params {
			cells = max(cells, len(p.Choices))
		}
		cc := cohortCase{model: "lenet", k: 3}
		if len(kind.Validate(kinds.Values{}, kinds.Cell{LocalSteps: cc.k})) > 0 {
			cc.k = 1
		}
		for c := range cells {
			v := kinds.Values{}
			for _, p := range kind.Params {
				switch {
				case p.Type == kinds.String:
					v[p.Name] = p.Choices[c%len(p.Choices)]
				case p.Type == kinds.Bool:
					v[p.Name] = c%2 == 1
				case p.Type == kinds.Float && p.Default != nil && p.Default.(float64) != 0:
					v[p.Name] = p.Default.(float64) * (1 - 0.1*float64(c))
				case p.Type == kinds.Float && p.Default != nil:
					v[p.Name] = 0.1 * float64(c)
				}
			}
			cc.cfgs = append(cc.cfgs, algorithms.Config{Name: kind.Name, Params: v, WeightDecay: 1e-3 * float64(c)})
			cc.lrs = append(cc.lrs, []float64{0.05, 0.1, 0.02}[c%3])
			cc.seeds = append(cc.seeds, uint64(31+c))
		}
		out[kind.Name] = cc
	}
	return out
}

// cpuRounds runs a cell on the CPU engine and the CPU optimizer, from x0
// as change leaves it (nil: as the engine initialises it): its state and
// the per-round worker-major step losses.
func cpuRounds(
	t *testing.T,
	model string,
	data *datasets.Dataset,
	cfg algorithms.Config,
	seed uint64,
	lr float64,
	k, rounds int,
	change func(x0 []float32),
) (map[string][][]float32, [][]float64) {
	e, err := cpu.New(model, data, seed)
	if err != nil {
		t.Fatal(err)
	}
	x0 := make([]float32, e.Params())
	e.Init(x0)
	if change != nil {
		change(x0)
	}
	opt, err := algorithms.New(cfg, cohortWorkers, x0)
	if err != nil {
		t.Fatal(err)
	}
	var losses [][]float64
	for r := range rounds {
		step, err := cpuRound(e, opt, r, lr, ringOf(cohortWorkers), cohortBatches(seed, r, k))
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, step)
	}
	return opt.State(), losses
}

// cpuRound runs round r of a cell on a CPU engine and optimizer, worker i
// taking batches[i][tau] at local step tau; it returns the worker-major
// step losses.
func cpuRound(
	e nn.Engine,
	opt algorithms.Optimizer,
	r int,
	lr float64,
	mix algorithms.Mixing,
	batches [][][]int,
) ([]float64, error) {
	n, k := len(batches), len(batches[0])
	losses := make([]float64, n*k)
	grads := func(tau int, x, g [][]float32) error {
		bs := make([][]int, n)
		for i := range bs {
			bs[i] = batches[i][tau]
		}
		l := make([]float64, n)
		if err := e.Gradients(nn.Step{Round: r, Local: tau}, x, g, bs, l); err != nil {
			return err
		}
		for i, v := range l {
			losses[i*k+tau] = v
		}
		return nil
	}
	if err := opt.Round(&algorithms.Round{T: r, K: k, LR: lr, Grad: grads, Mix: mix}); err != nil {
		return nil, err
	}
	return losses, nil
}

// newTestCohort builds a cohort of a case's cells, each at its optimizer's
// initial state; exact: in the CPU engine's order.
func newTestCohort(t *testing.T, dev *Device, data *datasets.Dataset, cc cohortCase, exact bool) nn.Cohort {
	co, err := NewCohort(
		dev,
		data,
		nn.CohortShape{Model: cc.model, Algorithm: cc.cfgs[0].Name, Cells: len(cc.cfgs), Workers: cohortWorkers,
			LocalSteps: cc.k, Batch: cohortBatch, Exact: exact},
	)
	if err != nil {
		t.Fatal(err)
	}
	for c, cfg := range cc.cfgs {
		cpu, _ := cpu.New(cc.model, data, cc.seeds[c])
		x0 := make([]float32, cpu.Params())
		cpu.Init(x0)
		opt, err := algorithms.New(cfg, cohortWorkers, x0)
		if err != nil {
			t.Fatal(err)
		}
		if err := co.SetState(c, opt.State()); err != nil {
			t.Fatal(err)
		}
	}
	return co
}

// cohortRound runs round r of a case's cells; frozen[c] freezes cell c.
func cohortRound(t *testing.T, co nn.Cohort, cc cohortCase, r int, frozen []bool) [][]float64 {
	cells := make([]nn.CellRound, len(cc.cfgs))
	for c := range cells {
		cells[c] = nn.CellRound{Active: frozen == nil || !frozen[c], Config: cc.cfgs[c], Seed: cc.seeds[c], Round: r,
			LR: cc.lrs[c], Mix: ringOf(cohortWorkers), Batches: cohortBatches(cc.seeds[c], r, cc.k)}
	}
	losses, finite, err := co.Round(cells)
	if err != nil {
		t.Fatal(err)
	}
	for c, f := range finite {
		if !f {
			t.Fatalf("round %d: cell %d has non-finite parameters", r+1, c)
		}
	}
	return losses
}

// relDiff is |a - b| / |a| over whole vectors.
func relDiff(a, b [][]float32) float64 {
	d, n := distance(a, b), norm(a)
	if n == 0 {
		return d
	}
	return d / n
}

// TestCohortCasesAreWellConditioned: TestCohortMatchesCPU's 1e-5 after one
// round tells an engine's mistake from rounding only where rounding
// cannot move a decision. Where two values a max-pool compares, or a
// ReLU's input and 0, are within rounding of each other, the engines'
// different sums decide either way: with seeds from 1, QG-DSGDm's second
// cell had such a decision in worker 1's third step, and every x0 that
// flipped it on the CPU engine moved x after one round by 7.53e-5, the
// difference XLA gave on an H100 and an H200 (only the convolutions'
// weights moved: a decision after the second convolution, whose values it
// leaves as they were). So on the CPU engine, x0 changed by up to 1e-6 relative
// (some 16 ulps, beyond the engines' own differences of about 1e-7) in 8
// random ways must move every cell's x after one round by less than the
// agreement's 1e-5: no decision within reach of rounding.
func TestCohortCasesAreWellConditioned(t *testing.T) {
	const change, perturbations = 1e-6, 8
	data := cohortData()
	for name, cc := range algorithmCases() {
		for c, cfg := range cc.cfgs {
			want, _ := cpuRounds(t, cc.model, data, cfg, cc.seeds[c], cc.lrs[c], cc.k, 1, nil)
			worst := 0.0
			for p := range perturbations {
				r := rng.New(cc.seeds[c], "x0-changed", uint64(p))
				got, _ := cpuRounds(t, cc.model, data, cfg, cc.seeds[c], cc.lrs[c], cc.k, 1, func(x0 []float32) {
					for i, v := range x0 {
						x0[i] = v * float32(1+change*(2*r.Float64()-1))
					}
				})
				worst = max(worst, relDiff(want["x"], got["x"]))
			}
			if worst >= 1e-5 {
				t.Errorf(
					"%s cell %d (seed %d): x0 changed by %g moves x after one round by %.3g relative: a decision "+
						"within reach of rounding",
					name,
					c,
					cc.seeds[c],
					change,
					worst,
				)
			} else {
				t.Logf("%s cell %d: x0 changed by %g moves x after one round by at most %.2g", name, c, change, worst)
			}
		}
	}
}

// byLayer is the relative difference of each layer's parameters (those
// of every row), to say where two engines' vectors part.
func byLayer(m *nn.Model, want, got [][]float32) string {
	var parts []string
	for i, l := range m.Layers {
		lo, hi := m.Offsets[i], m.Offsets[i+1]
		if lo == hi {
			continue
		}
		part := func(v [][]float32) [][]float32 {
			out := make([][]float32, len(v))
			for r := range v {
				out[r] = v[r][lo:hi]
			}
			return out
		}
		parts = append(parts, fmt.Sprintf("%d %T %.2g", i, l, relDiff(part(want), part(got))))
	}
	return strings.Join(parts, ", ")
}

// distance is |a - b| over whole vectors.
func distance(a, b [][]float32) float64 {
	var d float64
	for i := range a {
		for k := range a[i] {
			e := float64(a[i][k]) - float64(b[i][k])
			d += e * e
		}
	}
	return math.Sqrt(d)
}

// norm is |v| over whole vectors.
func norm(v [][]float32) float64 {
	var n float64
	for i := range v {
		for _, e := range v[i] {
			n += float64(e) * float64(e)
		}
	}
	return math.Sqrt(n)
}

// TestCohortMatchesCPU: after one round, every state vector of every cell
// of a cohort equals the CPU engine's and CPU optimizer's to a relative
// 1e-5, for every algorithm of the family (algorithmCases), and so do the step losses and the evaluation
// (of the whole cohort, and of one cell, in loops of several steps);
// after a second round (which takes the algorithms' later-round branches)
// to 1e-3: a ReLU or max-pool decision flipped by rounding may move a few
// units further.
//
// A vector other than x may differ, beyond tol times its norm, by what x's
// own difference explains: a vector made from a displacement of x over K
// eta (QG-DSGDm's m_hat = mu m_hat + (1-mu)(x_start - x)/(K eta),
// GT-DSUM's displacement tracker) takes up x's differences at the round's
// start and end divided by K eta, a cancellation, plus its own difference
// of the round before: in round r, at most explained_r = explained_{r-1} +
// (|dx_{r-1}| + |dx_r|)/(K eta). On a 16-core Xeon (OpenBLAS's Cooperlake
// kernels) x was within 5e-5 of the CPU's and m_hat 1.4e-3 by its norm,
// which 1e-3 alone refused. Where x agrees, the allowance vanishes. (A
// mistake in such a vector moves x too, and so loosens its own check; but
// both engines run one definition, so a mistake of the GPU engine's is in
// an operation every algorithm and vector uses, x among them.)
//
// The cases sit away from decisions that rounding could flip
// (TestCohortCasesAreWellConditioned). A vector beyond its tolerance is
// reported with each layer's difference: a flipped max-pool decision moves
// the convolutions' weights only.
//
// The exact subtests (BACKEND/exact/ALGORITHM) run the same cells in an
// Exact cohort, which must give the CPU's bits: tolerance 0
// (cohortGivesTheCPUBits).
func TestCohortMatchesCPU(t *testing.T) {
	data := cohortData()
	defer func(v int) { evalModelSamples = v }(evalModelSamples)
	evalModelSamples = 16 * 3 * (cohortWorkers + 1) // 40 test samples in 3 steps of 16 for 3 cells, 2 of 32 for one
	for backendName, dev := range gpuBackends(t) {
		for name, cc := range algorithmCases() {
			t.Run(
				backendName+"/exact/"+name,
				func(t *testing.T) { cohortGivesTheCPUBits(t, backendName, dev, data, exactCase(name, cc)) },
			)
			t.Run(backendName+"/"+name, func(t *testing.T) {
				co := newTestCohort(t, dev, data, cc, false)
				model := co.(*xlaCohort).model
				defer co.Close()
				dx, explained := make([]float64, len(cc.cfgs)), make([]float64, len(cc.cfgs)) // per cell, as above
				for r, tol := range []float64{1e-5, 1e-3} {
					losses := cohortRound(t, co, cc, r, nil)
					scores, err := co.Evaluate()
					if err != nil {
						t.Fatal(err)
					}
					for c, cfg := range cc.cfgs {
						want, wantLosses := cpuRounds(t, cc.model, data, cfg, cc.seeds[c], cc.lrs[c], cc.k, r+1, nil)
						got, err := co.State(c)
						if err != nil {
							t.Fatal(err)
						}
						start := dx[c]
						dx[c] = distance(want["x"], got["x"])
						explained[c] += (start + dx[c]) / (float64(cc.k) * cc.lrs[c])
						for vec, w := range want {
							allowed := tol * norm(w)
							if vec != "x" {
								allowed += explained[c]
							}
							if d := relDiff(w, got[vec]); distance(w, got[vec]) > allowed {
								t.Errorf(
									"round %d cell %d: %s differs from the CPU's by %.3g relative, beyond %.3g (tol, "+
										"plus what x's difference explains); by layer: %s",
									r+1,
									c,
									vec,
									d,
									allowed/norm(w),
									byLayer(model, w, got[vec]),
								)
							} else {
								t.Logf("round %d cell %d: %s within %.2g of the CPU's", r+1, c, vec, d)
							}
						}
						for j, l := range wantLosses[r] {
							if math.Abs(l-losses[c][j]) > tol*math.Abs(l) {
								t.Errorf("round %d cell %d: loss %d is %g, the CPU's %g", r+1, c, j, losses[c][j], l)
							}
						}
						cpu, _ := cpu.New(cc.model, data, cc.seeds[c])
						one, err := co.EvaluateCell(c)
						if err != nil {
							t.Fatal(err)
						}
						wantScores, err := cpu.Evaluate(want["x"], &data.Test)
						if err != nil {
							t.Fatal(err)
						}
						for i, s := range wantScores {
							what := fmt.Sprintf("round %d cell %d worker %d", r+1, c, i)
							checkScore(t, what, s, scores[c].Local[i], data.Test.Len(), tol)
							checkScore(t, what+" (EvaluateCell)", s, one.Local[i], data.Test.Len(), tol)
						}
					}
				}
			})
		}
	}
}

// exactCase is an algorithm's case as the exact subtests run it: LeNet
// for D-SUM (its convolutions, pooling and dropout in a cohort), logreg
// for the others, whose exact program costs a fraction of LeNet's on
// GoMLX's Go backend. The step of gradients and the evaluation are the
// model's, the same for every algorithm; the update, gossip and average
// are the algorithm's, the same for every model.
func exactCase(name string, cc cohortCase) cohortCase {
	if name != "d-sum" {
		cc.model = "logreg"
	}
	return cc
}

// cohortGivesTheCPUBits runs two rounds of a case's cells in an Exact
// cohort and compares every element of every state vector of every cell
// and every step's loss, and then the evaluation (every model's and the
// average model's loss and accuracy, the consensus distance; of the whole
// cohort, and of cell 1 alone) with the CPU engine's and CPU optimizer's bits:
// on GoMLX's Go backend every figure must be equal; on XLA the test logs
// how many differ, which the kit's agree phase reports per algorithm.
func cohortGivesTheCPUBits(t *testing.T, backendName string, dev *Device, data *datasets.Dataset, cc cohortCase) {
	co := newTestCohort(t, dev, data, cc, true)
	defer co.Close()
	const rounds = 2
	figures, differ := 0, 0
	wantX := make([][][]float32, len(cc.cfgs)) // each cell's x after the last round, on the CPU
	for r := range rounds {
		losses := cohortRound(t, co, cc, r, nil)
		for c, cfg := range cc.cfgs {
			want, wantLosses := cpuRounds(t, cc.model, data, cfg, cc.seeds[c], cc.lrs[c], cc.k, r+1, nil)
			wantX[c] = want["x"]
			got, err := co.State(c)
			if err != nil {
				t.Fatal(err)
			}
			for vec, w := range want {
				for i := range w {
					for k := range w[i] {
						if figures++; !sameBits(got[vec][i][k], w[i][k]) {
							differ++
						}
					}
				}
			}
			for j, l := range wantLosses[r] {
				if figures++; math.Float64bits(losses[c][j]) != math.Float64bits(l) {
					differ++
				}
			}
		}
	}
	scores, err := co.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	one, err := co.EvaluateCell(1)
	if err != nil {
		t.Fatal(err)
	}
	for c := range cc.cfgs {
		wantScores := cpuScores(t, cc.model, data, cc.seeds[c], wantX[c])
		got := []nn.CellScores{scores[c]}
		if c == 1 {
			got = append(got, one)
		}
		for _, g := range got {
			f, d := scoresDiffer(wantScores, g)
			figures, differ = figures+f, differ+d
		}
	}
	found := fmt.Sprintf(
		"%s: %d of the %d figures of %d rounds (every cell's state vectors, step losses and evaluation) differ from "+
			"the CPU engine's bits",
		cc.cfgs[0].Name,
		differ,
		figures,
		rounds,
	)
	line := fmt.Sprintf("exact order on %s: %s", backendName, found) // the kit's agree phase reports it
	if backendName == "gomlx-go" && differ != 0 {
		t.Error(line)
	} else {
		t.Log(line)
	}
}

// cpuScores is the evaluation of a cell's models x as the CPU computes it
// (stages/train's evalNeural): the local models and their float32
// average on the CPU engine, the consensus distance from the float64
// average.
func cpuScores(t *testing.T, model string, data *datasets.Dataset, seed uint64, x [][]float32) nn.CellScores {
	e, err := cpu.New(model, data, seed)
	if err != nil {
		t.Fatal(err)
	}
	xbar := nn.Average(x)
	avg := make([]float32, len(xbar))
	for k, v := range xbar {
		avg[k] = float32(v)
	}
	scores, err := e.Evaluate(append(x[:len(x):len(x)], avg), &data.Test)
	if err != nil {
		t.Fatal(err)
	}
	return nn.CellScores{
		Local:             scores[:len(x)],
		Consensus:         scores[len(x)],
		ConsensusDistance: nn.ConsensusDistance(x, xbar),
	}
}

// scoresDiffer counts an evaluation's figures and those whose bits differ
// from want's.
func scoresDiffer(want, got nn.CellScores) (figures, differ int) {
	var w, g []float64
	for i, s := range want.Local {
		w, g = append(w, s.Loss, s.Accuracy), append(g, got.Local[i].Loss, got.Local[i].Accuracy)
	}
	w = append(w, want.Consensus.Loss, want.Consensus.Accuracy, want.ConsensusDistance)
	g = append(g, got.Consensus.Loss, got.Consensus.Accuracy, got.ConsensusDistance)
	for i := range w {
		if math.Float64bits(w[i]) != math.Float64bits(g[i]) {
			differ++
		}
	}
	return len(w), differ
}

func checkScore(t *testing.T, what string, want, got nn.Score, n int, tol float64) {
	t.Helper()
	if math.Abs(want.Loss-got.Loss) > tol*math.Abs(want.Loss) || math.Abs(want.Accuracy-got.Accuracy) > 1.5/float64(n) {
		t.Errorf("%s: evaluation %+v, the CPU's %+v", what, got, want)
	}
}

// TestCohortEqualsCellsAlone: a second run of a cohort gives the same bits
// (XLA on a GPU included), a frozen cell keeps its state while the others
// train on, and a cohort of 3 cells gives each cell the state it reaches
// in a cohort of its own: exactly on GoMLX's Go backend; on a GPU to
// float rounding (1e-5 relative), since cuBLAS picks its kernels by the
// program's shapes.
func TestCohortEqualsCellsAlone(t *testing.T) {
	data := cohortData()
	cc := algorithmCases()["gt-dsum"]
	run := func(dev *Device, cc cohortCase, rounds int, frozen func(c, r int) bool) nn.Cohort {
		co := newTestCohort(t, dev, data, cc, false)
		for r := range rounds {
			fr := make([]bool, len(cc.cfgs))
			for c := range fr {
				fr[c] = frozen(c, r)
			}
			cohortRound(t, co, cc, r, fr)
		}
		return co
	}
	same := func(t *testing.T, what string, a, b nn.Cohort, ca, cb int, tol float64) {
		want, err := a.State(ca)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.State(cb)
		if err != nil {
			t.Fatal(err)
		}
		for vec, w := range want {
			if d := relDiff(w, got[vec]); d > tol {
				t.Errorf("%s: %s differs by %.3g", what, vec, d)
			} else if d != 0 {
				t.Logf("%s: %s differs by %.3g", what, vec, d)
			}
		}
	}
	for backendName, dev := range gpuBackends(t) {
		t.Run(backendName, func(t *testing.T) {
			secondFrozen := func(c, r int) bool { return c == 1 && r > 0 }
			co := run(dev, cc, 3, secondFrozen)
			defer co.Close()
			again := run(dev, cc, 3, secondFrozen)
			defer again.Close()
			for c := range cc.cfgs {
				same(t, fmt.Sprintf("cell %d, second run", c), co, again, c, c, 0)
				alone := cohortCase{
					model: cc.model,
					cfgs:  cc.cfgs[c : c+1],
					k:     cc.k,
					lrs:   cc.lrs[c : c+1],
					seeds: cc.seeds[c : c+1],
				}
				rounds := 3
				if c == 1 {
					rounds = 1 // frozen after its first round
				}
				one := run(dev, alone, rounds, func(int, int) bool { return false })
				tol := 0.0
				if backendName != "gomlx-go" {
					tol = 1e-5
				}
				same(t, fmt.Sprintf("cell %d, alone", c), one, co, 0, c, tol)
				one.Close()
			}
		})
	}
}

// ringOf is Metropolis-Hastings on a ring of n (1/3 each; n >= 3).
func ringOf(n int) algorithms.Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i] += 1.0 / 3
		w[i][(i+1)%n] += 1.0 / 3
		w[i][(i+n-1)%n] += 1.0 / 3
	}
	m, _ := algorithms.NewMixing(w)
	return m
}

// TestCohortNeedsATestSplit: a data set without test samples is refused
// when the cohort is built, not when its evaluation program fails to
// compile.
func TestCohortNeedsATestSplit(t *testing.T) {
	data := nntest.RandomData([]int{1, 28, 28}, 10, 96, 0, 0)
	_, err := NewCohort(
		device(GoBackend),
		data,
		nn.CohortShape{Model: "lenet", Algorithm: "d-sum", Cells: 1, Workers: 2, LocalSteps: 1, Batch: 4},
	)
	if err == nil || !strings.Contains(err.Error(), "no test samples") {
		t.Fatalf("NewCohort on a data set without a test split: %v; want an error saying it has no test samples", err)
	}
}

// TestCohortBuilderErrorsNameTheAlgorithm: a definition the round program
// cannot be built from is an error naming the algorithm and what is
// inconsistent, not a crash: one whose later local steps take no gradient
// or ask for a number the first step does not (it branches on the step;
// the program builds one loop body for every step), where the host's
// trace and the program disagree, and one that uses
// a vector its Rules do not declare, which the host's trace refuses first.
func TestCohortBuilderErrorsNameTheAlgorithm(t *testing.T) {
	eta := func(_ algorithms.Config, at algorithms.At) float32 { return float32(at.LR) }
	step := func(s algorithms.Space, tau int) {
		s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(eta), s.Grad(tau))))
	}
	cases := []struct {
		name, want string
		round      func(s algorithms.Space, k int)
	}{
		{
			"gradient-first-step-only",
			"took 3 gradients and 3 numbers for 3 local steps on the device, its trace on the " +
				"host 1 gradients and 1 numbers",
			func(s algorithms.Space, k int) {
				s.Steps(k, func(tau int) {
					if tau == 0 {
						step(s, tau)
					}
				})
			},
		},
		{
			"number-at-the-last-step",
			"took 3 gradients and 3 numbers for 3 local steps on the device, its trace on the " +
				"host 3 gradients and 4 numbers",
			func(s algorithms.Space, k int) {
				s.Steps(k, func(tau int) {
					if tau == 2 {
						s.Num(eta)
					}
					step(s, tau)
				})
			},
		},
		{"undeclared-vector", `uses vector "m", which its Rules do not declare`,
			func(s algorithms.Space, k int) {
				s.Steps(k, func(tau int) { step(s, tau) })
				s.Set("x", s.Add(s.Get("x"), s.Get("m")))
			}},
	}
	data := cohortData()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := algorithms.Family.Kinds
			name := "test-" + tc.name
			algorithms.Family.Kinds = append(slices.Clip(saved), kinds.Kind[*algorithms.Rules]{Name: name,
				New: &algorithms.Rules{Vectors: []algorithms.Vector{{Name: "x", FromX0: true}}, Round: tc.round}})
			defer func() { algorithms.Family.Kinds = saved }()
			cc := cohortCase{cfgs: []algorithms.Config{{Name: name}}, k: 3, lrs: []float64{0.1}, seeds: []uint64{1}}
			co, err := NewCohort(device(GoBackend), data, nn.CohortShape{Model: "lenet", Algorithm: name, Cells: 1,
				Workers: cohortWorkers, LocalSteps: cc.k, Batch: cohortBatch})
			if err == nil {
				defer co.Close()
				_, _, err = co.Round(
					[]nn.CellRound{{Active: true, Config: cc.cfgs[0], Seed: 1, LR: 0.1, Mix: ringOf(cohortWorkers),
						Batches: cohortBatches(1, 0, cc.k)}},
				)
			}
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("a cohort of %s: %v; want an error naming it and saying %q", name, err, tc.want)
			}
			t.Log(err)
		})
	}
}

// TestEvaluationAtEveryChunk: the evaluation program scores every worker's
// model as the CPU engine does at each number of test samples per step of
// its loop that the benchmark tries (16 to nn.EvalBatch; the 40 test
// samples padded to 256, so most steps hold padding), not only at the
// cohort's own.
func TestEvaluationAtEveryChunk(t *testing.T) {
	data := cohortData()
	cc := algorithmCases()["d-sum"]
	co := newTestCohort(t, device(GoBackend), data, cc, false)
	defer co.Close()
	cohortRound(t, co, cc, 0, nil)
	x := co.(*xlaCohort)
	for chunk := 16; chunk <= nn.EvalBatch; chunk *= 4 {
		prog, err := graph.NewExec(x.backend, x.evalGraph(len(cc.cfgs), chunk))
		if err != nil {
			t.Fatal(err)
		}
		scores, err := x.evaluate(prog, x.state[0], len(cc.cfgs))
		prog.Finalize()
		if err != nil {
			t.Fatal(err)
		}
		for c := range cc.cfgs {
			state, err := co.State(c)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := cpu.New("lenet", data, cc.seeds[c])
			want, err := e.Evaluate(state["x"], &data.Test)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range want {
				checkScore(
					t,
					fmt.Sprintf("chunk %d, cell %d, worker %d", chunk, c, i),
					s,
					scores[c].Local[i],
					data.Test.Len(),
					1e-5,
				)
			}
		}
	}
}
