// Package nn declares the paper's models, which both engines run: a Model
// is a list of layers (Conv2d, MaxPool2, ReLU, Dropout, Flatten, Linear,
// EmbeddingBag) over one flat float32 parameter vector per worker, layer i
// owning p[Offsets[i]:Offsets[i+1]], followed by softmax cross-entropy;
// NewModel builds the paper's models for a data set's input, Init draws
// PyTorch's initial parameters from a seeded stream. It also holds what
// both engines share: the Engine contract (a worker's gradients and
// evaluation; Step names the dropout streams), the Cohort contract of an
// engine that trains several cells in one device program, the dropout mask's
// definition, the evaluation's batch size, the standardisation of image
// inputs and the softmax cross-entropy in the CPU engine's order
// (CrossEntropy).
//
// The engines are packages of their own: nn/cpu (the CPU engine, its
// kernels and its own matrix product) and nn/gpu (the GoMLX engine, built with -tags xla).
//
// Imports: algorithms, datasets, internal/fmath, internal/rng.
package nn
