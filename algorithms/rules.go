package algorithms

// Rules is an algorithm's one definition: the vectors each worker keeps
// and what a round does to them, written against a Space. The CPU engine
// runs it on []float32 (New); the GPU cohort runs it over graph nodes to
// build its round program.
type Rules struct {
	// Vectors are every worker's vectors, "x" (the parameters) first.
	Vectors []Vector
	// Round is one round of k local steps and the communication. It
	// branches only on k and its step indices: every number and condition
	// that depends on the parameters or the round comes from s.Num and
	// s.Flag, so one program serves cells that differ in them.
	Round func(s Space, k int)
}

// kept are the vectors checkpoints hold: all but scratch ones, x first.
func (r *Rules) kept() []string {
	var out []string
	for _, v := range r.Vectors {
		if !v.Scratch {
			out = append(out, v.Name)
		}
	}
	return out
}

// Vector declares one of an algorithm's per-worker vectors.
type Vector struct {
	Name string
	// FromX0: it starts at the common initial parameters x0; otherwise at
	// zero.
	FromX0 bool
	// Scratch: it holds a value within a round only (the round's start, a
	// running sum), so checkpoints leave it out.
	Scratch bool
}

// At is the round a definition's numbers are computed for.
type At struct {
	T  int     // the round, from 0
	K  int     // local steps
	LR float64 // eta of the round
}

// Vec, Num and Flag are a Space's values (one vector per worker, one
// number and one condition per cell) as handles: Ref numbers a value the
// Space that made it holds, which only that Space reads.
type (
	Vec  struct{ Ref int }
	Num  struct{ Ref int }
	Flag struct{ Ref int }
)

// Space is the vector algebra definitions are written in. Values are
// immutable; Set binds a name to a value, Get reads the latest binding.
// Arithmetic is elementwise float32, each operation rounded on its own,
// so every Space computes the same numbers.
//
// On the CPU, a vector value read before a call of Grad is gone after it:
// read the state again with Get.
type Space interface {
	Get(name string) Vec
	Set(name string, v Vec)
	// Steps runs step(tau) for tau = 0..k-1, in order: a round's local
	// steps. A step must not branch on tau (FirstStep gives what differs
	// at the first step): the GPU's round program runs every step as one
	// loop over a single body.
	Steps(k int, step func(tau int))
	// Grad is every worker's mean mini-batch gradient at "x" (as Set so
	// far) for local step tau, without weight decay (see Gradient).
	Grad(tau int) Vec
	// Num and Flag are a number and a condition computed on the host
	// from the cell's configuration and the round.
	Num(f func(c Config, at At) float32) Num
	Flag(f func(c Config, at At) bool) Flag
	// FirstStep is f during the round's first local step and false during
	// the others (and outside Steps).
	FirstStep(f Flag) Flag
	Add(a, b Vec) Vec
	Sub(a, b Vec) Vec
	Scale(n Num, a Vec) Vec // n a
	Div(a Vec, n Num) Vec   // a / n
	Select(f Flag, a, b Vec) Vec
	Zero() Vec
	// Mix is the gossip of a value of vector name under the round's
	// mixing matrix (compressed, when the round's Comm is).
	Mix(name string, v Vec) Vec
	// Average is the exact mean over workers of a value of vector name;
	// from is the workers' common value at the round's start.
	Average(name string, v, from Vec) Vec
}

// param is the number of a float parameter.
func param(name string) func(Config, At) float32 {
	return func(c Config, _ At) float32 { return float32(c.Params.Float(name)) }
}

// oneMinus is 1 - a float parameter, in float32.
func oneMinus(name string) func(Config, At) float32 {
	return func(c Config, _ At) float32 { return 1 - float32(c.Params.Float(name)) }
}

// lr is the round's learning rate.
func lr(_ Config, at At) float32 { return float32(at.LR) }

// perKLR is 1 / (K eta): a round's displacement per unit of its steps.
func perKLR(_ Config, at At) float32 { return float32(1 / (float64(at.K) * at.LR)) }

// is says whether a choice parameter has the value choice.
func is(name, choice string) func(Config, At) bool {
	return func(c Config, _ At) bool { return c.Params.String(name) == choice }
}

// isTrue is a boolean parameter.
func isTrue(name string) func(Config, At) bool {
	return func(c Config, _ At) bool { return c.Params.Bool(name) }
}

// firstRound holds in round 0.
func firstRound(_ Config, at At) bool { return at.T == 0 }

// Gradient is g_i = grad F_i(x_i; batch) + wd x_i at local step tau (the
// spec's g_i): what a definition's local step reads.
func Gradient(s Space, tau int) Vec {
	g := s.Grad(tau)
	decays := s.Flag(func(c Config, _ At) bool { return c.WeightDecay != 0 })
	wd := s.Num(func(c Config, _ At) float32 { return float32(c.WeightDecay) })
	return s.Select(decays, s.Add(g, s.Scale(wd, s.Get("x"))), g)
}

// sumStep is one SUM update (paper eq. sum) of x and v with direction d:
// u = x - eta d; vn = x - alpha eta d; x = u + beta (vn - v); v = vn.
// momentum_restart: v = x before the step where it says "step".
func sumStep(s Space, d Vec) {
	x, v := s.Get("x"), s.Get("v")
	v = s.Select(s.Flag(is("momentum_restart", "step")), x, v)
	alphaEta := s.Num(func(c Config, at At) float32 { return float32(c.Params.Float("alpha")) * float32(at.LR) })
	u := s.Sub(x, s.Scale(s.Num(lr), d))
	vn := s.Sub(x, s.Scale(alphaEta, d))
	s.Set("x", s.Add(u, s.Scale(s.Num(param("beta")), s.Sub(vn, v))))
	s.Set("v", vn)
}

// restartRound restarts SUM's v at x at the round's start where
// momentum_restart says "round".
func restartRound(s Space) {
	s.Set("v", s.Select(s.Flag(is("momentum_restart", "round")), s.Get("x"), s.Get("v")))
}

// momentumStep is one local momentum-SGD step on x with buffer m and
// momentum b: m = b m + g; x -= eta (m, or g + b m with Nesterov).
func momentumStep(s Space, g Vec, m string, b Num, nesterov Flag) {
	mm := s.Add(s.Scale(b, s.Get(m)), g)
	s.Set(m, mm)
	s.Set("x", s.Sub(s.Get("x"), s.Scale(s.Num(lr), s.Select(nesterov, s.Add(g, s.Scale(b, mm)), mm))))
}
