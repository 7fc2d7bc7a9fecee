package compress

// sparse writes entries as (uint32 index, float32 value) pairs: 64 bits
// each.
func sparse(t []float32, idx []int) Message {
	w := newWriter(64 * len(idx))
	for _, k := range idx {
		w.bits(uint64(k), 32)
		w.f32(t[k])
	}
	return w.message()
}

func decodeSparse(m Message, dst []float32) {
	clear(dst)
	r := reader{b: m.Payload}
	for range m.Bits / 64 {
		k := r.bits(32)
		dst[k] = r.f32()
	}
}

// keep is how many of d entries topk and randomk send: max(1, floor(ratio d)).
func keep(ratio float64, d int) int { return max(1, int(ratio*float64(d))) }
