package compress

import "math"

// sign sends mean|t| (32 bits) and one sign bit per entry (0 counts as
// positive); it decodes to ±mean|t|. efsign is the same message, always
// with error feedback.
type sign struct{}

func (sign) Encode(t []float32, _ Draw) Message {
	w := newWriter(32 + len(t))
	s := 0.0
	for _, v := range t {
		s += math.Abs(float64(v))
	}
	w.f32(float32(s / float64(len(t))))
	for _, v := range t {
		w.bits(signBit(v), 1)
	}
	return w.message()
}

func (sign) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	s := r.f32()
	for k := range dst {
		dst[k] = s
		if r.bits(1) == 1 {
			dst[k] = -s
		}
	}
}
