package datasets

import (
	"math"
	"testing"
)

// TestQuadraticOptimum checks x* against the definition: the mean gradient
// vanishes there, and Gap equals f(x) - f(x*) computed from the f_i.
func TestQuadraticOptimum(t *testing.T) {
	q := NewQuadratic(5, 7, 1.3, 3, 0, 1)
	f := func(x []float64) float64 {
		s := 0.0
		for i := 0; i < q.N; i++ {
			for j := range x {
				s += 0.5 * q.A[i][j] * (x[j] - q.B[i][j]) * (x[j] - q.B[i][j])
			}
		}
		return s / float64(q.N)
	}
	if g := q.GradNormSq(q.xstar); g > 1e-24 {
		t.Errorf("|grad f(x*)|^2 = %g", g)
	}
	x := []float64{0.3, -1, 2, 0, 0.5, 1, -0.25}
	if got, want := q.Gap(x), f(x)-f(q.xstar); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("Gap = %.15g, f(x)-f(x*) = %.15g", got, want)
	}
	g := make([]float32, 7)
	q.Grad(2, 0, 0, make([]float32, 7), g)
	for j := range g {
		if want := float32(q.A[2][j] * -q.B[2][j]); g[j] != want {
			t.Errorf("grad_2(0)[%d] = %v, want %v", j, g[j], want)
		}
	}
}
