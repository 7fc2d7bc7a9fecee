package algorithms

// gtdsum is GT-DSUM (paper Algorithm 2): SUM local steps along
// lambda g + (1-lambda) y, gossip of x and v, then a gradient-tracking
// update of y from the round's d, which the tracker reading defines
// (spec/algorithms.md).
type gtdsum struct {
	cfg                Config
	x, v, y            gossiped
	dPrev, g, m, start [][]float32 // start: x at the round's start
	sum                [][]float32 // the round's sum of g (tracker gradient) or m (direction)
}

func newGTDSUM(cfg Config, n int, x0 []float32) Optimizer {
	d := len(x0)
	return &gtdsum{cfg: cfg, x: newGossiped("x", n, d, x0), v: newGossiped("v", n, d, x0), y: newGossiped("y", n, d, nil),
		dPrev: vectors(n, d, nil), g: vectors(n, d, nil), m: vectors(n, d, nil), start: vectors(n, d, nil), sum: vectors(n, d, nil)}
}

func (o *gtdsum) X() [][]float32 { return o.x.cur }

func (o *gtdsum) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x.cur, "v": o.v.cur, "y": o.y.cur, "d_prev": o.dPrev}
}

func (o *gtdsum) Round(r *Round) error {
	eta, alpha, beta := float32(r.LR), float32(o.cfg.Params.Float("alpha")), float32(o.cfg.Params.Float("beta"))
	lambda := float32(o.cfg.Params.Float("lambda"))
	tracker, restart := o.cfg.Params.String("tracker"), o.cfg.Params.String("momentum_restart")
	copyAll(o.start, o.x.cur)
	Parallel(len(o.g), func(i int) {
		restartMomentum(restart, "round", o.x.cur[i], o.v.cur[i])
		clear(o.sum[i])
	})
	err := localSteps(r, o.cfg.WeightDecay, o.x.cur, o.g, func(i, tau int) {
		y, g, m, sum := o.y.cur[i], o.g[i], o.m[i], o.sum[i]
		if r.T == 0 && tau == 0 {
			// y^(0) is the first local step's gradient (Algorithm 2 input).
			copy(y, g)
			if o.cfg.Params.String("tracker_init") == "unbiased" {
				copy(o.dPrev[i], g)
			}
		}
		for k := range m {
			m[k] = lambda*g[k] + (1-lambda)*y[k]
		}
		switch tracker {
		case "gradient":
			addTo(sum, g)
		case "direction":
			addTo(sum, m)
		}
		restartMomentum(restart, "step", o.x.cur[i], o.v.cur[i])
		sumStep(o.x.cur[i], o.v.cur[i], m, eta, alpha, beta)
	})
	if err != nil {
		return err
	}
	o.x.mix(r)
	o.v.mix(r)
	// y = mix(y + d - d_prev); d_prev = d, with d per the tracker reading:
	// (x_start - x) / (K eta) after gossip (displacement), that times
	// 1 - beta (normalized), or the round's mean g or m.
	scale := float32(1 / (float64(r.K) * r.LR))
	if tracker == "normalized" {
		scale *= 1 - beta
	}
	Parallel(len(o.g), func(i int) {
		start, x, y, dPrev, sum := o.start[i], o.x.cur[i], o.y.cur[i], o.dPrev[i], o.sum[i]
		for k := range y {
			var d float32
			switch tracker {
			case "gradient", "direction":
				d = sum[k] / float32(r.K)
			default:
				d = (start[k] - x[k]) * scale
			}
			y[k] = y[k] + d - dPrev[k]
			dPrev[k] = d
		}
	})
	o.y.mix(r)
	return nil
}

// addTo adds src to dst.
func addTo(dst, src []float32) {
	for k := range dst {
		dst[k] += src[k]
	}
}
