package gpu

import (
	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/nn"
)

// Cohort trains cells that share their shapes on one device in lockstep
// (the GPU engine; NewCohort builds one). Calls must not overlap.
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
	Local             []nn.Score
	Consensus         nn.Score
	ConsensusDistance float64
}

// CellBytes is the device memory one cell of a cohort takes during a
// round, by the round program's arithmetic (not a measurement; on a GPU
// `make bench-gpu` prints the compiled program's own figures). The local
// steps are a loop, so one step's activations are live at a time: per
// sample its input, every layer's output (the backward pass reads them),
// a padded convolution's padded input, the unfolded patches of a
// convolution of several input channels (one-channel ones are shifted
// multiply-adds, without patches), a dropout mask, and two gradients in
// flight (the largest layer's size, twice). Per worker: the state
// vectors twice (the round's inputs and outputs), its scratch vectors,
// and two more (a step's gradient and an update being formed).
func CellBytes(m *nn.Model, algorithm string, workers, batch int) int64 {
	perSample, largest := m.Shapes[0].Size(), 0
	for i, l := range m.Layers {
		in, out := m.Shapes[i], m.Shapes[i+1]
		perSample += out.Size()
		largest = max(largest, out.Size())
		switch l := l.(type) {
		case nn.Conv2d:
			if l.Pad > 0 {
				perSample += in.C * (in.H + 2*l.Pad) * (in.W + 2*l.Pad)
			}
			if in.C > 1 {
				perSample += in.C * l.K * l.K * out.H * out.W
			}
		case nn.Dropout:
			perSample += out.Size()
		}
	}
	perSample += 2 * largest
	vectors := 2
	if kind, ok := algorithms.Family.Lookup(algorithm); ok {
		for _, v := range kind.New.Vectors {
			if v.Scratch {
				vectors++
			} else {
				vectors += 2
			}
		}
	}
	return 4 * (int64(workers)*int64(batch)*int64(perSample) + int64(vectors)*int64(workers)*int64(m.Params))
}
