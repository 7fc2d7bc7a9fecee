package optimizers

import (
	"fmt"

	"github.com/ump-lab/ump/kinds"
)

// The parameters, shared by the algorithms that take them.
var (
	alpha = kinds.Param{
		Name:    "alpha",
		Type:    kinds.Float,
		Range:   "[0, inf)",
		Default: 2.0,
		Doc:     "SUM's step to the momentum",
	}
	beta   = kinds.Param{Name: "beta", Type: kinds.Float, Range: "[0, 1)", Default: 0.9, Doc: "the momentum"}
	lambda = kinds.Param{
		Name:    "lambda",
		Type:    kinds.Float,
		Range:   "[0, 1]",
		Default: 0.8,
		Doc:     "the weight of the fresh gradient against the tracker",
	}
	trackerInit = kinds.Param{
		Name:    "tracker_init",
		Type:    kinds.String,
		Choices: []string{"paper", "unbiased"},
		Default: "paper",
		Doc:     "the first round's tracker",
	}
	// tracker and restart are readings of the paper (docs/algorithms.md);
	// Quiet keeps their defaults out of manifests' hashes and cell keys.
	tracker = kinds.Param{
		Name:    "tracker",
		Type:    kinds.String,
		Choices: []string{"displacement", "normalized", "gradient", "direction"},
		Default: "displacement",
		Quiet:   true,
		Doc: "what the tracker follows: the round's displacement (literal), it times 1-beta, the mean " +
			"gradient, or the mean direction",
	}
	restart = kinds.Param{Name: "momentum_restart", Type: kinds.String, Choices: []string{"none", "round", "step"},
		Default: "none", Quiet: true, Doc: "where SUM's auxiliary sequence v restarts at x: never, " +
			"at each round, before each step"}
	nesterov = kinds.Param{Name: "nesterov", Type: kinds.Bool, Default: false, Doc: "Nesterov momentum"}
	mu       = kinds.Param{
		Name:      "mu",
		Type:      kinds.Float,
		Range:     "[0, 1)",
		Doc:       "the quasi-global buffer's averaging weight (default: beta)",
		DefaultOf: func(v kinds.Values, _ kinds.Cell) any { return v.Float("beta") },
	}
	baseBeta = kinds.Param{
		Name:    "base_beta",
		Type:    kinds.Float,
		Range:   "[0, 1)",
		Default: 0.0,
		Doc:     "the base optimizer's local momentum",
	}
	slowBeta = kinds.Param{
		Name:    "slow_beta",
		Type:    kinds.Float,
		Range:   "[0, 1)",
		Default: 0.5,
		Doc:     "the slow momentum",
	}
	slowAlpha = kinds.Param{
		Name:    "slow_alpha",
		Type:    kinds.Float,
		Range:   "(0, inf)",
		Default: 1.0,
		Doc:     "the slow learning rate",
	}
)

// oneLocalStep is the rule of the algorithms defined for K = 1 only.
func oneLocalStep(name string) func(kinds.Values, kinds.Cell) []kinds.Problem {
	return func(_ kinds.Values, c kinds.Cell) []kinds.Problem {
		if c.LocalSteps != 1 {
			return []kinds.Problem{
				{
					Cell: "local_steps",
					Msg: fmt.Sprintf(
						"%s takes exactly one local step per round; got %d (use local_steps: 1)",
						name,
						c.LocalSteps,
					),
				},
			}
		}
		return nil
	}
}

// Family declares every algorithm a manifest may name, with its
// parameters, in the order of ump help and docs/manifests.md; package
// algorithms binds each to its update rules.
var Family = kinds.Schema{Field: "algorithm", Key: "name", Kinds: []kinds.Kind[struct{}]{
	{
		Name:   "d-sum",
		Doc:    "D-SUM (paper Algorithm 1): SUM local steps, gossip of x and v",
		Params: []kinds.Param{alpha, beta, restart},
	},
	{
		Name:   "gt-dsum",
		Doc:    "GT-DSUM (paper Algorithm 2): SUM along lambda g + (1-lambda) y, gradient tracker y",
		Params: []kinds.Param{alpha, beta, lambda, trackerInit, tracker, restart},
	},
	{Name: "dpsgd", Doc: "D-PSGD: K SGD steps, gossip"},
	{
		Name:   "dsgdm",
		Doc:    "DSGDm: local heavy ball, gossip; momentum stays local",
		Params: []kinds.Param{beta, nesterov},
	},
	{
		Name:   "local-sgd-m",
		Doc:    "Local SGD with momentum: local steps as dsgdm, then an exact average",
		Params: []kinds.Param{beta, nesterov},
	},
	{
		Name:   "qg-dsgdm",
		Doc:    "QG-DSGDm: quasi-global momentum from the round's displacement",
		Params: []kinds.Param{beta, nesterov, mu},
	},
	{
		Name:   "slowmo",
		Doc:    "SlowMo: K SGD steps with base_beta momentum, exact average, slow momentum",
		Params: []kinds.Param{baseBeta, slowBeta, slowAlpha},
	},
	{Name: "dsgt", Doc: "gradient tracking (Pu & Nedic)", Check: oneLocalStep("dsgt")},
	{Name: "d2", Doc: "D2 / exact diffusion", Check: oneLocalStep("d2")},
}}
