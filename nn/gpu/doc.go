// Package gpu is the GPU engine: the models of package nn on GoMLX (XLA
// through a PJRT plugin on CUDA, or GoMLX's pure-Go backend), built with
// the tag xla; without it every entry point answers ErrNoGPU (stub.go).
//
// A Cohort keeps cells × workers models and their optimizer state on the
// device and runs a whole round of every algorithm of docs/algorithms.md
// as one compiled program: the local steps a While loop that carries what
// its body uses, as XLA's builder requires (loop.Counted), a hand-written
// backward pass, channels-last activations, every product a matrix
// product batched over models, one-channel convolutions as shifted
// multiply-adds; the algorithm's rules run over graph nodes, from their
// one definition in package algorithms. Its per-step Engine serves cells
// whose compressed communication runs on the host. Device opens the
// backend once; CheckCompile is ump doctor's check program; CellBytes is a
// cohort cell's memory by the round program's arithmetic, and CohortCells
// sizes a cohort from XLA's own figures for its compiled programs
// (ParseProgramMemory reads them from GoMLX's compile log).
//
// The exact program (docs/gpu.md) computes the CPU engine's bits, of
// package exact's pieces: an Exact cohort's round and evaluation
// (exactcohort_xla.go), and CheckExactOrder, ump doctor's check of the
// pieces against the CPU engine that the caller hands in (Reference).
// The loops are package loop's.
//
// Imports: algorithms, datasets, internal/fmath, internal/rng, nn,
// nn/gpu/exact, nn/gpu/loop.
package gpu
