// Package exact builds XLA graphs that compute the CPU engine's bits
// (docs/gpu.md, "The exact program"): its float32 fused multiply-add
// emulated in float64 and its products in order (fma.go), its exp, log
// and softmax cross-entropy (math.go), every model's forward and step of
// gradients but for convolutions it computes as a GEMM and the text model
// (layers.go, conv.go: the long sums as While loops of package loop), and
// the gossip and average as package algorithms adds them (gossip.go);
// fill.go pads, with -0 made so that no constant cache takes it for +0. The
// layers run M models side by side: a leading axis of models, each with
// its own parameters and batch.
// Package gpu's Exact cohorts and ump doctor's check are made of these.
// Built with the tag xla, like package gpu.
//
// Imports: internal/fmath, nn, nn/gpu/loop.
package exact
