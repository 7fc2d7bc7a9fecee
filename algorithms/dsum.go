package algorithms

import "github.com/ump-lab/ump/kinds"

// dsum is D-SUM (paper Algorithm 1): SUM local steps, then gossip of x and v.
var dsum = kinds.Kind[*Rules]{Name: "d-sum", Doc: "D-SUM (paper Algorithm 1): SUM local steps, gossip of x and v",
	Params: []kinds.Param{alpha, beta, restart},
	New: &Rules{
		Vectors: []Vector{{Name: "x", FromX0: true}, {Name: "v", FromX0: true}},
		Round: func(s Space, k int) {
			restartRound(s)
			s.Steps(k, func(tau int) {
				sumStep(s, Gradient(s, tau))
			})
			s.Set("x", s.Mix("x", s.Get("x")))
			s.Set("v", s.Mix("v", s.Get("v")))
		},
	}}
