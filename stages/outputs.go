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
// first: its task's metrics (tasks.Kind), then the exchange's
// (codecs.Columns).
func Columns(cfg *manifests.Manifest) []string {
	kind := cfg.Task.Kind()
	if cfg.Validation != nil {
		return slices.Concat(kind.Columns, kind.ValidationColumns, codecs.Columns)
	}
	return slices.Concat(kind.Columns, codecs.Columns)
}
