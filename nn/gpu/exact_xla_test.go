//go:build xla

package gpu

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/fmath"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
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
// fused multiply-add: without them the check could not tell fma32 from
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
		t.Errorf("%d of the %d cases round twice to another float32: they do not reach what rounding to odd is for", twice, len(x))
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
			if c.FMAs != len(x) || c.Products != exactM*exactN || c.Exps != len(expCases()) || c.Logs != len(logCases()) ||
				c.CrossEntropy != 2+ceSamples*ceClasses || c.DenseStep != 1+dense.model.Params {
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

// TestGPUExactDenseGradientGivesTheCPUBits computes a step of gradients
// of the dense models (mlp and logreg, on MNIST-shaped random images, a
// batch of 7) with exactDenseGradient and with the CPU engine, from
// parameters one step of SGD away from Init: on GoMLX's Go backend the
// loss and every element of the gradient must have the CPU engine's bits;
// on XLA the test logs how many differ, which the kit's agree phase
// reports. The images are larger than doctor's case (784 inputs, through
// Flatten), and logreg has no hidden layer.
func TestGPUExactDenseGradientGivesTheCPUBits(t *testing.T) {
	data := nntest.RandomData([]int{1, 28, 28}, 10, 16, 0, 0)
	lut := nn.Standardise(&data.Train, 1)
	batch := []int{3, 0, 9, 12, 5, 7, 1}
	var x []float32
	for _, i := range batch {
		for _, v := range data.Train.Pixels[i*28*28:][:28*28] {
			x = append(x, lut[0][v])
		}
	}
	for _, name := range []string{"mlp", "logreg"} {
		step, err := newDenseStep(cpuReference, name, data, batch, x)
		if err != nil {
			t.Fatal(err)
		}
		for backend, dev := range gpuBackends(t) {
			t.Run(backend+"/"+name, func(t *testing.T) {
				b, err := dev.Backend()
				if err != nil {
					t.Fatal(err)
				}
				exec, err := NewExec(b, func(in []*Node) []*Node {
					loss, gradients, err := exactDenseGradient(step.model, in[0], in[1], in[2])
					if err != nil {
						panic(err)
					}
					return []*Node{loss, gradients}
				})
				if err != nil {
					t.Fatal(err)
				}
				defer exec.Finalize()
				out, err := exec.Exec(step.args()...)
				if err != nil {
					t.Fatal(err)
				}
				defer finalize(out)
				loss, err := tensors.CopyFlatData[float64](out[0])
				if err != nil {
					t.Fatal(err)
				}
				gradients, err := tensors.CopyFlatData[float32](out[1])
				if err != nil {
					t.Fatal(err)
				}
				differ := step.differ(loss[0], gradients)
				found := fmt.Sprintf("%s's step of gradients: %d of its %d figures differ from the CPU engine's bits (loss %v, the CPU's %v)",
					name, differ, 1+len(step.gradients), loss[0], step.loss)
				if backend != "gomlx-go" { // reported by the kit's agree phase
					t.Logf("exact order on %s: %s", backend, found)
				} else if differ != 0 {
					t.Error(found)
				}
			})
		}
	}
}

// cpuReference is the CPU engine, as the exact-order check takes it.
func cpuReference(model string, data *datasets.Dataset, seed uint64) (nn.Engine, error) {
	return cpu.New(model, data, seed)
}
