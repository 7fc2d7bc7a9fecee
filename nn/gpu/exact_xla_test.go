//go:build xla

package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/fmath"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu/exact"
	"github.com/ump-lab/ump/nn/nntest"
)

// TestGPUExactOrderGivesTheCPUBits runs ump doctor's exact-order check on
// GoMLX's Go backend, where every fused multiply-add emulated in float64,
// every element of a product in the CPU engine's order, every exponential
// and logarithm, a softmax cross-entropy's loss, number correct and
// gradient (nn.CrossEntropy's), and a small mlp's step of gradients must
// have the CPU engine's bits; on XLA,
// where a plugin is found, it logs what the check found, which the kit's
// agree phase then reports. The cases
// must hold sums that a float64 rounds onto a float32 midpoint, where
// rounding it again to float32 gives another float32 than the CPU's
// fused multiply-add: without them the check could not tell exact.FMA32 from
// the plain sum.
func TestGPUExactOrderGivesTheCPUBits(t *testing.T) {
	x, y, z := fma32Cases()
	twice := 0
	for i := range x {
		if !sameBits(float32(float64(x[i])*float64(y[i])+float64(z[i])), fmath.FMA32(x[i], y[i], z[i])) {
			twice++
		}
	}
	if twice < 8 {
		t.Errorf(
			"%d of the %d cases round twice to another float32: they do not reach what rounding to odd is for",
			twice,
			len(x),
		)
	}
	for name, dev := range gpuBackends(t) {
		t.Run(name, func(t *testing.T) {
			c, err := dev.CheckExactOrder(cpuReference)
			if err != nil {
				t.Fatal(err)
			}
			dense, err := denseStepCase(cpuReference)
			if err != nil {
				t.Fatal(err)
			}
			if c.FMAs != len(x) || c.Products != exactM*exactN || c.Exps != len(expCases()) ||
				c.Logs != len(logCases()) ||
				c.CrossEntropy != 2+ceSamples*ceClasses ||
				c.DenseStep != 1+dense.model.Params {
				t.Fatalf("the check computed other cases than it was given: %s", c)
			}
			if name != "gomlx-go" { // on XLA it is what the exact program would meet, which no engine uses yet
				t.Logf("exact order on %s: %s", name, c)
				return
			}
			if c.FMAsDiffer+c.ProductsDiffer+c.ExpsDiffer+c.LogsDiffer+c.CrossEntropyDiffer+c.DenseStepDiffer != 0 {
				t.Errorf("%s", c)
			}
			t.Logf("%s (%d cases round twice to another float32)", c, twice)
		})
	}
	if !sameBits(float32(math.NaN()), float32(-math.NaN())) || sameBits(0, float32(math.Copysign(0, -1))) {
		t.Error("sameBits does not take NaNs as equal, or takes -0 as +0")
	}
}

// exactModels are the models the exact program's tests compute: LeNet on
// MNIST-shaped images (its first convolution padded by 2, the taps on rows
// of padding left out: nn.ConvPlanes; its second nn.ConvLanes) and on
// CIFAR-shaped ones (three channels, no padding), the mlp and logreg (no
// hidden layer).
var exactModels = []struct {
	name, model string
	shape       []int
}{
	{"lenet-mnist", "lenet", []int{1, 28, 28}},
	{"lenet-cifar10", "lenet", []int{3, 32, 32}},
	{"mlp-mnist", "mlp", []int{1, 28, 28}},
	{"logreg-mnist", "logreg", []int{1, 28, 28}},
}

// exactOnXLA is the one of exactModels the tests compute on XLA too: the
// programs hold thousands of operations (the convolutions' taps are
// unrolled), whose compilation a GPU host's agree phase pays within its
// time limit, and it holds every layer (padding rows, both direct orders,
// pooling, dropout).
const exactOnXLA = "lenet-mnist"

// TestGPUExactGradientGivesTheCPUBits computes a step of gradients of
// exactModels (LeNet's convolutions, pooling and dropout among them) on
// a batch of 7 random images, with exact.Gradient and with the CPU
// engine, from parameters one step of SGD away from Init: on GoMLX's Go
// backend the loss and every element of the gradient must have the CPU
// engine's bits; on XLA the test logs how many differ, which the kit's
// agree phase reports. A batch of 7: the mean's division by 7 is no
// multiplication by its reciprocal. The batch comes padded with two
// samples of NaNs, as the round program pads a worker's short batch, and
// a count of 7: a padded sample that reached any sum would show.
func TestGPUExactGradientGivesTheCPUBits(t *testing.T) {
	batch := []int{3, 0, 9, 12, 5, 7, 1}
	for _, c := range exactModels {
		data := nntest.RandomData(c.shape, 10, 16, 0, 0)
		all, size := standardised(data, &data.Train), data.Train.Len()
		var x []float32
		for _, i := range batch {
			x = append(x, all[i*len(all)/size:][:len(all)/size]...)
		}
		step, err := newGradientStep(cpuReference, c.model, data, batch, x)
		if err != nil {
			t.Fatal(err)
		}
		for backend, dev := range gpuBackends(t) {
			if backend != "gomlx-go" && c.name != exactOnXLA {
				continue
			}
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				out := runExact(t, dev, func(in []*Node) []*Node {
					count := Const(in[0].Graph(), []int32{int32(len(batch))})
					loss, gradients, err := exact.Gradients(
						step.model,
						oneModel(in[0]),
						oneModel(in[1]),
						oneModel(in[2]),
						count,
						in[3:],
					)
					if err != nil {
						panic(err)
					}
					return []*Node{loss, gradients}
				}, paddedArgs(step, 2)...)
				loss, gradients := flat[float64](t, out[0]), flat[float32](t, out[1])
				differ := step.differ(loss[0], gradients)
				found := fmt.Sprintf(
					"%s's step of gradients: %d of its %d figures differ from the CPU engine's bits (loss %v, the "+
						"CPU's %v)",
					c.name,
					differ,
					1+len(step.gradients),
					loss[0],
					step.loss,
				)
				if backend != "gomlx-go" { // reported by the kit's agree phase
					t.Logf("exact order on %s: %s", backend, found)
				} else if differ != 0 {
					t.Error(found)
				}
			})
		}
	}
}

// TestGPUExactEvaluationGivesTheCPUBits scores exactModels on a test
// split of 40 samples with exact.Forward and exact.CrossEntropy, and with the
// CPU engine's Evaluate, from parameters one step of SGD away from Init.
// On GoMLX's Go backend the loss and accuracy must have the CPU engine's
// bits; on XLA the test logs what it found, which the kit's agree phase
// reports.
func TestGPUExactEvaluationGivesTheCPUBits(t *testing.T) {
	for _, c := range exactModels {
		data := nntest.WithTest(nntest.RandomData(c.shape, 10, 64, 0, 0), 40)
		e, err := cpu.New(c.model, data, 7)
		if err != nil {
			t.Fatal(err)
		}
		p, g := make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(p)
		if err := e.Gradients(nn.Step{}, [][]float32{p}, [][]float32{g}, [][]int{{0, 1, 2, 3, 4, 5, 6}}, make(
			[]float64, 1)); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			p[i] -= 0.1 * g[i]
		}
		want, err := e.Evaluate([][]float32{p}, &data.Test)
		if err != nil {
			t.Fatal(err)
		}
		model, err := nn.NewModel(c.model, nn.Input{Shape: data.Shape, Classes: data.Classes})
		if err != nil {
			t.Fatal(err)
		}
		x, n := standardised(data, &data.Test), data.Test.Len()
		for backend, dev := range gpuBackends(t) {
			if backend != "gomlx-go" && c.name != exactOnXLA {
				continue
			}
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				out := runExact(t, dev, func(in []*Node) []*Node {
					x := oneModel(in[1])
					acts, err := exact.Forward(model, oneModel(in[0]), x, nil)
					if err != nil {
						panic(err)
					}
					loss, correct, _ := exact.CrossEntropy(acts[len(acts)-1], oneModel(in[2]), exact.FullBatch(x))
					return []*Node{loss, correct}
				}, tensors.FromFlatDataAndDimensions(p, len(p)), tensors.FromFlatDataAndDimensions(x, append([]int{n},
					c.shape...)...),
					tensors.FromFlatDataAndDimensions(data.Test.Labels, n))
				loss, correct := flat[float64](t, out[0]), flat[int64](t, out[1])
				// Evaluate's arithmetic on one chunk's mean loss and hits.
				got := nn.Score{Loss: loss[0] * float64(n) / float64(n), Accuracy: float64(correct[0]) / float64(n)}
				found := fmt.Sprintf(
					"%s's evaluation: loss %v and accuracy %v, the CPU engine's %v and %v",
					c.name,
					got.Loss,
					got.Accuracy,
					want[0].Loss,
					want[0].Accuracy,
				)
				if backend != "gomlx-go" { // reported by the kit's agree phase
					t.Logf("exact order on %s: %s", backend, found)
				} else if math.Float64bits(got.Loss) != math.Float64bits(want[0].Loss) ||
					got.Accuracy != want[0].Accuracy {
					t.Error(found)
				}
			})
		}
	}
}

// paddedArgs are a step's arguments to exact.Gradient with its batch
// padded by `extra` samples: inputs of NaNs, label 0, every dropout unit
// kept.
func paddedArgs(step gradientStep, extra int) []any {
	b := step.xDims[0]
	size := len(step.x) / b
	x := slices.Clone(step.x)
	for range extra * size {
		x = append(x, float32(math.NaN()))
	}
	dims := append([]int{b + extra}, step.xDims[1:]...)
	args := []any{tensors.FromFlatDataAndDimensions(step.p, len(step.p)), tensors.FromFlatDataAndDimensions(x, dims...),
		tensors.FromFlatDataAndDimensions(append(slices.Clone(step.labels), make([]int32, extra)...), b+extra)}
	for _, m := range step.masks {
		units := len(m) / b
		padded := slices.Clone(m)
		for range extra * units {
			padded = append(padded, 1)
		}
		args = append(args, tensors.FromFlatDataAndDimensions(padded, len(padded)))
	}
	return args
}

// standardised is a split's images as the CPU engine feeds them, [n, C,
// H, W]: each pixel byte through the training split's per-channel map.
func standardised(data *datasets.Dataset, split *datasets.Split) []float32 {
	chans := data.Shape[0]
	lut := nn.Standardise(&data.Train, chans)
	hw := len(split.Pixels) / split.Len() / chans
	x := make([]float32, len(split.Pixels))
	for i, v := range split.Pixels {
		x[i] = lut[i/hw%chans][v]
	}
	return x
}

// TestGPUExactMixAndMeanAreTheCPUs: exact.Mix and exact.Mean over two
// cells of 5 workers give algorithms.Mixing's Apply and algorithms.Mean
// bit for bit: weights such as 1/3 (whose products round); an infinity
// in a worker that some rows leave out (a skipped term, where adding 0
// times it would be a NaN); and columns made where a float64's last bit
// reaches the float32 (mixedInOrder): sums whose order decides (a large
// value cancelled before a small one is added) and means that are a
// float32 midpoint exactly, which the division by 5 gives and a
// multiplication by its reciprocal misses.
func TestGPUExactMixAndMeanAreTheCPUs(t *testing.T) {
	const cells, n, p = 2, 5, 48
	r := rng.New(86, "mix")
	mixes := []algorithms.Mixing{ringOf(n)}
	w := make([][]float64, n) // a star round worker 0: leaves 1..4 see only 0 and themselves
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i := 1; i < n; i++ {
		w[0][i], w[i][0], w[i][i] = 0.2, 0.2, 0.8
	}
	w[0][0] = 0.2
	star, err := algorithms.NewMixing(w)
	if err != nil {
		t.Fatal(err)
	}
	mixes = append(mixes, star)
	x := make([][][]float32, cells) // [cell][worker][p]
	var flatX []float32
	dense := make([]float64, 0, cells*n*n)
	for c := range x {
		for i := range n {
			v := make([]float32, p)
			for k := range v {
				v[k] = float32(r.NormFloat64())
			}
			x[c] = append(x[c], v)
			flatX = append(flatX, v...)
			row := make([]float64, n)
			for _, e := range mixes[c].Rows[i] {
				row[e.J] = e.W
			}
			dense = append(dense, row...)
		}
	}
	x[1][3][5] = float32(math.Inf(1)) // the star's leaves 1, 2 and 4 leave worker 3 out
	mixedInOrder(x[0], r)
	flatX = flatX[:0]
	for c := range x {
		for i := range n {
			flatX = append(flatX, x[c][i]...)
		}
	}
	out := runExact(t, device(GoBackend), func(in []*Node) []*Node {
		return []*Node{exact.Mix(in[0], in[1], cells, n), exact.Mean(in[0], cells, n)}
	}, tensors.FromFlatDataAndDimensions(flatX, cells*n, p), tensors.FromFlatDataAndDimensions(dense, cells, n, n))
	mixed, mean := flat[float32](t, out[0]), flat[float32](t, out[1])
	for c := range x {
		want := make([][]float32, n)
		for i := range want {
			want[i] = make([]float32, p)
		}
		mixes[c].Apply(want, x[c])
		wantMean := make([]float32, p)
		algorithms.Mean(wantMean, x[c])
		for i := range n {
			for k := range p {
				at := (c*n+i)*p + k
				if !sameBits(mixed[at], want[i][k]) {
					t.Errorf("cell %d worker %d element %d: exact.Mix %v, Apply %v", c, i, k, mixed[at], want[i][k])
				}
				if !sameBits(mean[at], wantMean[k]) {
					t.Errorf("cell %d worker %d element %d: exact.Mean %v, Mean %v", c, i, k, mean[at], wantMean[k])
				}
			}
		}
	}
}

// mixedInOrder sets columns of x [worker][p] (5 workers, 9 columns)
// where only the CPU's order gives the CPU's float32: in column 8 workers
// 0 and 1 hold 2^60 and -2^60 and worker 2 holds 1 (added after they
// cancel, the 1 stays; before, it is lost); in columns 0 to 7 workers 0,
// 1 and 2 hold the float32 parts of a sum s (found from r) whose fifth
// lies so near a float32 midpoint that s / 5 and s times the float64
// nearest 1/5 round to different float32s.
func mixedInOrder(x [][]float32, r *rand.Rand) {
	for i := range x {
		for k := range 9 {
			x[i][k] = 0
		}
	}
	x[0][8], x[1][8], x[2][8] = 0x1p60, -0x1p60, 1
	for k := 0; k < 8; {
		m := (1 + float64(2*r.IntN(1<<22)+1)*0x1p-24) * math.Ldexp(1, r.IntN(21)-10) // a float32 midpoint
		s := math.Nextafter(5*m, math.Inf(r.IntN(2)*2-1))
		for range r.IntN(16) {
			s = math.Nextafter(s, 5*m+(s-5*m)*2)
		}
		a := float32(s)
		b := float32(s - float64(a))
		c := float32(s - float64(a) - float64(b))
		if float64(a)+float64(b)+float64(c) != s || float32(s/5) == float32(s*(1.0/5)) {
			continue
		}
		x[0][k], x[1][k], x[2][k] = a, b, c
		k++
	}
}

// runExact builds a graph of build on dev, runs it on args and returns its
// outputs, freed when the test ends.
func runExact(t *testing.T, dev *Device, build func(in []*Node) []*Node, args ...any) []*tensors.Tensor {
	t.Helper()
	b, err := dev.Backend()
	if err != nil {
		t.Fatal(err)
	}
	exec, err := NewExec(b, build)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exec.Finalize)
	out, err := exec.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { finalize(out) })
	return out
}

// flat is a device result's elements.
func flat[T interface{ float32 | float64 | int64 }](t *testing.T, out *tensors.Tensor) []T {
	t.Helper()
	v, err := tensors.CopyFlatData[T](out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// cpuReference is the CPU engine, as the exact-order check takes it.
func cpuReference(model string, data *datasets.Dataset, seed uint64) (nn.Engine, error) {
	return cpu.New(model, data, seed)
}
