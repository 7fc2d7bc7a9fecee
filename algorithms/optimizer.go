package algorithms

import (
	"fmt"
	"maps"
	"runtime"
	"sync"

	"github.com/ump-lab/ump/kinds"
)

// Config selects an optimizer and its parameters (spec/algorithms.md):
// Params as Family declares them for the named algorithm; missing ones
// take their defaults.
type Config struct {
	Name        string
	Params      kinds.Values
	WeightDecay float64 // every algorithm: g = grad + wd * x
}

// The parameters, shared by the algorithms that take them.
var (
	alpha       = kinds.Param{Name: "alpha", Type: kinds.Float, Range: "[0, inf)", Default: 2.0, Doc: "SUM's step to the momentum"}
	beta        = kinds.Param{Name: "beta", Type: kinds.Float, Range: "[0, 1)", Default: 0.9, Doc: "the momentum"}
	lambda      = kinds.Param{Name: "lambda", Type: kinds.Float, Range: "[0, 1]", Default: 0.8, Doc: "the weight of the fresh gradient against the tracker"}
	trackerInit = kinds.Param{Name: "tracker_init", Type: kinds.String, Choices: []string{"paper", "unbiased"}, Default: "paper", Doc: "the first round's tracker"}
	// tracker and restart are readings of the paper (spec/algorithms.md);
	// Quiet keeps their defaults out of manifests' hashes and cell keys.
	tracker = kinds.Param{Name: "tracker", Type: kinds.String, Choices: []string{"displacement", "normalized", "gradient", "direction"},
		Default: "displacement", Quiet: true, Doc: "what the tracker follows: the round's displacement (literal), it times 1-beta, the mean gradient, or the mean direction"}
	restart = kinds.Param{Name: "momentum_restart", Type: kinds.String, Choices: []string{"none", "round", "step"},
		Default: "none", Quiet: true, Doc: "where SUM's auxiliary sequence v restarts at x: never, at each round, before each step"}
	nesterov = kinds.Param{Name: "nesterov", Type: kinds.Bool, Default: false, Doc: "Nesterov momentum"}
	mu       = kinds.Param{Name: "mu", Type: kinds.Float, Range: "[0, 1)", Doc: "the quasi-global buffer's averaging weight (default: beta)",
		DefaultOf: func(v kinds.Values, _ kinds.Cell) any { return v.Float("beta") }}
	baseBeta  = kinds.Param{Name: "base_beta", Type: kinds.Float, Range: "[0, 1)", Default: 0.0, Doc: "the base optimizer's local momentum"}
	slowBeta  = kinds.Param{Name: "slow_beta", Type: kinds.Float, Range: "[0, 1)", Default: 0.5, Doc: "the slow momentum"}
	slowAlpha = kinds.Param{Name: "slow_alpha", Type: kinds.Float, Range: "(0, inf)", Default: 1.0, Doc: "the slow learning rate"}
)

// oneLocalStep is the rule of the algorithms defined for K = 1 only.
func oneLocalStep(name string) func(kinds.Values, kinds.Cell) []kinds.Problem {
	return func(_ kinds.Values, c kinds.Cell) []kinds.Problem {
		if c.LocalSteps != 1 {
			return []kinds.Problem{{Cell: "local_steps", Msg: fmt.Sprintf("%s takes exactly one local step per round; got %d (use local_steps: 1)", name, c.LocalSteps)}}
		}
		return nil
	}
}

// Family declares every algorithm, each in its own file with its
// definition; the order here is that of ump help and docs/manifests.md.
var Family = kinds.Family[*Rules]{Field: "algorithm", Key: "name",
	Kinds: []kinds.Kind[*Rules]{dsum, gtdsum, dpsgd, dsgdm, localSGDM, qgdsgdm, slowmo, dsgt, d2}}

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
	if problems := k.ValidateParams(cfg.Params); len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s: %s", cfg.Name, problems[0].Param, problems[0].Msg)
	}
	if !(cfg.WeightDecay >= 0) {
		return nil, fmt.Errorf("%s: weight_decay = %g is out of range; use a number >= 0", cfg.Name, cfg.WeightDecay)
	}
	return newCPU(cfg, k, n, x0), nil
}

// WithDefaults returns cfg with a copy of its parameters in which every
// parameter the algorithm takes and cfg lacks has its default.
func (cfg Config) WithDefaults() Config {
	if k, ok := Family.Lookup(cfg.Name); ok {
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
