package algorithms

// localMomentum is D-PSGD (plain local SGD steps, then gossip), DSGDm
// (local heavy-ball or Nesterov momentum, then gossip) and Local SGD with
// momentum (the same local steps, then an exact average). The momentum m
// stays local.
type localMomentum struct {
	cfg   Config
	x     gossiped
	m, g  [][]float32 // m is nil for D-PSGD
	start [][]float32 // x at the round's start; nil unless all-reduce
}

func newLocalMomentum(cfg Config, n int, x0 []float32, momentum, allReduce bool) *localMomentum {
	o := &localMomentum{cfg: cfg, x: newGossiped("x", n, len(x0), x0), g: vectors(n, len(x0), nil)}
	if momentum {
		o.m = vectors(n, len(x0), nil)
	}
	if allReduce {
		o.start = vectors(n, len(x0), nil)
	}
	return o
}

func (o *localMomentum) X() [][]float32 { return o.x.cur }

func (o *localMomentum) State() map[string][][]float32 {
	if o.m == nil {
		return map[string][][]float32{"x": o.x.cur}
	}
	return map[string][][]float32{"x": o.x.cur, "m": o.m}
}

func (o *localMomentum) Round(r *Round) error {
	eta, beta := float32(r.LR), float32(o.cfg.Params.Float("beta"))
	if o.start != nil {
		copyAll(o.start, o.x.cur)
	}
	err := localSteps(r, o.cfg.WeightDecay, o.x.cur, o.g, func(i, _ int) {
		x, g := o.x.cur[i], o.g[i]
		if o.m == nil {
			for k := range x {
				x[k] -= eta * g[k]
			}
			return
		}
		momentumStep(x, o.m[i], g, eta, beta, o.cfg.Params.Bool("nesterov"))
	})
	if err != nil {
		return err
	}
	if o.start != nil {
		o.x.average(r, o.start)
	} else {
		o.x.mix(r)
	}
	return nil
}

// qgdsgdm is QG-DSGDm (Lin et al. 2021): local steps with the quasi-global
// momentum buffer mh, gossip of x, then mh = mu mh + (1-mu) dx with dx the
// round's model displacement per unit of K eta.
type qgdsgdm struct {
	cfg          Config
	x            gossiped
	mh, g, start [][]float32
}

func newQGDSGDm(cfg Config, n int, x0 []float32) Optimizer {
	d := len(x0)
	return &qgdsgdm{cfg: cfg, x: newGossiped("x", n, d, x0), mh: vectors(n, d, nil), g: vectors(n, d, nil), start: vectors(n, d, nil)}
}

func (o *qgdsgdm) X() [][]float32 { return o.x.cur }

func (o *qgdsgdm) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "m_hat": o.mh}
}

func (o *qgdsgdm) Round(r *Round) error {
	eta, beta, mu := float32(r.LR), float32(o.cfg.Params.Float("beta")), float32(o.cfg.Params.Float("mu"))
	copyAll(o.start, o.x.cur)
	err := localSteps(r, o.cfg.WeightDecay, o.x.cur, o.g, func(i, _ int) {
		x, mh, g := o.x.cur[i], o.mh[i], o.g[i]
		for k := range x {
			mt := beta*mh[k] + g[k]
			d := mt
			if o.cfg.Params.Bool("nesterov") {
				d = g[k] + beta*mt
			}
			x[k] -= eta * d
		}
	})
	if err != nil {
		return err
	}
	o.x.mix(r)
	scale := float32(1 / (float64(r.K) * r.LR))
	Parallel(len(o.g), func(i int) {
		start, x, mh := o.start[i], o.x.cur[i], o.mh[i]
		for k := range mh {
			dx := (start[k] - x[k]) * scale
			mh[k] = mu*mh[k] + (1-mu)*dx
		}
	})
	return nil
}

// slowmo is SlowMo (Wang et al. 2020) over local momentum SGD: K base
// steps, an exact average xbar, then the slow momentum update
// u = slow_beta u + (x_old - xbar)/eta; x_old -= slow_alpha eta u, and every
// worker restarts from x_old. x_old is the round's starting point, the same
// on every worker; u is kept per worker (identical copies).
type slowmo struct {
	cfg            Config
	x              gossiped
	m, u, g, start [][]float32
}

func newSlowMo(cfg Config, n int, x0 []float32) Optimizer {
	d := len(x0)
	return &slowmo{cfg: cfg, x: newGossiped("x", n, d, x0), m: vectors(n, d, nil), u: vectors(n, d, nil),
		g: vectors(n, d, nil), start: vectors(n, d, nil)}
}

func (o *slowmo) X() [][]float32 { return o.x.cur }

func (o *slowmo) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "m": o.m, "u": o.u}
}

func (o *slowmo) Round(r *Round) error {
	eta, baseBeta := float32(r.LR), float32(o.cfg.Params.Float("base_beta"))
	slowBeta, slowAlpha := float32(o.cfg.Params.Float("slow_beta")), float32(o.cfg.Params.Float("slow_alpha"))
	copyAll(o.start, o.x.cur)
	err := localSteps(r, o.cfg.WeightDecay, o.x.cur, o.g, func(i, _ int) {
		momentumStep(o.x.cur[i], o.m[i], o.g[i], eta, baseBeta, false)
	})
	if err != nil {
		return err
	}
	o.x.average(r, o.start) // x = xbar on every worker
	inv := float32(1 / r.LR)
	Parallel(len(o.g), func(i int) {
		start, x, u := o.start[i], o.x.cur[i], o.u[i]
		for k := range u {
			u[k] = slowBeta*u[k] + (start[k]-x[k])*inv
			x[k] = start[k] - slowAlpha*eta*u[k]
		}
	})
	return nil
}

// dsgt is decentralized stochastic gradient tracking (one local step per
// round): x = mix(X - eta Y); y = mix(Y) + g_new - g_old; y0 = g(x0).
// Between rounds y holds mix(Y); the round's gradient completes it.
type dsgt struct {
	cfg      Config
	x, y     gossiped
	g, gPrev [][]float32
}

func newDSGT(cfg Config, n int, x0 []float32) Optimizer {
	d := len(x0)
	return &dsgt{cfg: cfg, x: newGossiped("x", n, d, x0), y: newGossiped("y", n, d, nil),
		g: vectors(n, d, nil), gPrev: vectors(n, d, nil)}
}

func (o *dsgt) X() [][]float32 { return o.x.cur }

func (o *dsgt) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "y": o.y.cur, "g_prev": o.gPrev}
}

func (o *dsgt) Round(r *Round) error {
	if err := requireOneStep("dsgt", r.K); err != nil {
		return err
	}
	if err := gradients(r, 0, o.cfg.WeightDecay, o.x.cur, o.g); err != nil {
		return err
	}
	eta := float32(r.LR)
	Parallel(len(o.g), func(i int) {
		x, y, g, gPrev := o.x.cur[i], o.y.cur[i], o.g[i], o.gPrev[i]
		for k := range x {
			if r.T == 0 {
				y[k] = g[k]
			} else {
				y[k] = y[k] + g[k] - gPrev[k]
			}
			gPrev[k] = g[k]
			x[k] -= eta * y[k]
		}
	})
	o.x.mix(r)
	o.y.mix(r)
	return nil
}

// d2 is D^2 / exact diffusion (one local step per round): first round
// x1 = mix(X0 - eta G0), then x_{t+1} = mix(2 x_t - x_{t-1} - eta (g_t - g_{t-1})).
type d2 struct {
	cfg             Config
	x               gossiped
	xPrev, g, gPrev [][]float32
}

func newD2(cfg Config, n int, x0 []float32) Optimizer {
	d := len(x0)
	return &d2{cfg: cfg, x: newGossiped("x", n, d, x0), xPrev: vectors(n, d, nil), g: vectors(n, d, nil), gPrev: vectors(n, d, nil)}
}

func (o *d2) X() [][]float32 { return o.x.cur }

func (o *d2) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "x_prev": o.xPrev, "g_prev": o.gPrev}
}

func (o *d2) Round(r *Round) error {
	if err := requireOneStep("d2", r.K); err != nil {
		return err
	}
	if err := gradients(r, 0, o.cfg.WeightDecay, o.x.cur, o.g); err != nil {
		return err
	}
	eta := float32(r.LR)
	Parallel(len(o.g), func(i int) {
		x, xPrev, g, gPrev := o.x.cur[i], o.xPrev[i], o.g[i], o.gPrev[i]
		for k := range x {
			z := x[k] - eta*g[k]
			if r.T > 0 {
				z = 2*x[k] - xPrev[k] - eta*(g[k]-gPrev[k])
			}
			xPrev[k], gPrev[k], x[k] = x[k], g[k], z
		}
	})
	o.x.mix(r)
	return nil
}
