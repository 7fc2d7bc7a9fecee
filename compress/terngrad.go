package compress

import "math"

// terngrad (Wen et al.) sends s = max|t| (32 bits) and per entry 2 bits for
// a value in {-1, 0, 1}, nonzero with probability |t|/s: unbiased. (No
// gradient clipping, which would bias it.)
type terngrad struct{}

func (terngrad) Encode(t []float32, at Draw) Message {
	w := newWriter(32 + 2*len(t))
	s := 0.0
	for _, v := range t {
		s = max(s, math.Abs(float64(v)))
	}
	w.f32(float32(s))
	r := at.own()
	for _, v := range t {
		code := uint64(0) // 0: zero, 1: +s, 2: -s
		if s > 0 && r.Float64() < math.Abs(float64(v))/s {
			code = 1 + signBit(v)
		}
		w.bits(code, 2)
	}
	return w.message()
}

// omega: E|C(t) - t|^2 = max|t| |t|_1 - |t|^2 <= (sqrt(d) - 1) |t|^2.
func (terngrad) omega(d int) float64 { return math.Sqrt(float64(d)) - 1 }

func (terngrad) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	s := r.f32()
	for k := range dst {
		switch r.bits(2) {
		case 0:
			dst[k] = 0
		case 1:
			dst[k] = s
		default:
			dst[k] = -s
		}
	}
}
