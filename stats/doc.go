// Package stats holds the statistics a report draws its intervals and
// comparisons with: Student's t and bootstrap intervals of a mean, the
// probability of improvement and Kendall's tau-b. Each is checked against
// values worked out by hand, scipy, or the exact distribution.
//
// Imports: internal/rng.
package stats
