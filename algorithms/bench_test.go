package algorithms

import (
	"fmt"
	"testing"
)

// BenchmarkRound measures one round (K=5 local steps on 10 workers, then
// communication on a ring) of each optimizer over 100k parameters, and
// over 20 (a small quadratic's, where the optimizer's overhead shows),
// with a cheap gradient so the optimizer's own work dominates.
func BenchmarkRound(b *testing.B) {
	const n = 10
	mix := ringMixing(b, n)
	grad := func(_ int, x, g [][]float32) error {
		for i := range x {
			for j := range g[i] {
				g[i][j] = x[i][j] - 1
			}
		}
		return nil
	}
	for _, dim := range []int{100_000, 20} {
		for _, kind := range Family.Kinds { // at its defaults
			cfg := Config{Name: kind.Name}
			k := stepsFor(cfg, 5)
			b.Run(fmt.Sprintf("%s/dim=%d", kind.Name, dim), func(b *testing.B) {
				opt, err := New(cfg, n, make([]float32, dim))
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(n * dim * 4))
				for t := 0; b.Loop(); t++ {
					if err := opt.Round(&Round{T: t, K: k, LR: 0.01, Grad: grad, Mix: mix}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*k*dim)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mparam-steps/s")
			})
		}
	}
}
