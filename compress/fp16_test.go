package compress

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHalfRoundTrip: every finite half survives float32 and back, and
// float32 values round to the nearest half.
func TestHalfRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN
		}
		if got := toHalf(fromHalf(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x -> %g -> %#04x", h, fromHalf(uint16(h)), got)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		f := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(50)-30)))
		got := float64(fromHalf(toHalf(f)))
		// The nearest half: compare with the neighbours of the result.
		h := toHalf(f)
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb&0x7c00 == 0x7c00 {
				continue
			}
			if other := float64(fromHalf(nb)); math.Abs(other-float64(f)) < math.Abs(got-float64(f)) &&
				math.Abs(float64(f)) < 65504 {
				t.Fatalf("%g -> %g, but %g is nearer", f, got, other)
			}
		}
	}
	if !math.IsInf(float64(fromHalf(toHalf(1e6))), 1) || fromHalf(toHalf(1e-9)) != 0 {
		t.Error("fp16 overflow must give +Inf and underflow 0")
	}
}
