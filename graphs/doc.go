// Package graphs declares the topology kinds (Topologies: their
// parameters, the cell fields they depend on, their checks) and builds
// their communication graphs over a run (Schedule) and the graphs' mixing
// matrices (Weights). The topology stage records them; see its package doc
// for the schedules and weights.
//
// Imports: internal/rng, kinds.
package graphs
