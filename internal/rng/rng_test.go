package rng

import "testing"

func TestStreamsAreReproducibleAndIndependent(t *testing.T) {
	a, b := New(1, "noise", 2, 3, 4), New(1, "noise", 2, 3, 4)
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("the same counters gave different streams")
		}
	}
	first := New(1, "noise", 2, 3, 4).Uint64()
	for _, other := range []uint64{New(2, "noise", 2, 3, 4).Uint64(), New(1, "dropout", 2, 3, 4).Uint64(),
		New(1, "noise", 2, 3, 5).Uint64(), New(1, "noise", 3, 2, 4).Uint64(), New(1, "noise", 2, 3).Uint64()} {
		if other == first {
			t.Error("different counters gave the same stream")
		}
	}
}
