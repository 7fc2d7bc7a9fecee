package compress

import "math"

// fp16 sends IEEE half-precision values (16 bits each, round to nearest
// even; beyond 65504 they become infinite).
type fp16 struct{}

func (fp16) Encode(t []float32, _ Draw) Message {
	w := newWriter(16 * len(t))
	for _, v := range t {
		w.bits(uint64(toHalf(v)), 16)
	}
	return w.message()
}

func (fp16) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		dst[k] = fromHalf(uint16(r.bits(16)))
	}
}

// toHalf rounds a float32 to the nearest half (ties to even).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp, mant := int(b>>23&0xff), b&0x7fffff
	if exp == 0xff { // Inf, NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // a half subnormal: m 2^-24 with m = M 2^(exp-126)
		shift := uint(126 - exp)
		if shift > 24 {
			return sign
		}
		return sign | uint16(roundShift(mant|0x800000, shift))
	}
	m := roundShift(mant, 13)
	// A carry out of the mantissa moves to the next exponent, and from the
	// largest finite half to infinity: both are plain additions.
	return sign | uint16(uint32(e)<<10+m)
}

// roundShift is m >> shift rounded to nearest, ties to even.
func roundShift(m uint32, shift uint) uint32 {
	q, rem, half := m>>shift, m&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp, m := uint32(h>>10&0x1f), uint32(h&0x3ff)
	switch exp {
	case 0:
		v := float32(m) * (1.0 / (1 << 24))
		if sign != 0 {
			return -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | m<<13)
}
