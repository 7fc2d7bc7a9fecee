package algorithms

// gtdsum is GT-DSUM (paper Algorithm 2): SUM local steps along
// m = lambda g + (1-lambda) y, gossip of x and v, then the tracker's
// update y = mix(y + d - d_prev), d_prev = d, with d as the tracker
// reading defines it (docs/algorithms.md): the round's displacement
// (start - x) / (K eta) after gossip, that times 1 - beta, or the round's
// mean g or m (kept in the scratch vector sum).
var gtdsum = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "v", FromX0: true}, {Name: "y"}, {Name: "d_prev"},
		{Name: "start", Scratch: true}, {Name: "sum", Scratch: true}},
	Round: func(s Space, k int) {
		sums := s.Flag(
			func(c Config, _ At) bool { t := c.Params.String("tracker"); return t == "gradient" || t == "direction" },
		)
		s.Set("start", s.Get("x"))
		s.Set("sum", s.Select(sums, s.Zero(), s.Get("sum")))
		restartRound(s)
		s.Steps(k, func(tau int) {
			g := Gradient(s, tau)
			y := s.Get("y")
			// y^(0) is the first local step's gradient (Algorithm 2 input)
			first := s.FirstStep(s.Flag(firstRound))
			unbiased := s.FirstStep(
				s.Flag(
					func(c Config, at At) bool { return at.T == 0 && c.Params.String("tracker_init") == "unbiased" },
				),
			)
			y = s.Select(first, g, y)
			s.Set("y", y)
			s.Set("d_prev", s.Select(unbiased, g, s.Get("d_prev")))
			m := s.Add(s.Scale(s.Num(param("lambda")), g), s.Scale(s.Num(oneMinus("lambda")), y))
			s.Set(
				"sum",
				s.Select(sums, s.Add(s.Get("sum"), s.Select(s.Flag(is("tracker", "direction")), m, g)), s.Get("sum")),
			)
			sumStep(s, m)
		})
		x := s.Mix("x", s.Get("x"))
		s.Set("x", x)
		s.Set("v", s.Mix("v", s.Get("v")))
		perUnit := s.Num(func(c Config, at At) float32 {
			scale := perKLR(c, at)
			if c.Params.String("tracker") == "normalized" {
				scale *= 1 - float32(c.Params.Float("beta"))
			}
			return scale
		})
		k32 := s.Num(func(_ Config, at At) float32 { return float32(at.K) })
		d := s.Select(sums, s.Div(s.Get("sum"), k32), s.Scale(perUnit, s.Sub(s.Get("start"), x)))
		s.Set("y", s.Mix("y", s.Sub(s.Add(s.Get("y"), d), s.Get("d_prev"))))
		s.Set("d_prev", d)
	},
}
