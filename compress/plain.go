package compress

// plain sends float32 values (32 bits each).
type plain struct{}

func (plain) Encode(t []float32, _ Draw) Message {
	w := newWriter(32 * len(t))
	for _, v := range t {
		w.f32(v)
	}
	return w.message()
}

func (plain) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		dst[k] = r.f32()
	}
}
