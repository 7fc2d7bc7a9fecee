// Package state is ump's read model: the fold of a store's events into
// what it holds. A Source is a store's events and blobs; from it come the
// manifests it lists (their latest registrations, each a Registration: the
// event's payload with its plan decoded), a manifest's Report
// (its plan and a CellView per cell) and a cell's view: its status, each
// stage's status, round, cache key, inputs and outputs, its fingerprint
// and where its events came from. Every state is a fold over events,
// never a stored flag. Diff lists the fields two registrations differ in.
//
// The runner asks it what a cell already holds (cache hits, results other
// manifests computed, what a commit or a pull brings); the reports, the
// dashboard and the CLI read through it.
//
// Imports: artifacts, eventlog, manifests, record, stages.
package state
