package algorithms

import (
	"fmt"
	"testing"
)

// BenchmarkRound measures one round (K=5 local steps on 10 workers, then
// gossip on a ring) of each optimizer over 100k parameters, with a cheap
// gradient so the optimizer's own work dominates.
func BenchmarkRound(b *testing.B) {
	const n, dim, k = 10, 100_000, 5
	mix := ringMixing(b, n)
	grad := func(worker, step int, x, g []float32) error {
		for j := range g {
			g[j] = x[j] - 1
		}
		return nil
	}
	for _, cfg := range []Config{{Name: "d-sum", Alpha: 2, Beta: 0.9}, {Name: "gt-dsum", Alpha: 2, Beta: 0.9, Lambda: 0.8, TrackerInit: "paper"}} {
		b.Run(cfg.Name, func(b *testing.B) {
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
			b.ReportMetric(float64(n*k*dim)*float64(b.N)/b.Elapsed().Seconds()/1e6, fmt.Sprint("Mparam-steps/s"))
		})
	}
}
