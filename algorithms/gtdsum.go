package algorithms

// gtdsum is GT-DSUM (paper Algorithm 2): SUM local steps along
// lambda g + (1-lambda) y, gossip of x and v, then a gradient-tracking
// update of y from the round's model displacement d.
type gtdsum struct {
	cfg                  Config
	x, v, y, dPrev, g, m [][]float32
	start, mixX, mixV    [][]float32 // x at round start; gossip destinations
	track, mixY          [][]float32 // y + d - d_prev before gossip; y after
}

func newGTDSUM(cfg Config, n int, x0 []float32) *gtdsum {
	d := len(x0)
	z := func() [][]float32 { return vectors(n, d, nil) }
	return &gtdsum{cfg: cfg, x: vectors(n, d, x0), v: vectors(n, d, x0), y: z(), dPrev: z(), g: z(), m: z(),
		start: z(), mixX: z(), mixV: z(), track: z(), mixY: z()}
}

func (o *gtdsum) X() [][]float32 { return o.x }

func (o *gtdsum) State() map[string][][]float32 {
	return map[string][][]float32{"x": o.x, "v": o.v, "y": o.y, "d_prev": o.dPrev}
}

func (o *gtdsum) Round(r *Round) error {
	eta, alpha, beta := float32(r.LR), float32(o.cfg.Alpha), float32(o.cfg.Beta)
	lambda := float32(o.cfg.Lambda)
	err := parallelErr(len(o.x), func(i int) error {
		copy(o.start[i], o.x[i])
		x, v, y, g, m := o.x[i], o.v[i], o.y[i], o.g[i], o.m[i]
		for tau := 0; tau < r.K; tau++ {
			if err := r.Grad(i, tau, x, g); err != nil {
				return err
			}
			if r.T == 0 && tau == 0 {
				// y^(0) is the first local step's gradient (Algorithm 2 input).
				copy(y, g)
				if o.cfg.TrackerInit == "unbiased" {
					copy(o.dPrev[i], g)
				}
			}
			for k := range m {
				m[k] = lambda*g[k] + (1-lambda)*y[k]
			}
			sumStep(x, v, m, eta, alpha, beta)
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
	scale := float32(1 / (float64(r.K) * r.LR))
	parallel(len(o.x), func(i int) {
		start, x, y, dPrev, t := o.start[i], o.x[i], o.y[i], o.dPrev[i], o.track[i]
		for k := range t {
			d := (start[k] - x[k]) * scale
			t[k] = y[k] + d - dPrev[k]
			dPrev[k] = d
		}
	})
	r.Mix.Apply(o.mixY, o.track)
	o.y, o.mixY = o.mixY, o.y
	return nil
}
