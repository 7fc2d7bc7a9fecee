// Package stages defines the one contract every pipeline stage implements,
// and the subpackages implement it: partition, topology, train, evaluate
// (compress is train's communication layer, not a stage of its own).
//
// Data model: a Stage turns its Params (a value of its own type, taken
// from the cell's configuration) and the upstream outputs it declares
// (Inputs, each a stage and output name) into a Result: named artifact
// refs (blobs in the store) among its declared Outputs, and a small JSON
// summary. The pipeline hashes the params and every upstream output into
// the stage's cache key and hands Run exactly those params and declared
// inputs (Env.Params, Env.Upstream): a stage cannot read anything else of
// the cell. The stages' names, their outputs that readers of a store name
// (Rounds, Final, ...) and the rounds table's columns are declared here,
// below the stages, so that readers (state, report, the dashboard) do not
// link the engines that write them.
//
// Imports: artifacts, codecs, datasets, manifests, record.
package stages
