// Package algorithms implements the decentralized optimizers of
// spec/algorithms.md over flat float32 parameter vectors: D-SUM, GT-DSUM
// and the baselines D-PSGD, DSGDm, Local SGD with momentum, QG-DSGDm,
// SlowMo, DSGT and D^2. Family declares each with its parameters (the
// paper's defaults, ranges, docs) and constructor; a Config carries the
// parameters by name.
//
// Data model: n workers each hold named state vectors (x, v, y, m, ...) of
// one length. An Optimizer advances all workers by one round: K local
// steps, each asking a Grads function for every worker's gradient at once
// (so an engine can batch them) and then updating every worker in
// parallel; then communication through the round's Mixing (gossip) or an
// exact average. State() exposes every vector for checkpoints. Every
// floating-point sum runs in a fixed order, so results do not depend on
// scheduling.
package algorithms
