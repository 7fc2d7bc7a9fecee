//go:build xla

package nn

import (
	"fmt"
	"math"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// checkTrips, checkRows and checkCols are the check program's loop trips
// and the shape of its matrix.
const checkTrips, checkRows, checkCols = 3, 6, 5

// referenceDevice is GoMLX's pure-Go backend, CheckCompile's reference.
var referenceDevice = NewDevice(GoBackend)

// CheckCompile compiles and runs on the device a small program built the
// way the round program is (checkProgram) and compares its result with
// the host's float64 arithmetic and with GoMLX's pure-Go backend.
func (d *Device) CheckCompile() (CompileCheck, error) {
	b, err := d.Backend()
	if err != nil {
		return CompileCheck{}, err
	}
	check := CompileCheck{Backend: d.config, Description: b.Description()}
	table, w := checkInputs()
	start := time.Now()
	got, err := runCheck(d, table, w)
	if err != nil {
		return check, fmt.Errorf("gpu engine: the check program: %w", err)
	}
	check.Seconds = time.Since(start).Seconds()
	want := checkReference(table, w)
	reference := got
	if goReference, err := referenceDevice.Backend(); err != nil {
		return check, err
	} else if b.Name() != goReference.Name() {
		if reference, err = runCheck(referenceDevice, table, w); err != nil {
			return check, fmt.Errorf("gpu engine: the check program on GoMLX's Go backend: %w", err)
		}
	}
	for k := range got {
		check.FromHost = max(check.FromHost, math.Abs(float64(got[k])-want[k])/math.Abs(want[k]))
		check.FromGo = max(check.FromGo, math.Abs(float64(got[k]-reference[k]))/math.Abs(want[k]))
	}
	if !(check.FromHost <= CheckTolerance) || !(check.FromGo <= CheckTolerance) {
		return check, fmt.Errorf("gpu engine: the check program's result is %.2g (relative) from the host's float64 and %.2g from GoMLX's Go backend, beyond float32 rounding (%.0g): %v, want %v",
			check.FromHost, check.FromGo, CheckTolerance, got, want)
	}
	return check, nil
}

// checkProgram is what the round program relies on, in small: a While
// loop of checkTrips trips whose body gathers row i of table by the loop
// index and adds that row times w — a value of the enclosing graph, which
// the body captures — to the loop's sum, a float32 DotGeneral.
func checkProgram(table, w *Node) *Node {
	g := table.Graph()
	index, sum := shapes.Make(dtypes.Int32), shapes.Make(dtypes.Float32, 1, checkCols)
	more := NewClosure(g, func(g *Graph) []*Node {
		i := Parameter(g, "i", index)
		Parameter(g, "sum", sum)
		return []*Node{LessThan(i, Const(g, int32(checkTrips)))}
	})
	body := NewClosure(g, func(g *Graph) []*Node {
		i, s := Parameter(g, "i", index), Parameter(g, "sum", sum)
		row := Reshape(Gather(table, Reshape(i, 1)), 1, checkRows)
		return []*Node{Add(i, Const(g, int32(1))), Add(s, Einsum("ij,jk->ik", row, w))}
	})
	return While(more, body, Const(g, int32(0)), Zeros(g, sum))[1]
}

// checkInputs are numbers whose products float32 keeps and TF32 (10
// mantissa bits) rounds: 1 + m 2^-11 and 1 - m 2^-12, exact in float32.
func checkInputs() (table, w []float32) {
	table, w = make([]float32, checkTrips*checkRows), make([]float32, checkRows*checkCols)
	for i := range table {
		table[i] = float32(1 + math.Ldexp(float64(i+1), -11))
	}
	for i := range w {
		w[i] = float32(1 - math.Ldexp(float64(i+1), -12))
	}
	return table, w
}

// checkReference is checkProgram's result in float64 on the host: the sum
// of table's rows times w.
func checkReference(table, w []float32) []float64 {
	out := make([]float64, checkCols)
	for i := range len(table) / checkRows {
		for j := range checkRows {
			for k := range out {
				out[k] += float64(table[i*checkRows+j]) * float64(w[j*checkCols+k])
			}
		}
	}
	return out
}

// runCheck compiles and runs checkProgram on a device.
func runCheck(d *Device, table, w []float32) ([]float32, error) {
	b, err := d.Backend()
	if err != nil {
		return nil, err
	}
	exec, err := NewExec(b, checkProgram)
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(table, checkTrips, checkRows),
		tensors.FromFlatDataAndDimensions(w, checkRows, checkCols))
	if err != nil {
		return nil, err
	}
	fl, err := download(out)
	if err != nil {
		return nil, err
	}
	return fl[0], nil
}
