//go:build xla

package exact

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/ump-lab/ump/internal/fmath"
)

// The CPU engine's exp and log (internal/fmath: fdlibm's reduction and
// polynomials, each product rounded on its own) as float64 graphs, element
// by element: the softmax cross-entropy's functions. A backend that fused
// a product with the add around it would change their bits; ump doctor's
// exact-order check tells whether the device does.

// Exp64 is fmath.Exp of a float64 node: x = k ln2 + r, the polynomial in
// r², and y 2^k rounded once, with fmath.Exp's special cases.
func Exp64(x *Node) *Node {
	g := x.Graph()
	c := func(v float64) *Node { return Scalar(g, dtypes.Float64, v) }
	zero := c(0)
	posInf, negInf := Equal(x, c(math.Inf(1))), Equal(x, c(math.Inf(-1)))
	nearZero := LessThan(Abs(x), c(1.0/(1<<28)))
	special := LogicalOr(
		LogicalOr(LogicalOr(IsNaN(x), posInf), negInf),
		LogicalOr(LogicalOr(GreaterThan(x, c(fmath.ExpOverflow)), LessThan(x, c(fmath.ExpUnderflow))), nearZero),
	)
	xs := Where(special, zero, x) // the general path on a harmless value where it is not taken
	t0 := Mul(c(fmath.Log2e), xs)
	kf := Where(LessThan(xs, zero), Sub(t0, c(0.5)), Where(GreaterThan(xs, zero), Add(t0, c(0.5)), zero))
	k := ConvertDType(kf, dtypes.Int64) // truncated towards zero, as Go's int()
	kd := ConvertDType(k, dtypes.Float64)
	hi := Sub(xs, Mul(kd, c(fmath.Ln2Hi)))
	lo := Mul(kd, c(fmath.Ln2Lo))
	r := Sub(hi, lo)
	t := Mul(r, r)
	p := Add(c(fmath.ExpP4), Mul(t, c(fmath.ExpP5)))
	p = Add(c(fmath.ExpP3), Mul(t, p))
	p = Add(c(fmath.ExpP2), Mul(t, p))
	p = Add(c(fmath.ExpP1), Mul(t, p))
	cc := Sub(r, Mul(t, p))
	y := Sub(c(1), Sub(Sub(lo, Div(Mul(r, cc), Sub(c(2), cc))), hi))
	general := ldexp(y, k)
	out := Where(nearZero, Add(c(1), x), general)
	out = Where(LessThan(x, c(fmath.ExpUnderflow)), zero, out)
	out = Where(GreaterThan(x, c(fmath.ExpOverflow)), c(math.Inf(1)), out)
	out = Where(negInf, zero, out)
	return Where(LogicalOr(IsNaN(x), posInf), x, out)
}

// ldexp is y 2^k rounded once, as math.Ldexp gives it, for y within a
// factor of 2 of 1 and k from -1075 to 1024 (Exp64's range): y 2^(k/2) is
// exact, and its product with 2^(k - k/2) rounds once.
func ldexp(y, k *Node) *Node {
	k1 := DivScalar(k, int64(2))
	return Mul(Mul(y, pow2(k1)), pow2(Sub(k, k1)))
}

// pow2 is 2^k for int64 k from -1022 to 1023, built from its bits.
func pow2(k *Node) *Node {
	return Bitcast(BitwiseShiftLeftScalar(AddScalar(k, int64(1023)), int64(52)), dtypes.Float64)
}

// Log64 is fmath.Log of a float64 node: x = f1 2^k with f1 within
// [√2/2, √2), the polynomial in s = (f1-1)/(f1+1), with fmath.Log's special
// cases; subnormal x is scaled by 2^54 first, as math.Frexp does.
func Log64(x *Node) *Node {
	g := x.Graph()
	c := func(v float64) *Node { return Scalar(g, dtypes.Float64, v) }
	i64 := func(v int64) *Node { return Const(g, v) } // exact: Scalar goes through float64
	zero := c(0)
	nanOrInf := LogicalOr(IsNaN(x), Equal(x, c(math.Inf(1))))
	special := LogicalOr(nanOrInf, LogicalNot(GreaterThan(x, zero)))
	xs := Where(special, c(1), x)
	sub := LessThan(xs, c(0x1p-1022))
	xn := Where(sub, Mul(xs, c(0x1p54)), xs)
	bits := Bitcast(xn, dtypes.Int64)
	ki := Sub(BitwiseAnd(BitwiseShiftRightLogicalScalar(bits, int64(52)), i64(0x7ff)), i64(1022))
	ki = Where(sub, Sub(ki, i64(54)), ki)
	f1 := Bitcast(BitwiseOr(BitwiseAnd(bits, i64(^(0x7ff<<52))), i64(1022<<52)), dtypes.Float64)
	small := LessThan(f1, c(math.Sqrt2/2))
	f1 = Where(small, Mul(f1, c(2)), f1)
	ki = Where(small, Sub(ki, i64(1)), ki)
	f := Sub(f1, c(1))
	k := ConvertDType(ki, dtypes.Float64)
	s := Div(f, Add(c(2), f))
	s2 := Mul(s, s)
	s4 := Mul(s2, s2)
	t1 := Add(c(fmath.LogL5), Mul(s4, c(fmath.LogL7)))
	t1 = Add(c(fmath.LogL3), Mul(s4, t1))
	t1 = Add(c(fmath.LogL1), Mul(s4, t1))
	t1 = Mul(s2, t1)
	t2 := Add(c(fmath.LogL4), Mul(s4, c(fmath.LogL6)))
	t2 = Add(c(fmath.LogL2), Mul(s4, t2))
	t2 = Mul(s4, t2)
	hfsq := Mul(Mul(c(0.5), f), f)
	general := Sub(
		Mul(k, c(fmath.Ln2Hi)),
		Sub(Sub(hfsq, Add(Mul(s, Add(hfsq, Add(t1, t2))), Mul(k, c(fmath.Ln2Lo)))), f),
	)
	out := Where(Equal(x, zero), c(math.Inf(-1)), general)
	out = Where(LessThan(x, zero), c(math.NaN()), out)
	return Where(nanOrInf, x, out)
}

// CrossEntropy is nn.CrossEntropy of M models side by side, each of the
// first count[m] (int32 [M]) samples of its logits [M, b, classes]
// (float32) and labels [M, b] (int32), in its order: the mean losses [M]
// (float64), the numbers of samples whose first largest logit is the
// label's [M] (int64), and the gradients of the mean losses (float32, [M,
// b, classes]). Each sample's exponentials are summed in class order and
// the samples' losses in sample order, as chains of adds; the rest is
// elementwise, or a maximum or a sum of exact terms, which any order gives
// alike. The samples from count on (a batch padded to b) add nothing:
// their losses are left out, their hits too, and their gradient is -0, a
// term that leaves any sum as it was.
func CrossEntropy(logits, labels, count *Node) (loss, correct, grad *Node) {
	g := logits.Graph()
	d := logits.Shape().Dimensions
	models, b, classes := d[0], d[1], d[2]
	real := firstSamples(g, count, models, b)
	hi := ReduceAndKeep(logits, ReduceMax, 2)
	diff := Sub(logits, hi) // v - hi in float32, as the CPU subtracts
	d64 := ConvertDType(diff, dtypes.Float64)
	e := Exp64(d64)
	z := Add(Scalar(g, dtypes.Float64, 0), Slice(e, AxisRange(), AxisRange(), AxisElem(0)))
	for c := 1; c < classes; c++ {
		z = Add(z, Slice(e, AxisRange(), AxisRange(), AxisElem(c)))
	}
	lz := Log64(z) // [M, b, 1]
	class := Iota(g, shapes.Make(dtypes.Int32, models, b, classes), 2)
	label := Equal(class, BroadcastToDims(ExpandAxes(labels, -1), models, b, classes))
	ly := ReduceSum(Where(label, diff, ZerosLike(diff)), 2) // row[y] - hi: one term, the others zero
	terms := Sub(Reshape(lz, models, b), ConvertDType(ly, dtypes.Float64))
	loss = Zeros(g, shapes.Make(dtypes.Float64, models))
	for i := range b {
		at := func(v *Node) *Node { return Reshape(Slice(v, AxisRange(), AxisElem(i)), models) }
		loss = Where(at(real), Add(loss, at(terms)), loss)
	}
	n := ConvertDType(count, dtypes.Float64) // a division, as the CPU's (DivScalar multiplies by 1/b)
	loss = Div(loss, n)
	first := ReduceMin(Where(Equal(logits, hi), class, Scalar(g, dtypes.Int32, classes)), 2)
	correct = ReduceSum(ConvertDType(LogicalAnd(Equal(first, labels), real), dtypes.Int64), 1)
	perModel := func(v *Node) *Node { return BroadcastToDims(Reshape(v, models, 1, 1), models, b, classes) }
	count32 := ConvertDType(count, dtypes.Float32)
	inv := Div(OnesLike(count32), count32) // 1/float32(b), as the CPU divides
	grad = ConvertDType(Div(Exp64(Sub(d64, lz)), perModel(n)), dtypes.Float32)
	grad = Where(label, Sub(grad, perModel(inv)), grad)
	return loss, correct, onlyReal(grad, real, math.Copysign(0, -1))
}

// onlyReal is v [M, b, ...] with the samples that real [M, b] leaves out
// replaced by fill: +0 where they multiply a term of a sum over samples,
// -0 where they are a term or the other factor, so that their terms, -0,
// leave the sum as it was.
func onlyReal(v, real *Node, fill float64) *Node {
	dims := v.Shape().Dimensions
	at := []int{dims[0], dims[1]} // real as [M, b, 1, ...]
	for range dims[2:] {
		at = append(at, 1)
	}
	return Where(BroadcastToDims(Reshape(real, at...), dims...), v, filled(v.Graph(), v.DType(), fill, dims...))
}

// FullBatch is the counts of batches without padding: all of x's
// samples [M, b, ...], for each of its M models.
func FullBatch(x *Node) *Node {
	d := x.Shape().Dimensions
	return BroadcastToDims(Scalar(x.Graph(), dtypes.Int32, d[1]), d[0])
}
