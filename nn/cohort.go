package nn

import "github.com/ump-lab/ump/algorithms"

// Cohort trains cells that share their shapes on one device in lockstep
// (the GPU engine: gpu.NewCohort builds one). Calls must not overlap.
type Cohort interface {
	// Round runs one round of every cell; cells[c] is cell slot c. It
	// returns each cell's per-worker, per-step mean mini-batch losses
	// (worker-major) and whether all of the cell's parameters are finite.
	Round(cells []CellRound) (losses [][]float64, finite []bool, err error)
	// Evaluate scores every cell's local models and average model on the
	// test split.
	Evaluate() ([]CellScores, error)
	// EvaluateCell scores one cell's (costing about 1/Cells of Evaluate).
	EvaluateCell(c int) (CellScores, error)
	// State downloads cell c's state vectors by name, each [workers][Params].
	State(c int) (map[string][][]float32, error)
	// SetState uploads cell c's state vectors (a checkpoint's, or the
	// optimizer's initial state).
	SetState(c int, vectors map[string][][]float32) error
	// Close frees the device memory.
	Close()
}

// CohortShape is what the cells of a cohort share: everything that fixes
// the program's shapes and its update rule.
type CohortShape struct {
	Model      string
	Algorithm  string
	Cells      int
	Workers    int
	LocalSteps int
	Batch      int
	// Exact: the program adds every sum in the CPU engine's order
	// (docs/gpu.md), so its numbers have the CPU engine's bits.
	Exact bool
}

// CellRound is one cell's part of a round.
type CellRound struct {
	// Active: a frozen cell (diverged, finished, or an empty slot) keeps
	// its state; nothing else of it is read.
	Active bool
	Config algorithms.Config // the algorithm's parameters (Name is the cohort's)
	Seed   uint64            // the cell's seed: names its dropout streams
	Round  int               // from 0
	LR     float64
	Mix    algorithms.Mixing
	// Batches[i][k] are worker i's sample indices at local step k.
	Batches [][][]int
}

// CellScores is one cell's evaluation: each worker's local model and the
// average model on the test split, and mean_i |x_i - xbar|^2.
type CellScores struct {
	Local             []Score
	Consensus         Score
	ConsensusDistance float64
}

// Average is mean_i x_i in float64, summed with i ascending from +0 and
// divided by the number of workers: the average model, rounded to
// float32, is the one a cell's consensus scores are of.
func Average(x [][]float32) []float64 {
	xbar := make([]float64, len(x[0]))
	for i := range x {
		for k, v := range x[i] {
			xbar[k] += float64(v)
		}
	}
	for k := range xbar {
		xbar[k] /= float64(len(x))
	}
	return xbar
}

// ConsensusDistance is mean_i |x_i - xbar|^2, its terms added in float64
// worker by worker, parameter by parameter, from +0.
func ConsensusDistance(x [][]float32, xbar []float64) float64 {
	cd := 0.0
	for i := range x {
		for k, v := range x[i] {
			d := float64(v) - xbar[k]
			cd += float64(d * d)
		}
	}
	return cd / float64(len(x))
}
