// Package tasks declares the kinds of task a manifest's task.dataset
// selects, each once: whether it trains a model on samples (and so takes a
// model, batches, a partition and validation), the engines that train it,
// the metric columns of its rounds table and its headline figure. A cell
// derives its kind once (Of); every other package asks the kind instead of
// comparing names.
//
// Imports: none of ump's packages.
package tasks
