//go:build xla

package gpu

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/internal/fmath"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/gpu/exact"
)

// ump doctor's check of the exact program (package exact) on the device
// against the CPU engine's bits, and the cases it computes.

// exactM, exactK and exactN shape the product CheckExactOrder computes:
// [m, k] by [n, k]ᵀ from a start of [m, n], with k long enough to carry
// rounding from term to term.
const exactM, exactK, exactN = 3, 37, 5

// CheckExactOrder runs on the device exact.FMA32 over fma32Cases,
// exact.Product over a small product, exact.Exp64 and exact.Log64 over
// expCases and logCases, exact.CrossEntropy over crossEntropyInputs and
// exact.Gradients over denseStepCase, and counts the results whose bits differ from the
// CPU engine's (fmath.FMA32 in its order, fmath.Exp, fmath.Log,
// nn.CrossEntropy, reference's step of gradients). A NaN counts as equal to
// a NaN whatever its payload.
func (d *Device) CheckExactOrder(reference Reference) (ExactCheck, error) {
	b, err := d.Backend()
	if err != nil {
		return ExactCheck{}, err
	}
	x, y, z := fma32Cases()
	a, w, start := productInputs()
	ex, lx := expCases(), logCases()
	logits, labels := crossEntropyInputs()
	dense, err := denseStepCase(reference)
	if err != nil {
		return ExactCheck{}, err
	}
	exec, err := NewExec(b, func(in []*Node) []*Node {
		logits := oneModel(in[8])
		loss, correct, grad := exact.CrossEntropy(logits, oneModel(in[9]), exact.FullBatch(logits))
		x := oneModel(in[11])
		denseLoss, denseGradients, err := exact.Gradients(
			dense.model,
			oneModel(in[10]),
			x,
			oneModel(in[12]),
			exact.FullBatch(x),
			nil,
		)
		if err != nil {
			panic(err) // Exec returns it
		}
		return []*Node{
			exact.FMA32(in[0], in[1], in[2]),
			exact.Product(oneModel(in[3]), oneModel(in[4]), oneModel(in[5])),
			exact.Exp64(in[6]),
			exact.Log64(in[7]),
			loss,
			correct,
			grad,
			denseLoss,
			denseGradients,
		}
	})
	if err != nil {
		return ExactCheck{}, err
	}
	defer exec.Finalize()
	out, err := exec.Exec(
		append([]any{tensors.FromFlatDataAndDimensions(x, len(x)), tensors.FromFlatDataAndDimensions(y, len(y)),
			tensors.FromFlatDataAndDimensions(z, len(z)), tensors.FromFlatDataAndDimensions(a, exactM, exactK),
			tensors.FromFlatDataAndDimensions(
				w,
				exactN,
				exactK,
			), tensors.FromFlatDataAndDimensions(start, exactM, exactN),
			tensors.FromFlatDataAndDimensions(ex, len(ex)), tensors.FromFlatDataAndDimensions(lx, len(lx)),
			tensors.FromFlatDataAndDimensions(
				logits,
				ceSamples,
				ceClasses,
			), tensors.FromFlatDataAndDimensions(labels, ceSamples)}, dense.args()...)...)
	if err != nil {
		return ExactCheck{}, fmt.Errorf("gpu engine: the exact-order check: %w", err)
	}
	defer finalize(out)
	got, exps, logs, ce, err := exactResults(out)
	if err != nil {
		return ExactCheck{}, err
	}
	denseLoss, err := tensors.CopyFlatData[float64](out[7])
	if err != nil {
		return ExactCheck{}, err
	}
	denseGradients, err := tensors.CopyFlatData[float32](out[8])
	if err != nil {
		return ExactCheck{}, err
	}
	check := ExactCheck{FMAs: len(x), Products: len(start), Exps: len(ex), Logs: len(lx), CrossEntropy: 2 + len(logits),
		DenseStep: 1 + len(dense.gradients), DenseStepDiffer: dense.differ(denseLoss[0], denseGradients)}
	for i := range x {
		if !sameBits(got[0][i], fmath.FMA32(x[i], y[i], z[i])) {
			check.FMAsDiffer++
		}
	}
	for i, want := range hostProduct(a, w, start) {
		if !sameBits(got[1][i], want) {
			check.ProductsDiffer++
		}
	}
	check.ExpsDiffer, check.LogsDiffer = differ(exps, ex, fmath.Exp), differ(logs, lx, fmath.Log)
	grad := make([]float32, len(logits))
	loss, correct := nn.CrossEntropy(logits, labels, ceClasses, grad)
	if math.Float64bits(ce.loss) != math.Float64bits(loss) {
		check.CrossEntropyDiffer++
	}
	if ce.correct != int64(correct) {
		check.CrossEntropyDiffer++
	}
	for i, want := range grad {
		if !sameBits(ce.grad[i], want) {
			check.CrossEntropyDiffer++
		}
	}
	return check, nil
}

// oneModel is v as the one model of package exact's M models side by
// side: [1, ...].
func oneModel(v *Node) *Node { return Reshape(v, append([]int{1}, v.Shape().Dimensions...)...) }

// crossEntropyResult is what exact.CrossEntropy computed on the device.
type crossEntropyResult struct {
	loss    float64
	correct int64
	grad    []float32
}

// exactResults copies the exact-order check's results from the device:
// the float32 fused multiply-adds and product, the exponentials and
// logarithms, and the cross-entropy.
func exactResults(out []*tensors.Tensor) (got [][]float32, exps, logs []float64, ce crossEntropyResult, err error) {
	got = make([][]float32, 2)
	for i := range got {
		if got[i], err = tensors.CopyFlatData[float32](out[i]); err != nil {
			return
		}
	}
	var loss []float64
	var correct []int64
	if exps, err = tensors.CopyFlatData[float64](out[2]); err != nil {
		return
	}
	if logs, err = tensors.CopyFlatData[float64](out[3]); err != nil {
		return
	}
	if loss, err = tensors.CopyFlatData[float64](out[4]); err != nil {
		return
	}
	if correct, err = tensors.CopyFlatData[int64](out[5]); err != nil {
		return
	}
	if ce.grad, err = tensors.CopyFlatData[float32](out[6]); err != nil {
		return
	}
	ce.loss, ce.correct = loss[0], correct[0]
	return got, exps, logs, ce, nil
}

// differ counts the elements of got whose bits differ from f of the
// input's, a NaN equal to a NaN.
func differ(got, in []float64, f func(float64) float64) int {
	n := 0
	for i, v := range in {
		if want := f(v); math.Float64bits(got[i]) != math.Float64bits(want) && !(got[i] != got[i] && want != want) {
			n++
		}
	}
	return n
}

// sameBits reports whether a and b are the same float32, bit for bit, or
// both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// fma32Cases are the triples CheckExactOrder computes: sums a float64
// rounds to a float32 midpoint, on both sides of it and of zero (where
// rounding the float64 sum again gives the wrong float32); sums that
// cancel; results below float32's normal range and beyond its largest;
// infinities, NaN and signed zeros; and random triples over a wide range
// of exponents.
func fma32Cases() (x, y, z []float32) {
	add := func(a, b, c float32) { x, y, z = append(x, a), append(y, b), append(z, c) }
	for e := -100; e <= 100; e += 25 {
		for _, sign := range []float32{1, -1} {
			// z = (1 + 2^-23) 2^e and x y = 2^(e-24) (1 ∓ 2^-46): the exact
			// sum lies just below (above) the midpoint above z, and a float64
			// rounds it onto the midpoint.
			zc := sign * float32(math.Ldexp(1+math.Ldexp(1, -23), e))
			for _, d := range []float64{-1, 1} {
				xc := float32(1 + d*math.Ldexp(1, -23))
				yc := sign * float32(math.Ldexp(1-d*math.Ldexp(1, -23), e-24))
				add(xc, yc, zc)
				add(xc, -yc, -zc)
			}
		}
	}
	tiny := float32(math.Ldexp(1, -130))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range [][3]float32{
		{tiny, 1.5, tiny}, {tiny, -0.75, tiny / 3}, {float32(math.Ldexp(1, -70)), float32(math.Ldexp(1, -70)), 0},
		{math.MaxFloat32, 2, 0}, {math.MaxFloat32, 1, math.MaxFloat32}, {inf, 1, -inf}, {inf, 0, 1}, {nan, 1, 2},
		{0, -1, 0}, {float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1))}, {3, 1.0 / 3, -1},
	} {
		add(c[0], c[1], c[2])
	}
	r := rng.New(86, "exact.FMA32-cases")
	for len(x) < 4096 {
		scaled := func(e int) float32 { return float32(math.Ldexp(2*r.Float64()-1, e)) }
		e := r.IntN(60) - 30
		xc, yc := scaled(e), scaled(r.IntN(60)-30)
		zc := scaled(e + r.IntN(10) - 5)
		if r.IntN(4) == 0 { // a sum that cancels most of its bits
			zc = -fmath.FMA32(xc, yc, 0) * (1 + float32(math.Ldexp(float64(r.IntN(9)-4), -22)))
		}
		add(xc, yc, zc)
	}
	return x, y, z
}

// productInputs are random inputs of CheckExactOrder's product.
func productInputs() (a, w, start []float32) {
	r := rng.New(86, "ordered-product")
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	return fill(exactM * exactK), fill(exactN * exactK), fill(exactM * exactN)
}

// hostProduct is exact.Product on the host: the CPU engine's gemm order
// (nn/cpu/gemm.go), each element from its start adding its k products in
// order with fmath.FMA32.
func hostProduct(a, w, start []float32) []float32 {
	out := make([]float32, len(start))
	for i := range exactM {
		for j := range exactN {
			acc := start[i*exactN+j]
			for l := range exactK {
				acc = fmath.FMA32(a[i*exactK+l], w[j*exactK+l], acc)
			}
			out[i*exactN+j] = acc
		}
	}
	return out
}

// expCases are the inputs of the exact-order check's exact.Exp: its special
// cases and their edges (NaN, infinities, signed zeros, |x| at 2^-28, the
// overflow and underflow thresholds and their neighbours), results below
// float64's normal range, the softmax's arguments (v - max, at most 0),
// and random arguments over the whole finite range.
func expCases() []float64 {
	next := math.Nextafter
	out := []float64{
		math.NaN(),
		math.Inf(1),
		math.Inf(-1),
		0,
		math.Copysign(0, -1),
		0x1p-28,
		-0x1p-28,
		next(0x1p-28, 0),
		-next(0x1p-28, 0),
		fmath.ExpOverflow,
		next(fmath.ExpOverflow, 1000),
		fmath.ExpUnderflow,
		next(fmath.ExpUnderflow, -1000),
		709.7,
		-708.5,
		-744.9,
		-745.1,
		1,
		-1,
		0.5,
		math.Ln2 / 2,
	}
	r := rng.New(86, "exp-cases")
	for len(out) < 2048 {
		switch len(out) % 3 {
		case 0:
			out = append(out, -math.Abs(10*r.NormFloat64()))
		case 1:
			out = append(out, -745.2+r.Float64()*40)
		default:
			out = append(out, -750+r.Float64()*1462)
		}
	}
	return out
}

// logCases are the inputs of the exact-order check's exact.Log: its special
// cases (NaN, +Inf, zeros, negatives), subnormals, the edge at √2/2, the
// softmax's sums (from 1 to the classes), and random positive numbers of
// every exponent.
func logCases() []float64 {
	next := math.Nextafter
	out := []float64{
		math.NaN(),
		math.Inf(1),
		0,
		math.Copysign(0, -1),
		-1,
		math.Inf(-1),
		5e-324,
		0x1p-1022,
		next(0x1p-1022, 0),
		1e-310,
		1,
		next(1, 2),
		next(1, 0),
		math.Sqrt2 / 2,
		next(math.Sqrt2/2, 1),
		next(math.Sqrt2/2, 0),
		2,
		10,
		math.MaxFloat64,
	}
	r := rng.New(86, "log-cases")
	for len(out) < 2048 {
		if len(out)%2 == 0 {
			out = append(out, 1+61*r.Float64())
			continue
		}
		out = append(out, math.Ldexp(1+r.Float64(), r.IntN(2098)-1074))
	}
	return out
}

// The cross-entropy the exact-order check computes: ceSamples rows of
// ceClasses logits. ceSamples is no power of two, so that a division by
// it differs from a multiplication by its reciprocal.
const ceSamples, ceClasses = 15, 10

// crossEntropyInputs are its logits and labels: rows whose largest logit
// is shared by two classes (the first counts), rows whose spread leaves
// exponentials below float64's normal range or at 0, and random rows.
func crossEntropyInputs() (logits []float32, labels []int32) {
	r := rng.New(86, "cross-entropy")
	logits = make([]float32, ceSamples*ceClasses)
	labels = make([]int32, ceSamples)
	for i := range ceSamples {
		row := logits[i*ceClasses:][:ceClasses]
		for c := range row {
			row[c] = float32(3 * r.NormFloat64())
		}
		switch i % 4 {
		case 0: // a tie for the largest, the label on its second
			row[2], row[7] = 9, 9
			labels[i] = 7
			continue
		case 1: // exponentials far below 1, some subnormal or 0
			row[1], row[4] = -720, -760
		}
		labels[i] = int32(r.IntN(ceClasses))
	}
	return logits, labels
}
