package algorithms

import (
	"fmt"
	"runtime"
	"sync"
)

// Config selects an optimizer and its parameters (spec/algorithms.md).
// Parameters an algorithm does not take are ignored.
type Config struct {
	Name        string
	Alpha       float64 // d-sum, gt-dsum
	Beta        float64 // d-sum, gt-dsum, dsgdm, local-sgd-m, qg-dsgdm
	Lambda      float64 // gt-dsum
	TrackerInit string  // gt-dsum: "paper" or "unbiased"
	Nesterov    bool    // dsgdm, local-sgd-m, qg-dsgdm
	Mu          float64 // qg-dsgdm: the quasi-global buffer's averaging weight
	BaseBeta    float64 // slowmo: local momentum of the base optimizer
	SlowBeta    float64 // slowmo
	SlowAlpha   float64 // slowmo
	WeightDecay float64 // every algorithm: g = grad + wd * x
}

// Names lists the algorithms New builds.
var Names = []string{"d-sum", "gt-dsum", "dpsgd", "dsgdm", "local-sgd-m", "qg-dsgdm", "slowmo", "dsgt", "d2"}

// OneLocalStep lists the algorithms defined for K = 1 only.
var OneLocalStep = []string{"dsgt", "d2"}

// Grads writes, for every worker i, the stochastic gradient at x[i] into
// g[i] for local step `step` (0..K-1) of the round. It is called once per
// local step with all workers, so an engine can batch them.
type Grads func(step int, x, g [][]float32) error

// Round is what one round of an optimizer needs.
type Round struct {
	T    int     // round index, from 0
	K    int     // local steps
	LR   float64 // eta for this round
	Grad Grads
	Mix  Mixing
	Comm Comm // nil: exact communication
}

// Optimizer advances n workers round by round.
type Optimizer interface {
	// Round runs K local steps on every worker, then communication.
	Round(r *Round) error
	// X returns the workers' parameters; the optimizer owns them.
	X() [][]float32
	// State returns every state vector by name, each n workers long, for
	// checkpoints. The slices are the optimizer's own: writing them
	// restores a checkpoint.
	State() map[string][][]float32
}

// New returns the optimizer cfg names, for n workers starting at x0, after
// checking its parameters.
func New(cfg Config, n int, x0 []float32) (Optimizer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	switch cfg.Name {
	case "d-sum":
		return newDSUM(cfg, n, x0), nil
	case "gt-dsum":
		return newGTDSUM(cfg, n, x0), nil
	case "dpsgd":
		return newLocalMomentum(cfg, n, x0, false, false), nil
	case "dsgdm":
		return newLocalMomentum(cfg, n, x0, true, false), nil
	case "local-sgd-m":
		return newLocalMomentum(cfg, n, x0, true, true), nil
	case "qg-dsgdm":
		return newQGDSGDm(cfg, n, x0), nil
	case "slowmo":
		return newSlowMo(cfg, n, x0), nil
	case "dsgt":
		return newDSGT(cfg, n, x0), nil
	case "d2":
		return newD2(cfg, n, x0), nil
	}
	return nil, fmt.Errorf("unknown algorithm %q; use one of %v", cfg.Name, Names)
}

// check validates the parameters the named algorithm takes.
func (c Config) check() error {
	in := func(name string, v, lo, hi float64, hiOpen bool) error {
		if v < lo || v > hi || (hiOpen && v == hi) || v != v {
			closing := "]"
			if hiOpen {
				closing = ")"
			}
			return fmt.Errorf("%s: %s = %g is out of range; use a number in [%g, %g%s", c.Name, name, v, lo, hi, closing)
		}
		return nil
	}
	var errs []error
	switch c.Name {
	case "d-sum", "gt-dsum":
		if !(c.Alpha >= 0) {
			errs = append(errs, fmt.Errorf("%s: alpha = %g is out of range; use a number >= 0", c.Name, c.Alpha))
		}
		errs = append(errs, in("beta", c.Beta, 0, 1, true))
		if c.Name == "gt-dsum" {
			errs = append(errs, in("lambda", c.Lambda, 0, 1, false))
			if c.TrackerInit != "paper" && c.TrackerInit != "unbiased" {
				errs = append(errs, fmt.Errorf("gt-dsum: tracker_init %q: use paper or unbiased", c.TrackerInit))
			}
		}
	case "dsgdm", "local-sgd-m":
		errs = append(errs, in("beta", c.Beta, 0, 1, true))
	case "qg-dsgdm":
		errs = append(errs, in("beta", c.Beta, 0, 1, true), in("mu", c.Mu, 0, 1, true))
	case "slowmo":
		errs = append(errs, in("base_beta", c.BaseBeta, 0, 1, true), in("slow_beta", c.SlowBeta, 0, 1, true))
		if !(c.SlowAlpha > 0) {
			errs = append(errs, fmt.Errorf("slowmo: slow_alpha = %g is out of range; use a number > 0", c.SlowAlpha))
		}
	}
	if !(c.WeightDecay >= 0) {
		errs = append(errs, fmt.Errorf("%s: weight_decay = %g is out of range; use a number >= 0", c.Name, c.WeightDecay))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gradients fills g with every worker's gradient at x for local step tau,
// plus weight decay.
func gradients(r *Round, tau int, wd float64, x, g [][]float32) error {
	if err := r.Grad(tau, x, g); err != nil {
		return fmt.Errorf("local step %d: %w", tau+1, err)
	}
	if wd != 0 {
		w := float32(wd)
		Parallel(len(x), func(i int) {
			for k, v := range x[i] {
				g[i][k] += w * v
			}
		})
	}
	return nil
}

// localSteps runs the round's K local steps: at each, every worker's
// gradient at its current x, then update(i, tau) on every worker in
// parallel.
func localSteps(r *Round, wd float64, x, g [][]float32, update func(i, tau int)) error {
	for tau := 0; tau < r.K; tau++ {
		if err := gradients(r, tau, wd, x, g); err != nil {
			return err
		}
		Parallel(len(x), func(i int) { update(i, tau) })
	}
	return nil
}

// requireOneStep is the error of an algorithm defined for K = 1 only.
func requireOneStep(name string, k int) error {
	if k != 1 {
		return fmt.Errorf("%s takes exactly one local step per round; got local_steps %d (use local_steps: 1)", name, k)
	}
	return nil
}

// vectors returns n copies of x0 (or zeros when x0 is nil) of length dim.
func vectors(n, dim int, x0 []float32) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		copy(out[i], x0)
	}
	return out
}

// copyAll copies every worker's src into dst.
func copyAll(dst, src [][]float32) {
	Parallel(len(dst), func(i int) { copy(dst[i], src[i]) })
}

// Parallel runs f(0..n-1) on up to GOMAXPROCS goroutines.
func Parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// sumStep applies one SUM update (paper eq. sum) with direction g:
// u = x - eta g; vn = x - alpha eta g; x = u + beta (vn - v); v = vn.
func sumStep(x, v, g []float32, eta, alpha, beta float32) {
	for k := range x {
		u := x[k] - eta*g[k]
		vn := x[k] - alpha*eta*g[k]
		x[k] = u + beta*(vn-v[k])
		v[k] = vn
	}
}

// momentumStep applies one local momentum-SGD step: m = beta m + g;
// x -= eta (m, or g + beta m with Nesterov).
func momentumStep(x, m, g []float32, eta, beta float32, nesterov bool) {
	for k := range x {
		m[k] = beta*m[k] + g[k]
		d := m[k]
		if nesterov {
			d = g[k] + beta*m[k]
		}
		x[k] -= eta * d
	}
}
