package compress

import "math"

// natural (Horváth et al.) rounds every entry stochastically to one of the
// two nearest powers of two, unbiased, and sends a sign bit and the 8-bit
// float32 exponent code (0 for zero): 9 bits per entry.
type natural struct{}

func (natural) Encode(t []float32, at Draw) Message {
	w := newWriter(9 * len(t))
	r := at.own()
	for _, v := range t {
		b := math.Float32bits(v)
		code, mant := b>>23&0xff, b&0x7fffff
		// |v| = (1 + mant/2^23) 2^(code-127): round up with probability
		// mant/2^23. Below the smallest normal, |v| = mant 2^-149 rounds
		// to 2^-126 (code 1) with probability mant/2^23, else to 0.
		if mant != 0 && r.Uint32()&0x7fffff < mant {
			code++
		}
		w.bits(uint64(b>>31), 1)
		w.bits(uint64(min(code, 254)), 8)
	}
	return w.message()
}

// omega: rounding to a power of two has variance at most |t|^2/8.
func (natural) omega(int) float64 { return 1.0 / 8 }

func (natural) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		neg := uint32(r.bits(1))
		dst[k] = math.Float32frombits(neg<<31 | uint32(r.bits(8))<<23)
	}
}
