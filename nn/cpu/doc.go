// Package cpu is the CPU engine: it runs the models of package nn on the
// machine's cores in float32, behind nn.Engine.
//
// A batch's spatial activations are stored C x B x H x W; flat ones B x F.
// Convolutions with few taps or 16k output channels (LeNet's, the EMNIST
// CNN's first) are computed directly (conv_plane.go, conv_lanes.go); the
// others are im2col plus the engine's own matrix product (gemm.go), one
// per cache-sized chunk of the batch. Every floating-point reduction runs
// in one fixed order: each element of a product adds its products in
// order with fused multiply-adds, the convolutions' sums in the order of
// their Go loops, exp and log are internal/fmath's. So the kernel paths
// (kernels.go: vector kernels for AVX-512, for AVX2 with FMA and for NEON,
// C under cgo and, on amd64 without cgo, Go assembly written by asmgen;
// and Go loops for every machine) give the same bits, and Name, which
// enters the cell key, names only the numerics' version. The engine runs
// whole workers on one goroutine per core with buffers allocated once;
// dropout masks come from counter-based streams (rng), so gradients are
// bit-identical whatever the number of goroutines.
//
// Imports: datasets, internal/fmath, internal/rng, nn.
package cpu
