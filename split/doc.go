// Package split declares the partition kinds (Partitions) and splits a
// data set's training samples over workers (Assign), all seeded by the
// cell seed:
//   - iid: a random permutation cut into n near-equal parts.
//   - dirichlet(alpha): for each class, proportions over the n workers are
//     drawn from Dir(alpha) and the class's shuffled samples are cut at the
//     rounded cumulative proportions; the whole draw is repeated (at most
//     1000 times) until every worker holds at least min_size samples.
//   - shards(k): samples sorted by label (then index) are cut into n*k
//     equal shards; a random permutation deals k shards to each worker.
//
// Imports: internal/fmath, internal/rng, kinds.
package split
