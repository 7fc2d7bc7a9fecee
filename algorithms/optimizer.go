package algorithms

import (
	"fmt"
	"runtime"
	"sync"
)

// Config selects an optimizer and its parameters (spec/algorithms.md).
type Config struct {
	Name        string
	Alpha       float64
	Beta        float64
	Lambda      float64
	TrackerInit string // gt-dsum: "paper" or "unbiased"
}

// GradFunc writes worker's stochastic gradient at x into g. step is the
// local step within the round (0..K-1). Calls for different workers may run
// concurrently; calls for one worker never do.
type GradFunc func(worker, step int, x, g []float32) error

// Round is what one round of an optimizer needs.
type Round struct {
	T    int     // round index, from 0
	K    int     // local steps
	LR   float64 // eta for this round
	Grad GradFunc
	Mix  Mixing
}

// Optimizer advances n workers round by round.
type Optimizer interface {
	// Round runs K local steps on every worker, then communication.
	Round(r *Round) error
	// X returns the workers' parameters; the optimizer owns them.
	X() [][]float32
	// State returns every state vector by name, for checkpoints. The
	// slices are the optimizer's own: writing them restores a checkpoint.
	State() map[string][][]float32
}

// New returns the optimizer cfg names, for n workers starting at x0.
func New(cfg Config, n int, x0 []float32) (Optimizer, error) {
	switch cfg.Name {
	case "d-sum":
		return newDSUM(cfg, n, x0), nil
	case "gt-dsum":
		if cfg.TrackerInit != "paper" && cfg.TrackerInit != "unbiased" {
			return nil, fmt.Errorf("gt-dsum: tracker_init %q: use paper or unbiased", cfg.TrackerInit)
		}
		return newGTDSUM(cfg, n, x0), nil
	}
	return nil, fmt.Errorf("unknown algorithm %q", cfg.Name)
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

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
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

// parallelErr is parallel for functions that fail; it returns the error of
// the lowest-numbered failing call.
func parallelErr(n int, f func(i int) error) error {
	errs := make([]error, n)
	parallel(n, func(i int) { errs[i] = f(i) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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
