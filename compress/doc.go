// Package compress is the communication layer of the train stage
// (compress runs inside each gossip): GRACE-style codecs that
// turn a vector into a real encoded message and back, and the Exchange
// that an algorithm's gossip and all-reduce go through — exact with codec
// none, CHOCO-gossip with public copies, or averaging with error feedback —
// counting the bits of every message and the compression error. Codecs
// binds every codec package codecs declares to its constructor.
//
// codec.go holds what every codec shares (Codec, Message, Draw, the
// registry); each codec has its own file (topk.go, qsgd.go, ...), with its
// tests beside it where they are its alone; sparse.go and bits.go hold the
// index-value and bit packing several share.
//
// Randomness (stochastic rounding, randomk's indices, powersgd's test
// matrix) comes from streams named by (cell seed, round, kind, worker), so
// a resumed run draws the same numbers.
//
// Imports: algorithms, codecs, internal/rng, kinds.
package compress
