package compress

import "slices"

// randomk sends the values of k entries chosen at random, the same indices
// on every worker in a round (drawn from the cell seed, so none are sent).
// Decoding is unscaled, as in GRACE, so it is contractive (what
// CHOCO-gossip needs); d/k times the decoded vector is unbiased.
type randomk struct{ ratio float64 }

// indices draws k distinct indices of d, ascending (Floyd's algorithm).
func (c randomk) indices(d int, at Draw) []int {
	k, r := keep(c.ratio, d), at.shared()
	chosen := make(map[int]bool, k)
	for j := d - k; j < d; j++ {
		v := r.IntN(j + 1)
		if chosen[v] {
			v = j
		}
		chosen[v] = true
	}
	idx := make([]int, 0, k)
	for v := range chosen {
		idx = append(idx, v)
	}
	slices.Sort(idx)
	return idx
}

func (c randomk) Encode(t []float32, at Draw) Message {
	idx := c.indices(len(t), at)
	w := newWriter(32 * len(idx))
	for _, k := range idx {
		w.f32(t[k])
	}
	return w.message()
}

func (c randomk) Decode(m Message, at Draw, dst []float32) {
	clear(dst)
	r := reader{b: m.Payload}
	for _, k := range c.indices(len(dst), at) {
		dst[k] = r.f32()
	}
}
