// Package partition is the stage that assigns every training sample to
// exactly one worker and records the assignment ("assignment": worker,
// sample; samples ascending within a worker) and the per-worker class
// histogram ("histogram": worker, class, count; every class for every
// worker). For the quadratic task worker i owns objective f_i: the
// assignment is worker i, sample i and there is no histogram.
//
// The kinds and how they split are declared in package split.
//
// Imports: artifacts, manifests, split, stages.
package partition
