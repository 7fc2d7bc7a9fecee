// Package rng derives independent random streams from counters.
//
// A stream is named by (cell seed, purpose, ids...) — for example
// (seed, "quadratic-noise", worker, round, step) — and is the same whatever
// ran before it, so resuming at any round or running workers in parallel
// cannot change results.
//
// Imports: internal/fmath.
package rng
