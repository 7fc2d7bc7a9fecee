package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
)

// refQuadratic is an independent float64 implementation of the quadratic
// task and of D-SUM / GT-DSUM, written from spec/algorithms.md without the
// production code.
type refQuadratic struct {
	n, d int
	a, b [][]float64
}

func newRefQuadratic(n, d int, zeta float64, kappa int) *refQuadratic {
	q := &refQuadratic{n: n, d: d}
	for i := 0; i < n; i++ {
		ai, bi := make([]float64, d), make([]float64, d)
		for j := 0; j < d; j++ {
			ai[j] = 1 + float64((i+j)%kappa)
			bi[j] = zeta * math.Cos(float64(1+i+2*j))
		}
		q.a, q.b = append(q.a, ai), append(q.b, bi)
	}
	return q
}

func (q *refQuadratic) f(x []float64) float64 {
	s := 0.0
	for i := 0; i < q.n; i++ {
		for j := 0; j < q.d; j++ {
			s += 0.5 * q.a[i][j] * (x[j] - q.b[i][j]) * (x[j] - q.b[i][j])
		}
	}
	return s / float64(q.n)
}

func (q *refQuadratic) xstar() []float64 {
	x := make([]float64, q.d)
	for j := range x {
		num, den := 0.0, 0.0
		for i := 0; i < q.n; i++ {
			num += q.a[i][j] * q.b[i][j]
			den += q.a[i][j]
		}
		x[j] = num / den
	}
	return x
}

func (q *refQuadratic) grad(i int, x []float64) []float64 {
	g := make([]float64, q.d)
	for j := range g {
		g[j] = q.a[i][j] * (x[j] - q.b[i][j])
	}
	return g
}

// refMH builds Metropolis-Hastings weights for a ring or the full graph.
func refMH(kind string, n int) [][]float64 {
	adj := func(i, j int) bool {
		if i == j {
			return false
		}
		if kind == "full" {
			return true
		}
		return (i+1)%n == j || (j+1)%n == i
	}
	deg := make([]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if adj(i, j) {
				deg[i]++
			}
		}
	}
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i] = 1
		for j := 0; j < n; j++ {
			if adj(i, j) {
				w[i][j] = 1 / float64(max(deg[i], deg[j])+1)
				w[i][i] -= w[i][j]
			}
		}
	}
	return w
}

func refMix(w [][]float64, z [][]float64) [][]float64 {
	out := make([][]float64, len(z))
	for i := range z {
		out[i] = make([]float64, len(z[i]))
		for j := range z {
			for k := range z[j] {
				out[i][k] += w[i][j] * z[j][k]
			}
		}
	}
	return out
}

// refRun returns objective_gap after each round.
func refRun(cfg manifests.Manifest) []float64 {
	qc := cfg.Task.Quadratic
	q := newRefQuadratic(cfg.Workers, qc.Dim, qc.Zeta, qc.Kappa)
	w := refMH(cfg.Topology.Kind, cfg.Workers)
	n, d, K, eta := cfg.Workers, qc.Dim, cfg.LocalSteps, cfg.LR
	alg := cfg.Algorithm
	alpha, beta := *alg.Alpha, *alg.Beta
	lambda := 1.0
	if alg.Lambda != nil {
		lambda = *alg.Lambda
	}
	zeros := func() [][]float64 {
		z := make([][]float64, n)
		for i := range z {
			z[i] = make([]float64, d)
		}
		return z
	}
	x, v, y, dprev := zeros(), zeros(), zeros(), zeros()
	fstar := q.f(q.xstar())
	var gaps []float64
	for t := 0; t < cfg.Rounds; t++ {
		start := zeros()
		for i := 0; i < n; i++ {
			copy(start[i], x[i])
			for tau := 0; tau < K; tau++ {
				g := q.grad(i, x[i])
				dir := g
				if alg.Name == "gt-dsum" {
					if t == 0 && tau == 0 {
						copy(y[i], g)
						if alg.TrackerInit == "unbiased" {
							copy(dprev[i], g)
						}
					}
					dir = make([]float64, d)
					for k := range dir {
						dir[k] = lambda*g[k] + (1-lambda)*y[i][k]
					}
				}
				for k := 0; k < d; k++ {
					u := x[i][k] - eta*dir[k]
					vn := x[i][k] - alpha*eta*dir[k]
					x[i][k] = u + beta*(vn-v[i][k])
					v[i][k] = vn
				}
			}
		}
		x, v = refMix(w, x), refMix(w, v)
		if alg.Name == "gt-dsum" {
			track := zeros()
			for i := 0; i < n; i++ {
				for k := 0; k < d; k++ {
					di := (start[i][k] - x[i][k]) / (float64(K) * eta)
					track[i][k] = y[i][k] + di - dprev[i][k]
					dprev[i][k] = di
				}
			}
			y = refMix(w, track)
		}
		xbar := make([]float64, d)
		for i := range x {
			for k := range xbar {
				xbar[k] += x[i][k] / float64(n)
			}
		}
		gaps = append(gaps, q.f(xbar)-fstar)
	}
	return gaps
}

const referenceManifest = `version: 1
name: reference
task: {dataset: quadratic, quadratic: {dim: 20, zeta: 1.0, kappa: 4, sigma: 0}}
workers: 10
rounds: 50
local_steps: 5
lr: 0.05
topology: {kind: ring, weights: metropolis-hastings}
algorithm: {name: d-sum, alpha: 2, beta: 0.9}
sweep:
  topology.kind: [ring, full]
  algorithm:
    - {name: d-sum, alpha: 2, beta: 0.9}
    - {name: d-sum, alpha: 0, beta: 0.5}
    - {name: gt-dsum, alpha: 2, beta: 0.5, lambda: 0.8}
    - {name: gt-dsum, alpha: 2, beta: 0.5, lambda: 0.8, tracker_init: unbiased}
evaluate: {every: 1}
checkpoint: {every: 10}
`

// TestObjectiveGapMatchesReference runs the quadratic cells through the
// whole pipeline (Badger log, local blobs) and compares every round's
// objective_gap with the float64 reference to a relative 1e-5.
func TestObjectiveGapMatchesReference(t *testing.T) {
	plan, err := manifests.Parse("reference.yaml", []byte(referenceManifest))
	if err != nil {
		t.Fatal(err)
	}
	store := openTestStore(t)
	runner := &Runner{Store: store, Stages: DefaultStages()}
	out, err := runner.Run(context.Background(), plan)
	if err != nil || out.Completed != len(plan.Cells) {
		t.Fatalf("run: %+v, %v", out, err)
	}
	table := exportTable(t, store, plan.Hash, "rounds")
	gaps, rounds, cells := table.Column("objective_gap").Floats, table.Column("round").Ints, table.Column("cell").Ints
	row := 0
	for i, cell := range plan.Cells {
		want := refRun(cell.Config)
		worst := 0.0
		for r := range want {
			if cells[row] != int64(i) || rounds[row] != int64(r+1) {
				t.Fatalf("row %d is cell %d round %d, want cell %d round %d", row, cells[row], rounds[row], i, r+1)
			}
			rel := math.Abs(gaps[row]-want[r]) / math.Abs(want[r])
			worst = math.Max(worst, rel)
			if rel > 1e-5 {
				t.Errorf("cell %s round %d: objective_gap %.10g, reference %.10g (relative error %.2g)", cell.LabelString(), r+1, gaps[row], want[r], rel)
			}
			row++
		}
		t.Logf("cell %s: final gap %.6g, worst relative error %.2g", cell.LabelString(), want[len(want)-1], worst)
	}
}

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exportTable(t *testing.T, s *Store, hash, table string) *artifacts.Table {
	t.Helper()
	reg, err := s.FindManifest(hash)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Report(reg)
	if err != nil {
		t.Fatal(err)
	}
	tab, skipped, err := s.Export(context.Background(), rep, table)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("export %s: skipped %v, %v", table, skipped, err)
	}
	return tab
}
