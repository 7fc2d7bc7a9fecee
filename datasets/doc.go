// Package datasets provides the tasks cells train on, each with a content
// digest that enters the cell key.
//
// Data model: a Dataset has a class count, a per-sample input shape and a
// training and a test Split; a Split holds 0-based labels and the inputs
// in one of three forms: image bytes (C*H*W per sample, channel-major),
// float32 feature vectors, or token-id bags (Tokens cut by Offsets). The
// digest hashes the decoded content, so gzipped and plain files agree.
//
// Sources: IDX files (MNIST, Fashion-MNIST, EMNIST, loaded upright),
// CIFAR-10's binary batches, AG NEWS CSVs (tokenized, vocabulary from the
// training split), the synthetic Gaussian mixture, and the quadratic task
// of docs/algorithms.md (worker i minimises f_i(x) = 0.5 sum_j a_ij (x_j -
// b_ij)^2). A Library loads data sets from a data directory once per
// process; Fetch fills that directory from a list of sources, verifying
// before anything is kept.
//
// Imports: internal/bounded, internal/rng, tasks.
package datasets
