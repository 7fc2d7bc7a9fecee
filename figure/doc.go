// Package figure describes a figure of curves, as report builds it and
// render, the dashboard and the report's documents draw it: its series
// (a mean over seeds with its spread at each x), axis titles, and the
// colours and dashes curves take in order.
//
// Imports: none of ump's packages.
package figure
