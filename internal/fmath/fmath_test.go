package fmath

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is x*y + z rounded once to float32, computed exactly with
// math/big (no floating-point arithmetic of the machine).
func exactFMA32(x, y, z float32) float32 {
	prod := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
	prod.SetPrec(200).Mul(big.NewFloat(float64(x)).SetPrec(200), big.NewFloat(float64(y)).SetPrec(200))
	sum := new(big.Float).SetPrec(400).Add(prod, big.NewFloat(float64(z)).SetPrec(400))
	f, _ := sum.Float32()
	if f == 0 && sum.Sign() == 0 { // an exact zero: IEEE's sign rules
		return float32(float64(x)*float64(y)) + z
	}
	return f
}

// TestFMA32RoundsOnce checks FMA32 against exact arithmetic on random
// operands, on sums that cancel to a few bits (where rounding twice, in
// float64 then float32, goes wrong: the case round-to-odd exists for), on
// ties and on subnormal results.
func TestFMA32RoundsOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f32 := func() float32 {
		return math.Float32frombits(r.Uint32()&0x807fffff | uint32(96+r.IntN(64))<<23) // exponents 2^-31 .. 2^32
	}
	naive, checked := 0, 0
	check := func(x, y, z float32) {
		checked++
		want := exactFMA32(x, y, z)
		if got := FMA32(x, y, z); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf(
				"FMA32(%g, %g, %g) = %g (%#x), exactly %g (%#x)",
				x,
				y,
				z,
				got,
				math.Float32bits(got),
				want,
				math.Float32bits(want),
			)
		}
		if float32(float64(x)*float64(y)+float64(z)) != want {
			naive++
		}
	}
	for i := 0; i < 200000; i++ {
		x, y := f32(), f32()
		check(x, y, f32())
		p := float64(x) * float64(y)
		check(x, y, -float32(p))                                          // cancels to the product's low bits
		check(x, y, float32(p)*(1+float32(r.IntN(3)-1)*0x1p-24))          // near ties
		check(x, y, math.Float32frombits(math.Float32bits(float32(p))^1)) // one ulp away
	}
	// Ties that rounding in float64 creates: for z of odd last bit,
	// x*y = -(2^-24 - 2^-70) ulp-scaled puts x*y + z just above the
	// midpoint below z, by less than float64's last bit; the same
	// mirrored, and with the product's sign turned (just below the
	// midpoint above z), so that round-to-odd steps both ways on both
	// signs of the sum.
	for i := 0; i < 1000; i++ {
		e := float32(math.Ldexp(1, r.IntN(40)-20))
		z := math.Float32frombits(0x3f800001|r.Uint32()&0x7ffffe) * e // odd significand in [1, 2)
		for _, sx := range []float32{1, -1} {
			for _, sz := range []float32{1, -1} {
				check(sx*-0x1p-24*(1+0x1p-23)*e, 1-0x1p-23, sz*z)
			}
		}
	}
	// Where float32 turns subnormal (below 2^-126) it keeps fewer bits, so
	// a sum that float64 rounds onto a midpoint of subnormals is one
	// FMA32's fast path must not take: z an odd multiple of 2^-149, x*y =
	// ±2^-150 (1 - 2^-46), the sum just inside a midpoint by less than
	// float64 keeps. z from the smallest subnormals to just past 2^-126.
	for _, k := range []uint32{1, 3, 0x2ab, 0x3fffff, 0x400001, 0x5fffff, 0x7fffff, 0x800001, 0x800003, 0x9abcdf} {
		z := float32(math.Ldexp(float64(k), -149)) // exact: k < 2^24
		for _, sx := range []float32{1, -1} {
			for _, sz := range []float32{1, -1} {
				check(sx*0x1p-75*(1+0x1p-23), 0x1p-75*(1-0x1p-23), sz*z)
			}
		}
	}
	check(0x1p-126, 0x1p-10, 0x1p-140)       // subnormal result
	check(float32(math.Inf(1)), 2, 1)        // infinities pass through
	check(3e38, 3e38, -float32(math.Inf(1))) // -Inf wins over an overflowing product
	if got := FMA32(float32(math.Inf(1)), 0, 1); !math.IsNaN(float64(got)) {
		t.Errorf("FMA32(Inf, 0, 1) = %g, want NaN", got)
	}
	t.Logf("%d operand triples; rounding in float64 then float32 would have been wrong on %d", checked, naive)
	if naive == 0 {
		t.Error("no case where double rounding goes wrong: the test does not reach what round-to-odd is for")
	}
}

// TestExpLogAreWithinAnUlp compares Exp and Log with the standard
// library's over their range (Exp within 2 ulps of amd64's assembly, each
// within 1 ulp of e^x; Log within 1 ulp of fdlibm's algorithm, which Log
// is), and checks the special values.
func TestExpLogAreWithinAnUlp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ulps := func(a, b float64) int64 {
		d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
		if d < 0 {
			d = -d
		}
		return d
	}
	for i := 0; i < 200000; i++ {
		x := (r.Float64()*2 - 1) * 708             // (amd64's math.Exp overflows from 709.5: below)
		if d := ulps(Exp(x), math.Exp(x)); d > 2 { // each within 1 ulp of e^x
			t.Fatalf("Exp(%v) = %v, math.Exp %v (%d ulps)", x, Exp(x), math.Exp(x), d)
		}
		y := math.Float64frombits(r.Uint64() &^ (1 << 63)) // any positive float64
		if math.IsNaN(y) || math.IsInf(y, 0) || y < 0x1p-1022 {
			continue // (amd64's math.Log is wrong on subnormals: below)
		}
		if d := ulps(Log(y), math.Log(y)); d > 1 {
			t.Fatalf("Log(%v) = %v, math.Log %v (%d ulps)", y, Log(y), math.Log(y), d)
		}
	}
	for _, c := range []struct{ got, want float64 }{
		{Exp(0), 1}, {Exp(math.Inf(-1)), 0}, {Exp(math.Inf(1)), math.Inf(1)}, {Exp(710), math.Inf(1)}, {Exp(-746), 0},
		{Log(1), 0}, {Log(0), math.Inf(-1)}, {Log(math.Inf(1)), math.Inf(1)},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	// Near overflow and underflow, where amd64's math.Exp is wrong: Log
	// undoes Exp.
	for _, x := range []float64{709.5897549857559, 709.78, -708.5, -744} {
		if got := Log(Exp(x)); math.IsInf(Exp(x), 0) || math.Abs(got-x) > 1e-12*math.Abs(x) && x > -708 {
			t.Errorf("Log(Exp(%v)) = %v (Exp %v)", x, got, Exp(x))
		}
	}
	// Subnormals: log(x) = log(x 2^100) - 100 log 2, within 1 ulp.
	for _, x := range []float64{3.63569223571225e-309, 0x1p-1074, 0x1.8p-1040} {
		if d := ulps(Log(x), Log(x*0x1p100)-100*math.Ln2); d > 1 {
			t.Errorf("Log(%v) = %v, want %v", x, Log(x), Log(x*0x1p100)-100*math.Ln2)
		}
	}
	if !math.IsNaN(Log(-1)) || !math.IsNaN(Exp(math.NaN())) {
		t.Error("Log(-1) and Exp(NaN) should be NaN")
	}
}

// TestFunctionsArePinned pins the bits of Exp, Log and FMA32 over a fixed
// set of inputs: the same digest on every machine (arm64 included:
// nn/cpu's TestArm64GivesThePinnedNumbers runs the engine's numbers there).
func TestFunctionsArePinned(t *testing.T) {
	const pinned = "3f85de540370f2d3cae4337c7c5205fc8f85e9e7b6389ae1b709fbaef047fcf1"
	r := rand.New(rand.NewPCG(5, 6))
	h := sha256.New()
	for i := 0; i < 100000; i++ {
		x := (r.Float64()*2 - 1) * 700
		binary.Write(h, binary.LittleEndian, math.Float64bits(Exp(x)))
		binary.Write(h, binary.LittleEndian, math.Float64bits(Log(math.Abs(x)*math.Exp2(float64(r.IntN(100)-50)))))
		a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
		binary.Write(h, binary.LittleEndian, math.Float32bits(FMA32(a, b, c)))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != pinned {
		t.Errorf("Exp, Log and FMA32 give digest %s, pinned %s: their bits changed", got, pinned)
	}
}
