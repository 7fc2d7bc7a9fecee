// Package mixing is the topology stage's output table, a schedule of
// mixing matrices (round, i, j, weight, spectral_gap: one row per nonzero
// weight), which the topology stage writes (Table) and the train stage
// reads (Read, checking every matrix), so that neither imports the other.
//
// Imports: algorithms, artifacts.
package mixing
