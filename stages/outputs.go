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
	// Assignment is which samples each worker holds (every cell: columns
	// worker, sample, and with validation ValidationColumn);
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

// ValidationColumn is the assignment's column, in a cell with validation,
// that is 1 for the samples a worker holds out (0 for those it trains on).
const ValidationColumn = "validation"

// Columns are the columns of the rounds table (Rounds) of a cell of task,
// with validation or not, "round" first: the task's metrics (tasks.Kind),
// then the exchange's (codecs.Columns).
func Columns(task manifests.Task, validation bool) []string {
	kind := task.Kind()
	if validation {
		return slices.Concat(kind.Columns, kind.ValidationColumns, codecs.Columns)
	}
	return slices.Concat(kind.Columns, codecs.Columns)
}
