// Package stages defines the one contract every pipeline stage implements,
// and the subpackages implement it: partition, topology, train, evaluate
// (compress is train's communication layer, not a stage of its own).
//
// Data model: a Stage turns a cell's configuration plus its upstream
// stages' Results into a Result: named artifact refs (blobs in the store)
// and a small JSON summary. What a stage depends on is exactly its Params
// and its upstream outputs; the pipeline hashes both into the stage's cache
// key, so a stage must read nothing else.
//
// Lockstep lets the train stages of concurrently running GPU cells that
// share their shapes train as one device cohort: the runner reserves each
// cell's Seat, the train stage joins with it, and a round runs once every
// member has asked for it.
package stages
