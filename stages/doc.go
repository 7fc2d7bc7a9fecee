// Package stages defines the one contract every pipeline stage implements,
// and the subpackages implement it: partition, topology, train, evaluate
// (compress is train's communication layer, not a stage of its own).
//
// Data model: a Step turns its params (a struct of its own type holding
// exactly what it reads of the cell's configuration) and the upstream
// outputs it declares (Inputs, each a stage and output name) into a
// Result: named artifact refs (blobs in the store) among its declared
// Outputs, and a small JSON summary. Of makes a Step the Stage the runner
// drives, its params as canonical JSON; the pipeline hashes them and every
// upstream output into the stage's cache key and hands Run exactly those
// params and declared inputs (Env.Upstream): a stage cannot read anything
// else of the cell. A FormerlyKeyed Step names the params an earlier ump keyed
// it by, so that results recorded then still serve. The stages' names, their outputs that readers of a store name
// (Rounds, Final, ...) and the rounds table's columns are declared here,
// below the stages, so that readers (state, report, the dashboard) do not
// link the engines that write them.
//
// Imports: artifacts, codecs, datasets, manifests, record.
package stages
