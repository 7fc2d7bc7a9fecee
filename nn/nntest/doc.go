// Package nntest makes the data sets the engines' tests and benchmarks
// train on: random samples of a real set's shape, with a test split.
//
// Imports: datasets, internal/rng.
package nntest
