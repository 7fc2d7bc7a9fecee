package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ump-lab/ump/internal/fmath"
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

// Normal returns a standard normal variate from r (Marsaglia's polar
// method), with the same bits on every machine: rand's NormFloat64 calls
// math.Exp and math.Log, whose last bits differ between architectures.
func Normal(r *rand.Rand) float64 {
	for {
		u, v := Symmetric(r), Symmetric(r)
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*fmath.Log(s)/s)
		}
	}
}

// Symmetric returns a uniform variate in [-1, 1): 2*r.Float64() - 1,
// computed exactly in integers (Go may fuse the multiply and subtract).
func Symmetric(r *rand.Rand) float64 {
	return float64(int64(r.Uint64()&(1<<53-1))-1<<52) / (1 << 52)
}
