package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// New returns the stream for (seed, purpose, ids...).
func New(seed uint64, purpose string, ids ...uint64) *rand.Rand {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], id)
		h.Write(b[:])
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}
