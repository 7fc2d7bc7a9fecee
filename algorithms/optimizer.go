package algorithms

import (
	"fmt"
	"maps"
	"runtime"
	"sync"

	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/optimizers"
)

// Config selects an optimizer and its parameters (docs/algorithms.md):
// Params as Family declares them for the named algorithm; missing ones
// take their defaults.
type Config struct {
	Name        string
	Params      kinds.Values
	WeightDecay float64 // every algorithm: g = grad + wd * x
}

// Family binds every algorithm optimizers.Family declares to its
// definition, each in its own file.
var Family = kinds.Bind(&optimizers.Family, map[string]*Rules{
	"d-sum": dsum, "gt-dsum": gtdsum, "dpsgd": dpsgd, "dsgdm": dsgdm, "local-sgd-m": localSGDM, "qg-dsgdm": qgdsgdm,
	"slowmo": slowmo, "dsgt": dsgt, "d2": d2,
})

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
// filling its parameters' defaults and checking them.
func New(cfg Config, n int, x0 []float32) (Optimizer, error) {
	k, ok := Family.Lookup(cfg.Name)
	if !ok {
		return nil, fmt.Errorf("unknown algorithm %q; use one of %v", cfg.Name, Family.Names())
	}
	cfg = cfg.WithDefaults()
	if d, ok := optimizers.Family.Lookup(cfg.Name); ok { // its parameters' declaration (a test's rules may have none)
		if problems := d.ValidateParams(cfg.Params); len(problems) > 0 {
			return nil, fmt.Errorf("%s: %s: %s", cfg.Name, problems[0].Param, problems[0].Msg)
		}
	}
	if !(cfg.WeightDecay >= 0) {
		return nil, fmt.Errorf("%s: weight_decay = %g is out of range; use a number >= 0", cfg.Name, cfg.WeightDecay)
	}
	return newCPU(cfg, k, n, x0), nil
}

// WithDefaults returns cfg with a copy of its parameters in which every
// parameter the algorithm takes (optimizers.Family) and cfg lacks has its
// default.
func (cfg Config) WithDefaults() Config {
	if k, ok := optimizers.Family.Lookup(cfg.Name); ok {
		cfg.Params = k.WithDefaults(cfg.Params, kinds.Cell{})
	} else {
		cfg.Params = maps.Clone(cfg.Params)
	}
	return cfg
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
