package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/ump-lab/ump/internal/rng"
)

// Quadratic is the heterogeneous quadratic task of docs/algorithms.md.
type Quadratic struct {
	N, Dim int
	A, B   [][]float64 // A[i][j] = a_ij, B[i][j] = b_ij
	Sigma  float64     // gradient noise standard deviation
	Seed   uint64      // cell seed for the noise streams
	abar   []float64   // mean_i a_ij
	xstar  []float64
}

// NewQuadratic builds the task for n workers.
func NewQuadratic(n, dim int, zeta float64, kappa int, sigma float64, seed uint64) *Quadratic {
	q := &Quadratic{N: n, Dim: dim, Sigma: sigma, Seed: seed,
		A: make([][]float64, n), B: make([][]float64, n), abar: make([]float64, dim), xstar: make([]float64, dim)}
	ab := make([]float64, dim)
	for i := 0; i < n; i++ {
		q.A[i], q.B[i] = make([]float64, dim), make([]float64, dim)
		for j := 0; j < dim; j++ {
			q.A[i][j] = float64(1 + (i+j)%kappa)
			q.B[i][j] = zeta * math.Cos(float64(1+i+2*j))
			q.abar[j] += q.A[i][j]
			ab[j] += float64(q.A[i][j] * q.B[i][j])
		}
	}
	for j := range q.xstar {
		q.xstar[j] = ab[j] / q.abar[j]
		q.abar[j] /= float64(n)
	}
	return q
}

// QuadraticDigest identifies the task's content for the cell key.
func QuadraticDigest(n, dim int, zeta float64, kappa int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("quadratic/v1 n=%d dim=%d zeta=%v kappa=%d", n, dim, zeta, kappa)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Grad writes worker i's stochastic gradient at x into g: the exact
// gradient a_i*(x - b_i) plus sigma N(0, I) noise from the stream
// (seed, "quadratic-noise", worker, round, step).
func (q *Quadratic) Grad(worker, round, step int, x, g []float32) {
	a, b := q.A[worker], q.B[worker]
	for j := range g {
		g[j] = float32(a[j] * (float64(x[j]) - b[j]))
	}
	if q.Sigma > 0 {
		r := rng.New(q.Seed, "quadratic-noise", uint64(worker), uint64(round), uint64(step))
		for j := range g {
			g[j] += float32(q.Sigma * r.NormFloat64())
		}
	}
}

// Loss returns f_i(x) for worker i.
func (q *Quadratic) Loss(worker int, x []float32) float64 {
	s := 0.0
	for j, xj := range x {
		d := float64(xj) - q.B[worker][j]
		s += float64(q.A[worker][j] * d * d)
	}
	return 0.5 * s
}

// Gap returns f(x) - f(x*) = 0.5 sum_j abar_j (x_j - x*_j)^2, which is exact
// for this quadratic and free of cancellation.
func (q *Quadratic) Gap(x []float64) float64 {
	s := 0.0
	for j, xj := range x {
		d := xj - q.xstar[j]
		s += float64(q.abar[j] * d * d)
	}
	return 0.5 * s
}

// GradNormSq returns |grad f(x)|^2 = sum_j (abar_j (x_j - x*_j))^2.
func (q *Quadratic) GradNormSq(x []float64) float64 {
	s := 0.0
	for j, xj := range x {
		d := q.abar[j] * (xj - q.xstar[j])
		s += float64(d * d)
	}
	return s
}
