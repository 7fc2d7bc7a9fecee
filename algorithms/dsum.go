package algorithms

// dsum is D-SUM (paper Algorithm 1): SUM local steps, then gossip of x and v.
type dsum struct {
	cfg        Config
	x, v, g    [][]float32
	mixX, mixV [][]float32 // gossip destinations, swapped in after mixing
}

func newDSUM(cfg Config, n int, x0 []float32) *dsum {
	d := len(x0)
	return &dsum{cfg: cfg, x: vectors(n, d, x0), v: vectors(n, d, x0), g: vectors(n, d, nil),
		mixX: vectors(n, d, nil), mixV: vectors(n, d, nil)}
}

func (o *dsum) X() [][]float32 { return o.x }

func (o *dsum) State() map[string][][]float32 { return map[string][][]float32{"x": o.x, "v": o.v} }

func (o *dsum) Round(r *Round) error {
	eta, alpha, beta := float32(r.LR), float32(o.cfg.Alpha), float32(o.cfg.Beta)
	err := parallelErr(len(o.x), func(i int) error {
		for tau := 0; tau < r.K; tau++ {
			if err := r.Grad(i, tau, o.x[i], o.g[i]); err != nil {
				return err
			}
			sumStep(o.x[i], o.v[i], o.g[i], eta, alpha, beta)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.Mix.Apply(o.mixX, o.x)
	r.Mix.Apply(o.mixV, o.v)
	o.x, o.mixX = o.mixX, o.x
	o.v, o.mixV = o.mixV, o.v
	return nil
}
