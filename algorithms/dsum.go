package algorithms

// dsum is D-SUM (paper Algorithm 1): SUM local steps, then gossip of x and v.
type dsum struct {
	cfg  Config
	x, v gossiped
	g    [][]float32
}

func newDSUM(cfg Config, n int, x0 []float32) Optimizer {
	return &dsum{cfg: cfg, x: newGossiped("x", n, len(x0), x0), v: newGossiped("v", n, len(x0), x0), g: vectors(n, len(x0), nil)}
}

func (o *dsum) X() [][]float32 { return o.x.cur }

func (o *dsum) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "v": o.v.cur}
}

func (o *dsum) Round(r *Round) error {
	eta, alpha, beta := float32(r.LR), float32(o.cfg.Params.Float("alpha")), float32(o.cfg.Params.Float("beta"))
	restart := o.cfg.Params.String("momentum_restart")
	Parallel(len(o.g), func(i int) { restartMomentum(restart, "round", o.x.cur[i], o.v.cur[i]) })
	err := localSteps(r, o.cfg.WeightDecay, o.x.cur, o.g, func(i, _ int) {
		restartMomentum(restart, "step", o.x.cur[i], o.v.cur[i])
		sumStep(o.x.cur[i], o.v.cur[i], o.g[i], eta, alpha, beta)
	})
	if err != nil {
		return err
	}
	o.x.mix(r)
	o.v.mix(r)
	return nil
}
