//go:build xla

package gpu

import (
	"fmt"
	"math"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/ump-lab/ump/nn/gpu/loop"
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
	data := checkInputs()
	start := time.Now()
	got, err := runCheck(d, data)
	if err != nil {
		return check, fmt.Errorf("gpu engine: the check program: %w", err)
	}
	check.Seconds = time.Since(start).Seconds()
	want := checkReference(data)
	reference := got
	if goReference, err := referenceDevice.Backend(); err != nil {
		return check, err
	} else if b.Name() != goReference.Name() {
		if reference, err = runCheck(referenceDevice, data); err != nil {
			return check, fmt.Errorf("gpu engine: the check program on GoMLX's Go backend: %w", err)
		}
	}
	for k := range got {
		check.FromHost = max(check.FromHost, math.Abs(float64(got[k])-want[k])/math.Abs(want[k]))
		check.FromGo = max(check.FromGo, math.Abs(float64(got[k]-reference[k]))/math.Abs(want[k]))
	}
	if !(check.FromHost <= CheckTolerance) || !(check.FromGo <= CheckTolerance) {
		return check, fmt.Errorf(
			"gpu engine: the check program's result is %.2g (relative) from the host's float64 and %.2g from GoMLX's "+
				"Go backend, beyond float32 rounding (%.0g): %v, want %v",
			check.FromHost,
			check.FromGo,
			CheckTolerance,
			got,
			want,
		)
	}
	return check, nil
}

// checkProgram is what the round program relies on, in small: a loop of
// checkTrips trips built as Steps builds the local steps (loop.Counted),
// whose body uses values of the enclosing function as the loop carries
// them. Trip i gathers row i of table by the loop's counter, scales it by
// u elementwise (r = t_i * u), and adds r w (a float32 DotGeneral) and the
// sum of r - u (a float32 reduction) to the loop's sum; the enclosing
// function adds the sum of u (a reduction of the same kind, so the body
// must build its own).
func checkProgram(table, u, w *Node) *Node {
	g := table.Graph()
	sum := Zeros(g, shapes.Make(dtypes.Float32, 1, checkCols))
	out := loop.Counted(
		g,
		checkTrips,
		1,
		[]*Node{table, u, w},
		[]*Node{sum},
		func(b *loop.Body, i *Node, state []*Node) []*Node {
			row := Reshape(Gather(b.Use(table), Reshape(i, 1)), 1, checkRows)
			r := Mul(row, b.Use(u))
			extra := BroadcastToDims(ReduceSum(Sub(r, b.Use(u))), 1, checkCols)
			return []*Node{Add(state[0], Add(Einsum("ij,jk->ik", r, b.Use(w)), extra))}
		},
	)
	return Add(out[0], BroadcastToDims(ReduceSum(u), 1, checkCols))
}

// checkData are the check program's inputs: table [trips, rows], u [1,
// rows], w [rows, cols].
type checkData struct{ table, u, w []float32 }

// checkInputs are numbers whose products float32 keeps and TF32 (10
// mantissa bits) rounds: table 1 + m 2^-11 and w 1 - m 2^-12, exact in
// float32; u is 1 or 2, so r and r - u are exact too.
func checkInputs() checkData {
	d := checkData{
		make([]float32, checkTrips*checkRows),
		make([]float32, checkRows),
		make([]float32, checkRows*checkCols),
	}
	for i := range d.table {
		d.table[i] = float32(1 + math.Ldexp(float64(i+1), -11))
	}
	for j := range d.u {
		d.u[j] = float32(1 + j%2)
	}
	for i := range d.w {
		d.w[i] = float32(1 - math.Ldexp(float64(i+1), -12))
	}
	return d
}

// checkReference is checkProgram's result in float64 on the host, over
// the rows of d.table.
func checkReference(d checkData) []float64 {
	out := make([]float64, checkCols)
	for k := range out {
		for _, u := range d.u {
			out[k] += float64(u)
		}
	}
	for i := range len(d.table) / checkRows {
		for j := range checkRows {
			u := float64(d.u[j])
			r := float64(d.table[i*checkRows+j]) * u
			for k := range out {
				out[k] += r*float64(d.w[j*checkCols+k]) + r - u
			}
		}
	}
	return out
}

// runCheck compiles and runs checkProgram on a device.
func runCheck(d *Device, data checkData) ([]float32, error) {
	b, err := d.Backend()
	if err != nil {
		return nil, err
	}
	exec, err := NewExec(b, checkProgram)
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	out, err := exec.Exec(
		tensors.FromFlatDataAndDimensions(data.table, checkTrips, checkRows),
		tensors.FromFlatDataAndDimensions(
			data.u,
			1,
			checkRows,
		),
		tensors.FromFlatDataAndDimensions(data.w, checkRows, checkCols),
	)
	if err != nil {
		return nil, err
	}
	fl, err := download(out)
	if err != nil {
		return nil, err
	}
	return fl[0], nil
}
