//go:build xla

package gpu

import (
	"bytes"
	"flag"
	"math"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// TestCheckCompile: the doctor's check program passes on every backend
// (gpuBackends), within float32 rounding of the host's float64; on XLA
// the program compiled asks for HIGHEST precision on every dot_general of
// its StableHLO (logged by GoMLX at klog V(2)), so that no float32
// product is left to TF32.
func TestCheckCompile(t *testing.T) {
	for name, dev := range gpuBackends(t) {
		t.Run(name, func(t *testing.T) {
			hlo := &syncBuffer{}
			if name == "xla" {
				logTo(t, hlo, "executable=2")
			}
			check, err := dev.CheckCompile()
			if err != nil {
				t.Fatal(err)
			}
			if check.FromHost == 0 || check.FromHost > CheckTolerance || check.FromGo > CheckTolerance {
				t.Errorf(
					"check on %q: %.3g from the host, %.3g from the Go backend, want within (0, %g]",
					check.Backend,
					check.FromHost,
					check.FromGo,
					CheckTolerance,
				)
			}
			if name != "xla" {
				return
			}
			program := hlo.String()
			dots, highest := strings.Count(
				program,
				"stablehlo.dot_general",
			), strings.Count(
				program,
				"precision HIGHEST>, #stablehlo<precision HIGHEST>",
			)
			if dots == 0 || highest != dots {
				t.Errorf(
					"the check program's StableHLO has %d dot_general, %d of them at HIGHEST precision:\n%s",
					dots,
					highest,
					program,
				)
			}
		})
	}
}

// TestCheckInputsExposeTF32: the check's numbers, rounded to TF32's 10
// mantissa bits as cuBLAS rounds a product's inputs under TF32, give a
// result further from the float64 one than CheckTolerance, and so does a
// loop one trip short: the check fails on either.
func TestCheckInputsExposeTF32(t *testing.T) {
	data := checkInputs()
	want := checkReference(data)
	tf32 := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			frac, exp := math.Frexp(float64(x))
			out[i] = float32(math.Ldexp(math.RoundToEven(math.Ldexp(frac, 11)), exp-11))
		}
		return out
	}
	short := checkReference(
		checkData{data.table[:(checkTrips-1)*checkRows], data.u, data.w},
	) // one trip fewer: the rows beyond are not summed
	rounded := checkReference(checkData{tf32(data.table), data.u, tf32(data.w)})
	for what, got := range map[string][]float64{"TF32": rounded, "a loop one trip short": short} {
		worst := 0.0
		for k := range want {
			worst = max(worst, math.Abs(got[k]-want[k])/math.Abs(want[k]))
		}
		if worst <= CheckTolerance {
			t.Errorf("%s is within %.3g of float64: the check cannot tell it", what, worst)
		}
		t.Logf("%s: %.3g from float64", what, worst)
	}
}

// syncBuffer is a buffer klog may write from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// logTo sends GoMLX's klog lines of the given -vmodule to w until the test
// ends.
func logTo(t testing.TB, w *syncBuffer, vmodule string) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	set := func(values map[string]string) {
		for name, v := range values {
			if err := fs.Set(name, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(
		map[string]string{
			"logtostderr":     "false",
			"alsologtostderr": "false",
			"stderrthreshold": "FATAL",
			"vmodule":         vmodule,
		},
	)
	klog.SetOutput(w)
	t.Cleanup(func() { set(map[string]string{"vmodule": "", "logtostderr": "true"}) })
}
