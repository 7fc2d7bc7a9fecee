package algorithms

// dpsgd is D-PSGD: K plain SGD steps, then gossip.
var dpsgd = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}},
	Round: func(s Space, k int) {
		s.Steps(k, func(tau int) {
			g := Gradient(s, tau)
			s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(lr), g)))
		})
		s.Set("x", s.Mix("x", s.Get("x")))
	},
}

// localMomentumSteps are DSGDm's local steps: heavy-ball or Nesterov
// momentum in m, which stays local.
func localMomentumSteps(s Space, k int) {
	s.Steps(k, func(tau int) {
		momentumStep(s, Gradient(s, tau), "m", s.Num(param("beta")), s.Flag(isTrue("nesterov")))
	})
}

// dsgdm is DSGDm: local momentum steps, then gossip.
var dsgdm = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "m"}},
	Round: func(s Space, k int) {
		localMomentumSteps(s, k)
		s.Set("x", s.Mix("x", s.Get("x")))
	},
}

// localSGDM is Local SGD with momentum: DSGDm's local steps, then an exact
// average (an all-reduce) whatever the topology.
var localSGDM = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "m"}, {Name: "start", Scratch: true}},
	Round: func(s Space, k int) {
		s.Set("start", s.Get("x"))
		localMomentumSteps(s, k)
		s.Set("x", s.Average("x", s.Get("x"), s.Get("start")))
	},
}

// qgdsgdm is QG-DSGDm (Lin et al. 2021): local steps along the
// quasi-global momentum m_hat, gossip of x, then
// m_hat = mu m_hat + (1-mu) dx with dx the round's displacement per unit
// of K eta.
var qgdsgdm = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "m_hat"}, {Name: "start", Scratch: true}},
	Round: func(s Space, k int) {
		s.Set("start", s.Get("x"))
		beta := s.Num(param("beta"))
		s.Steps(k, func(tau int) {
			g := Gradient(s, tau)
			mt := s.Add(s.Scale(beta, s.Get("m_hat")), g)
			d := s.Select(s.Flag(isTrue("nesterov")), s.Add(g, s.Scale(beta, mt)), mt)
			s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(lr), d)))
		})
		x := s.Mix("x", s.Get("x"))
		s.Set("x", x)
		dx := s.Scale(s.Num(perKLR), s.Sub(s.Get("start"), x))
		s.Set("m_hat", s.Add(s.Scale(s.Num(param("mu")), s.Get("m_hat")), s.Scale(s.Num(oneMinus("mu")), dx)))
	},
}

// slowmo is SlowMo (Wang et al. 2020) over local momentum SGD: K base
// steps, an exact average xbar, then the slow momentum update
// u = slow_beta u + (x_old - xbar)/eta; x_old -= slow_alpha eta u, and every
// worker restarts from x_old. x_old is the round's start, the same on every
// worker; u is kept per worker (identical copies).
var slowmo = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "m"}, {Name: "u"}, {Name: "start", Scratch: true}},
	Round: func(s Space, k int) {
		s.Set("start", s.Get("x"))
		never := s.Flag(func(Config, At) bool { return false })
		s.Steps(k, func(tau int) {
			momentumStep(s, Gradient(s, tau), "m", s.Num(param("base_beta")), never)
		})
		start := s.Get("start")
		xbar := s.Average("x", s.Get("x"), start)
		perLR := s.Num(func(_ Config, at At) float32 { return float32(1 / at.LR) })
		u := s.Add(s.Scale(s.Num(param("slow_beta")), s.Get("u")), s.Scale(perLR, s.Sub(start, xbar)))
		slowAlphaEta := s.Num(
			func(c Config, at At) float32 { return float32(c.Params.Float("slow_alpha")) * float32(at.LR) },
		)
		s.Set("u", u)
		s.Set("x", s.Sub(start, s.Scale(slowAlphaEta, u)))
	},
}

// dsgt is decentralized stochastic gradient tracking (one local step per
// round): x = mix(X - eta Y); y = mix(Y) + g_new - g_old; y0 = g(x0).
// Between rounds y holds mix(Y); the round's gradient completes it.
var dsgt = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "y"}, {Name: "g_prev"}},
	Round: func(s Space, k int) {
		s.Steps(k, func(tau int) {
			g := Gradient(s, tau)
			y := s.Select(s.Flag(firstRound), g, s.Sub(s.Add(s.Get("y"), g), s.Get("g_prev")))
			s.Set("y", y)
			s.Set("g_prev", g)
			s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(lr), y)))
		})
		s.Set("x", s.Mix("x", s.Get("x")))
		s.Set("y", s.Mix("y", s.Get("y")))
	},
}

// d2 is D^2 / exact diffusion (one local step per round): first round
// x1 = mix(X0 - eta G0), then x_{t+1} = mix(2 x_t - x_{t-1} - eta (g_t - g_{t-1})).
var d2 = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "x_prev"}, {Name: "g_prev"}},
	Round: func(s Space, k int) {
		s.Steps(k, func(tau int) {
			g := Gradient(s, tau)
			x, eta := s.Get("x"), s.Num(lr)
			two := s.Num(func(Config, At) float32 { return 2 })
			later := s.Sub(s.Sub(s.Scale(two, x), s.Get("x_prev")), s.Scale(eta, s.Sub(g, s.Get("g_prev"))))
			s.Set("x", s.Select(s.Flag(firstRound), s.Sub(x, s.Scale(eta, g)), later))
			s.Set("x_prev", x)
			s.Set("g_prev", g)
		})
		s.Set("x", s.Mix("x", s.Get("x")))
	},
}
