package compress

// onebit (1-bit SGD, Seide et al.) sends the means of the non-negative and
// of the negative entries (32 bits each) and one bit per entry choosing
// between them.
type onebit struct{}

func (onebit) Encode(t []float32, _ Draw) Message {
	w := newWriter(64 + len(t))
	var pos, neg float64
	var np, nn int
	for _, v := range t {
		if v < 0 {
			neg += float64(v)
			nn++
		} else {
			pos += float64(v)
			np++
		}
	}
	w.f32(float32(pos / float64(max(np, 1))))
	w.f32(float32(neg / float64(max(nn, 1))))
	for _, v := range t {
		w.bits(signBit(v), 1)
	}
	return w.message()
}

func (onebit) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	pos, neg := r.f32(), r.f32()
	for k := range dst {
		dst[k] = pos
		if r.bits(1) == 1 {
			dst[k] = neg
		}
	}
}
