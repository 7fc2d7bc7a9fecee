// Package nn will hold the training engine (tensors, layers, models, BLAS
// binding) behind one Engine interface. For now it holds only rng, the
// counter-based random streams every stage draws from.
package nn
