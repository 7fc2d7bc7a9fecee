package gpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ProgramMemory is XLA's account of one compiled program's device memory,
// in bytes: its inputs, its outputs, the outputs that reuse an input's
// buffer (aliases), and its temporaries. GoMLX's XLA backend logs it when
// it compiles a program (klog level 1 of backends/xla, executable.go).
type ProgramMemory struct{ Inputs, Outputs, Aliases, Temporary int64 }

// Peak is the device memory the program holds while it runs.
func (p ProgramMemory) Peak() int64 { return p.Inputs + p.Outputs - p.Aliases + p.Temporary }

// memoryLine is GoMLX's log line of a compiled program's figures on the
// device, each as go-humanize writes bytes (SI units: 7.5 GB).
var memoryLine = regexp.MustCompile(
	`On Device: \[Code:[^,]*, Inputs:([^,]*), Outputs:([^,]*), Aliases:([^,]*), Temporary:([^\]]*)\]`,
)

// siUnits are go-humanize's units of bytes.
var siUnits = map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}

// ParseProgramMemory reads a program's figures from GoMLX's log line
// ("Memory usage: On Device: [Code:…, Inputs:…, Outputs:…, Aliases:…,
// Temporary:…]; On Host: […]").
func ParseProgramMemory(line string) (ProgramMemory, error) {
	m := memoryLine.FindStringSubmatch(line)
	if m == nil {
		return ProgramMemory{}, fmt.Errorf("not a line of XLA's memory figures: %q", line)
	}
	var v [4]int64
	for i, s := range m[1:] {
		number, unit, ok := strings.Cut(s, " ")
		f, err := strconv.ParseFloat(number, 64)
		if !ok || err != nil || siUnits[unit] == 0 {
			return ProgramMemory{}, fmt.Errorf("%q is not a number of bytes (go-humanize's, as 7.5 GB) in %q", s, line)
		}
		v[i] = int64(f * siUnits[unit])
	}
	return ProgramMemory{Inputs: v[0], Outputs: v[1], Aliases: v[2], Temporary: v[3]}, nil
}

// CohortCells sizes a cohort from XLA's figures for the round and
// evaluation programs compiled for a trial cohort of trial cells: a cell
// needs its share of the larger of the round program's peak and the
// evaluation's, which runs while the round's outputs (the state) stay on
// the device; budget bytes hold that many cells (at least 1). The figures
// scale with the cells: every input, output and temporary of both
// programs is per cell but the test set and the code, a few MB.
func CohortCells(round, eval ProgramMemory, trial int, budget int64) int {
	need := max(round.Peak(), round.Outputs+eval.Peak())
	return int(max(1, budget*int64(trial)/max(need, 1)))
}
