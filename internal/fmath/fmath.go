package fmath

import "math"

// The constants of FreeBSD's e_exp.c and e_log.c (Sun's fdlibm), as Go's
// pure-Go math.Exp and math.Log use them, and the GPU engine's graphs of
// Exp and Log (nn/gpu).
const (
	Ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	Ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	Log2e = 1.44269504088896338700e+00

	ExpP1 = 1.66666666666666657415e-01
	ExpP2 = -2.77777777770155933842e-03
	ExpP3 = 6.61375632143793436117e-05
	ExpP4 = -1.65339022054652515390e-06
	ExpP5 = 4.13813679705723846039e-08

	LogL1 = 6.666666666666735130e-01
	LogL2 = 3.999999999940941908e-01
	LogL3 = 2.857142874366239149e-01
	LogL4 = 2.222219843214978396e-01
	LogL5 = 1.818357216161805012e-01
	LogL6 = 1.531383769920937332e-01
	LogL7 = 1.479819860511658591e-01

	// Exp(x) is +Inf above ExpOverflow and 0 below ExpUnderflow.
	ExpOverflow  = 7.09782712893383973096e+02
	ExpUnderflow = -7.45133219101941108420e+02
)

// mul is x*y rounded to float64: an operand that Go may not fuse with an
// addition around it.
func mul(x, y float64) float64 { return float64(x * y) }

// Exp returns e**x, within 1 ulp, with the same bits on every machine.
func Exp(x float64) float64 {
	const nearZero = 1.0 / (1 << 28)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > ExpOverflow:
		return math.Inf(1)
	case x < ExpUnderflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// x = k ln2 + r, |r| <= ln2/2.
	var k int
	switch {
	case x < 0:
		k = int(mul(Log2e, x) - 0.5)
	case x > 0:
		k = int(mul(Log2e, x) + 0.5)
	}
	hi := x - mul(float64(k), Ln2Hi)
	lo := mul(float64(k), Ln2Lo)
	r := hi - lo
	t := mul(r, r)
	p := ExpP4 + mul(t, ExpP5)
	p = ExpP3 + mul(t, p)
	p = ExpP2 + mul(t, p)
	p = ExpP1 + mul(t, p)
	c := r - mul(t, p)
	y := 1 - ((lo - mul(r, c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x, within 1 ulp, with the same bits
// on every machine.
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := mul(s, s)
	s4 := mul(s2, s2)
	t1 := LogL5 + mul(s4, LogL7)
	t1 = LogL3 + mul(s4, t1)
	t1 = LogL1 + mul(s4, t1)
	t1 = mul(s2, t1)
	t2 := LogL4 + mul(s4, LogL6)
	t2 = LogL2 + mul(s4, t2)
	t2 = mul(s4, t2)
	R := t1 + t2
	hfsq := mul(mul(0.5, f), f)
	return mul(k, Ln2Hi) - ((hfsq - (mul(s, hfsq+R) + mul(k, Ln2Lo))) - f)
}

// FMA32 returns x*y + z rounded once to float32, as a hardware float32
// fused multiply-add (VFMADD231PS, FMADD) computes it.
//
// The product of two float32s is exact in float64, so the float64 sum s
// is x*y + z rounded once. Rounding s to float32 then gives the right
// result unless s lies exactly halfway between two float32s (a float32
// midpoint between the exact sum and s would be a nearer float64): then,
// and outside float32's normal range, TwoSum gives the sum's exact error,
// s is rounded to odd (s, or its neighbour towards the error, whichever
// has an odd last bit), and that to float32, which rounds once because
// float64 carries more than 24 + 1 bits (Boldo and Melquiond, "Emulation
// of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", 2008).
func FMA32(x, y, z float32) float32 {
	s := float64(float64(x)*float64(y)) + float64(z) // the product is exact
	// Not a float32 midpoint, and a normal float32 (its exponent 2^-126
	// to 2^127): s rounds to the right float32.
	if b := math.Float64bits(s); b&(1<<29-1) != 1<<28 && b>>52&0x7ff-(1023-126) <= 253 {
		return float32(s)
	}
	return fma32Odd(x, y, z)
}

// fma32Odd is FMA32 through the exact sum rounded to odd.
func fma32Odd(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y))
	c := float64(z)
	s := p + c
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (c - bb) // s + e = p + c exactly
	if b := math.Float64bits(s); e != 0 && b&1 == 0 {
		if (e > 0) == (s > 0) {
			b++ // away from zero
		} else {
			b--
		}
		s = math.Float64frombits(b)
	}
	return float32(s)
}
