package gpu

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// ErrNoGPU is the answer of a build without the GPU engine (built without
// -tags xla) to anything that needs it.
var ErrNoGPU = errors.New("this ump was built without the GPU engine; rebuild with -tags xla (make build-gpu)")

// SetEnvironment puts Environment into the process's environment
// before XLA and cuBLAS load and read it: each variable where the user has
// not set it, and in XLA_FLAGS each of the engine's flags the user's own do
// not name, ahead of theirs (the user's setting of a flag wins).
func SetEnvironment() {
	for k, v := range Environment() {
		old, set := os.LookupEnv(k)
		switch {
		case !set:
			os.Setenv(k, v)
		case k == "XLA_FLAGS":
			os.Setenv(k, joinFlags(v, old))
		}
	}
}

// joinFlags is ours' flags that theirs do not name (by what precedes "="),
// then theirs.
func joinFlags(ours, theirs string) string {
	named := map[string]bool{}
	for _, f := range strings.Fields(theirs) {
		name, _, _ := strings.Cut(f, "=")
		named[name] = true
	}
	var out []string
	for _, f := range strings.Fields(ours) {
		if name, _, _ := strings.Cut(f, "="); !named[name] {
			out = append(out, f)
		}
	}
	return strings.Join(append(out, strings.Fields(theirs)...), " ")
}

// CompileCheck is what Device.CheckCompile found: a small program built the
// way the GPU engine's round program is — a While loop of three trips whose
// body captures a value of the enclosing graph and gathers a row by the
// loop index, and float32 products of numbers that TF32 would round —
// compiled and run on the device.
type CompileCheck struct {
	Backend     string  // the backend opened, in GoMLX's syntax (GOMLX_BACKEND)
	Description string  // GoMLX's description of it: the PJRT plugin and its version
	Seconds     float64 // to compile and run the program
	FromHost    float64 // the largest relative difference from the host's float64 result
	FromGo      float64 // ... from GoMLX's pure-Go backend's result
}

// Reference makes the engine whose bits the exact program must give,
// the CPU engine (engines.CPUReference hands in cpu.New): the exact-order
// check computes its dense step with it.
type Reference func(model string, data *datasets.Dataset, seed uint64) (nn.Engine, error)

// ExactCheck is what Device.CheckExactOrder found: of FMAs float32 fused
// multiply-adds, the Products elements of a product in the CPU engine's
// order, and Exps and Logs float64 exponentials and logarithms computed
// on the device as the exact round program will (docs/gpu.md), how many
// differ in their bits from the CPU engine's.
type ExactCheck struct {
	FMAs, FMAsDiffer         int
	Products, ProductsDiffer int
	Exps, ExpsDiffer         int
	Logs, LogsDiffer         int
	// CrossEntropy counts a softmax cross-entropy's loss, its number of
	// correct samples and its gradient's elements.
	CrossEntropy, CrossEntropyDiffer int
	// DenseStep counts a small mlp's step of gradients: its loss and its
	// gradient's elements.
	DenseStep, DenseStepDiffer int
}

// String says what the check found, as ump doctor prints it.
func (c ExactCheck) String() string {
	verdict := "every result has the CPU engine's bits"
	if c.FMAsDiffer+c.ProductsDiffer+c.ExpsDiffer+c.LogsDiffer+c.CrossEntropyDiffer+c.DenseStepDiffer > 0 {
		verdict = fmt.Sprintf(
			"%d, %d, %d, %d, %d and %d differ from the CPU engine's bits: the exact round program (docs/gpu.md) "+
				"cannot run here as designed",
			c.FMAsDiffer,
			c.ProductsDiffer,
			c.ExpsDiffer,
			c.LogsDiffer,
			c.CrossEntropyDiffer,
			c.DenseStepDiffer,
		)
	}
	return fmt.Sprintf(
		"%d float32 fused multiply-adds, a %d-element product in the CPU engine's order, %d exponentials, %d "+
			"logarithms, a "+
			"softmax cross-entropy's %d figures and an mlp's step of gradients (%d figures), emulated in float64: %s",
		c.FMAs,
		c.Products,
		c.Exps,
		c.Logs,
		c.CrossEntropy,
		c.DenseStep,
		verdict,
	)
}

// CheckTolerance is the relative difference CheckCompile accepts: float32
// rounding (about 1e-7 here) passes; TF32's (about 1e-4) or a loop one trip
// short (a third off) does not.
const CheckTolerance = 2e-6
