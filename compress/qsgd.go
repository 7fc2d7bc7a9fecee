package compress

import (
	"math"
	"math/bits"
)

// qsgd (Alistarh et al.) sends, per bucket of entries, the bucket's L2
// norm (32 bits) and per entry a sign bit and a level l in 0..levels
// (bits.Len(levels) bits), rounded stochastically so that
// E[norm sign l/levels] = t: unbiased.
type qsgd struct{ levels, bucket int }

// omega is QSGD's variance bound min(b/s^2, sqrt(b)/s) for buckets of b.
func (c qsgd) omega(d int) float64 {
	b, s := float64(min(c.bucket, d)), float64(c.levels)
	return min(b/(s*s), math.Sqrt(b)/s)
}

func (c qsgd) width() int { return bits.Len(uint(c.levels)) }

func (c qsgd) Encode(t []float32, at Draw) Message {
	buckets := (len(t) + c.bucket - 1) / c.bucket
	w := newWriter(32*buckets + (1+c.width())*len(t))
	r := at.own()
	s := float64(c.levels)
	for b := 0; b < buckets; b++ {
		part := t[b*c.bucket : min(len(t), (b+1)*c.bucket)]
		norm := 0.0
		for _, v := range part {
			norm += float64(float64(v) * float64(v))
		}
		norm = math.Sqrt(norm)
		w.f32(float32(norm))
		for _, v := range part {
			level := 0
			if norm > 0 {
				level = int(float64(math.Abs(float64(v))/norm*s) + float64(r.Float64()))
			}
			w.bits(signBit(v), 1)
			w.bits(uint64(min(level, c.levels)), c.width())
		}
	}
	return w.message()
}

func (c qsgd) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for b := 0; b*c.bucket < len(dst); b++ {
		norm := float64(r.f32())
		for k := b * c.bucket; k < min(len(dst), (b+1)*c.bucket); k++ {
			neg := r.bits(1)
			v := float32(norm * float64(r.bits(c.width())) / float64(c.levels))
			if neg == 1 {
				v = -v
			}
			dst[k] = v
		}
	}
}
