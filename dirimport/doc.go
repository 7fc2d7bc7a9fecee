// Package dirimport brings the finished cells of results directories
// (those `ump report` writes) into a store, as a pull brings them from S3:
// each cell under its key, with its events, its outputs' digests and its
// tables, signed by whoever signed it in the directory. A run in that
// store then computes only the cells it lacks. Checkpoints and the other
// large outputs stay behind: an imported cell is finished and is not
// trained again, and `ump verify` recomputes it like any other.
//
// Imports: eventlog, pipeline, report/resultsdir, signing, state.
package dirimport
