package algorithms

// dsum is D-SUM (paper Algorithm 1): SUM local steps, then gossip of x and v.
var dsum = &Rules{
	Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "v", FromX0: true}},
	Round: func(s Space, k int) {
		restartRound(s)
		s.Steps(k, func(tau int) {
			sumStep(s, Gradient(s, tau))
		})
		s.Set("x", s.Mix("x", s.Get("x")))
		s.Set("v", s.Mix("v", s.Get("v")))
	},
}
