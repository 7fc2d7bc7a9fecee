// Package cpu is the CPU engine: it runs the models of package nn on the
// machine's cores in float32, behind nn.Engine.
//
// A batch's spatial activations are stored C x B x H x W; flat ones B x F.
// Convolutions with few taps or 16k output channels (LeNet's, the EMNIST
// CNN's first) are computed directly by C vector kernels under cgo
// (conv_kernels.h, compiled for each vector width the CPU may have), or Go
// loops giving the same bits (conv_plane.go, conv_lanes.go); the others
// are im2col plus one GEMM per cache-sized chunk of the batch. GEMMs go to
// OpenBLAS's cblas_sgemm (loaded at run time through cgo, one BLAS thread)
// or, without it, gonum's pure-Go sgemm. The engine runs whole workers on
// one goroutine per core with buffers allocated once; dropout masks come
// from counter-based streams (rng), so gradients are bit-identical
// whatever the number of goroutines. Name, which enters the cell key, says
// the numerics and the BLAS.
package cpu
