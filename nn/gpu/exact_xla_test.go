//go:build xla

package gpu

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/internal/fmath"
)

// TestGPUExactOrderGivesTheCPUBits runs ump doctor's exact-order check on
// GoMLX's Go backend, where every fused multiply-add emulated in float64,
// every element of a product in the CPU engine's order, every exponential
// and logarithm, and a softmax cross-entropy's loss, number correct and
// gradient must have the CPU engine's bits (nn.CrossEntropy's); on XLA,
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
			c, err := dev.CheckExactOrder()
			if err != nil {
				t.Fatal(err)
			}
			if c.FMAs != len(x) || c.Products != exactM*exactN || c.Exps != len(expCases()) || c.Logs != len(logCases()) ||
				c.CrossEntropy != 2+ceSamples*ceClasses {
				t.Fatalf("the check computed other cases than it was given: %s", c)
			}
			if name != "gomlx-go" { // on XLA it is what the exact program would meet, which no engine uses yet
				t.Logf("exact order on %s: %s", name, c)
				return
			}
			if c.FMAsDiffer+c.ProductsDiffer+c.ExpsDiffer+c.LogsDiffer+c.CrossEntropyDiffer != 0 {
				t.Errorf("%s", c)
			}
			t.Logf("%s (%d cases round twice to another float32)", c, twice)
		})
	}
	if !sameBits(float32(math.NaN()), float32(-math.NaN())) || sameBits(0, float32(math.Copysign(0, -1))) {
		t.Error("sameBits does not take NaNs as equal, or takes -0 as +0")
	}
}
