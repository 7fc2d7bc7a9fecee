// Package algorithms implements the decentralized optimizers of
// spec/algorithms.md over flat float32 parameter vectors.
//
// Data model: n workers each hold named state vectors (x, v, y, ...) of one
// length. An Optimizer advances all workers by one round (K local steps
// with gradients from a Round's Grad, then communication through its
// Mixing) and exposes its state for checkpoints. Local steps of different
// workers run in parallel; every floating-point sum runs in a fixed order,
// so results do not depend on scheduling.
package algorithms
