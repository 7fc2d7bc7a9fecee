package main

import (
	"io"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
)

// The composition root: ump builds the stages and the engines they train
// on here, and hands them to the runner, which links neither.

// cellStages are the stages every cell runs, in order.
func (g globals) cellStages() []stages.Stage {
	return []stages.Stage{stages.Of(partition.Stage{}), stages.Of(topology.Stage{}),
		stages.Of(train.Stage{Engines: g.engines()}), stages.Of(evaluate.Stage{})}
}

// engines are this machine's engines, the GPU engine on the device of
// the global flags.
func (g globals) engines() engines.Set {
	return engines.Set{Device: g.device, Exact: g.exact}
}

// runner runs cells on a store's log and blobs (set Blobs again if the
// store's change), with the stages, their engines (on the device of the
// global flags) and the data sets.
func (g globals) runner(store *pipeline.Store, progress io.Writer) *pipeline.Runner {
	return &pipeline.Runner{Log: store.Log, Blobs: store.Blobs, Dir: store.Path, Stages: g.cellStages(),
		Engines: g.engines(), Data: g.data, Progress: progress}
}
