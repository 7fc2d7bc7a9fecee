// Package reproduction is `ump reproduce`'s plan and verdict: the results
// directories under a tree (Find), which of them this machine computes
// under the cell keys they record (Plan: the others are named and left
// out), the one progress line over all of them with its share of the
// work and ETA (Line), and each finished cell computed again compared
// with its committed figures bit for bit (Compare; fleet.ErrNondeterministic
// where one differs).
//
// Imports: fleet, internal/display, manifests, pipeline, report/resultsdir,
// state.
package reproduction
