// Package algorithms defines the decentralized optimizers of
// docs/algorithms.md, each exactly once: D-SUM, GT-DSUM and the baselines
// D-PSGD, DSGDm, Local SGD with momentum, QG-DSGDm, SlowMo, DSGT and D^2.
// optimizers.Family declares each with its parameters (the paper's
// defaults, ranges, docs); Family binds each to its definition here, and
// a Config carries the parameters by name.
//
// Data model: n workers each hold named vectors (x, v, y, m, ...) of one
// length. An algorithm's definition (Rules) lists them and writes one round
// — K local steps (Space.Steps) on every worker's mini-batch gradient, then
// communication through the round's Mixing (gossip) or an exact average —
// against a Space, the small vector algebra both engines implement: New
// runs it on []float32 as an Optimizer (cpu.go), the GPU cohort (package
// nn) over graph nodes, TraceRound on the host for the numbers and
// messages alone. Every floating-point sum runs in a fixed order and every
// operation rounds on its own, so results do not depend on scheduling and
// both engines compute the same arithmetic.
//
// Imports: kinds, optimizers.
package algorithms
