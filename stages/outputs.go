package stages

import (
	"slices"

	"github.com/ump-lab/ump/codecs"
	"github.com/ump-lab/ump/manifests"
)

// The stages' names, and the outputs that readers of a store name (state,
// report, the dashboard, the CLI): declared here, below the stages that
// write them, so that a reader need not link the engines.
const (
	Partition = "partition"
	Topology  = "topology"
	Train     = "train"
	Evaluate  = "evaluate"
)

var (
	// Assignment is which samples each worker holds (every cell);
	// Histogram the per-worker class counts (data sets only).
	Assignment = Output{Stage: Partition, Name: "assignment"}
	Histogram  = Output{Stage: Partition, Name: "histogram"}
	// Mixing is the mixing matrices' table.
	Mixing = Output{Stage: Topology, Name: "mixing"}
	// Rounds is the metrics of every evaluated round (Columns);
	// LastCheckpoint the final training state.
	Rounds         = Output{Stage: Train, Name: "rounds"}
	LastCheckpoint = Output{Stage: Train, Name: "checkpoint"}
	// Final is the final figures.
	Final = Output{Stage: Evaluate, Name: "final"}
)

// Columns are the columns of a cell's rounds table (Rounds), "round"
// first: its task's metrics, then the exchange's (codecs.Columns).
func Columns(cfg *manifests.Manifest) []string {
	if cfg.Task.Dataset == "quadratic" {
		return slices.Concat(quadraticColumns, codecs.Columns)
	}
	if cfg.Validation != nil {
		return slices.Concat(neuralColumns, validationColumns, codecs.Columns)
	}
	return slices.Concat(neuralColumns, codecs.Columns)
}

// neuralColumns are the metric columns of a data-set cell. test_* score
// each worker's local model on the whole test split (the paper reports
// test_acc_mean; std is over workers, ddof 0); consensus_* score the
// average of the workers' parameters.
var neuralColumns = []string{"round", "train_loss", "test_loss_mean", "test_acc_mean", "test_acc_std",
	"test_acc_min", "test_acc_max", "consensus_loss", "consensus_acc", "consensus_distance"}

// validationColumns are the metric columns of a cell with validation: each
// worker's local model scored on the samples all workers hold out, the
// mean over workers (what tuning reads instead of the test split).
var validationColumns = []string{"val_loss_mean", "val_acc_mean"}

// quadraticColumns are the metric columns of the quadratic task.
var quadraticColumns = []string{"round", "train_loss", "consensus_distance", "objective_gap", "grad_norm_sq"}
