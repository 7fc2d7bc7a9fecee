// Package compress is the communication layer of the train stage
// (compress runs inside each gossip): GRACE-style codecs that
// turn a vector into a real encoded message and back, and the Exchange
// that an algorithm's gossip and all-reduce go through — exact with codec
// none, CHOCO-gossip with public copies, or averaging with error feedback —
// counting the bits of every message and the compression error. Codecs
// binds every codec package codecs declares to its constructor.
//
// Randomness (stochastic rounding, randomk's indices, powersgd's test
// matrix) comes from streams named by (cell seed, round, kind, worker), so
// a resumed run draws the same numbers.
package compress
