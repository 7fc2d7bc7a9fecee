// Package nn is the training engine: the paper's models over one flat
// float32 parameter vector per worker, behind the Engine interface: the CPU
// engine, and with the build tag xla the GoMLX engine (GPU). The GPU
// engine's Cohort keeps cells × workers models and their optimizer state
// on the device and runs a whole round of every algorithm of
// docs/algorithms.md as one compiled program (the local steps a While
// loop that carries what its body uses, as XLA's builder requires:
// countedLoop; a hand-written backward pass, channels-last activations, every
// product a matrix product batched over models, one-channel convolutions
// as shifted multiply-adds); its per-step Engine serves cells whose
// compressed communication runs on the host.
//
// Data model: a Model is a list of layers (Conv2d, MaxPool2d, ReLU,
// Dropout, Flatten, Linear, EmbeddingBag) with each layer's parameters a
// view into the flat vector, followed by softmax cross-entropy. A batch's
// spatial activations are stored C x B x H x W; flat ones B x F.
// Convolutions with few taps or 16k output channels (LeNet's, the EMNIST
// CNN's first) are computed directly by C vector kernels under cgo
// (conv_kernels.h, compiled for each vector width the CPU may have), or Go
// loops giving the same bits (conv_plane.go, conv_lanes.go); the others
// are im2col plus one GEMM per cache-sized chunk of the batch. GEMMs go to
// OpenBLAS's cblas_sgemm (loaded at run time through cgo, one BLAS thread)
// or, without it, gonum's pure-Go sgemm.
// The CPU engine runs whole workers on one goroutine per core with buffers
// allocated once; dropout masks come from counter-based streams (rng), so
// gradients are bit-identical whatever the number of goroutines.
package nn
