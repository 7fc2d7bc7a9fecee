package gpu

import "testing"

// TestParseProgramMemory reads the figures from a line GoMLX's XLA backend
// logs (the H200's round program of 36 LeNet cells, 2026-11-27), and
// refuses a line that is not one.
func TestParseProgramMemory(t *testing.T) {
	line := "Memory usage: On Device: [Code:1.2 MB, Inputs:234 MB, Outputs:178 MB, Aliases:0 B, Temporary:7.5 GB]; " +
		"On Host: [Code:0 B, Inputs:0 B, Outputs:0 B, Aliases:0 B, Temporary:0 B]"
	got, err := ParseProgramMemory(line)
	if want := (ProgramMemory{Inputs: 234e6, Outputs: 178e6, Temporary: 7.5e9}); err != nil || got != want {
		t.Errorf("ParseProgramMemory: %+v, %v; want %+v", got, err, want)
	}
	if got.Peak() != 7_912_000_000 {
		t.Errorf("peak %d, want 234 MB + 178 MB + 7.5 GB", got.Peak())
	}
	for _, bad := range []string{"Compiled in 1.9s", "Memory usage: On Device: [Code:1 MB, Inputs:2 XB, Outputs:1 " +
		"MB, Aliases:0 B, Temporary:1 GB]"} {
		if _, err := ParseProgramMemory(bad); err == nil {
			t.Errorf("%q read as figures", bad)
		}
	}
}

// TestCohortCellsFromTheRecordedFigures sizes cohorts from the figures the
// H200 recorded for 36 LeNet/MNIST cells × 10 workers (docs/gpu.md: round
// program inputs 223.4 MiB, outputs 169.5 MiB, temporaries 7.0 GiB;
// evaluation temporaries 1.7 GiB): 7,560.9 MiB for 36 cells, 210.02 MiB a
// cell, so half an H200's 139 GiB holds 338 cells and half an H100's 79.6
// GiB 194: the 180-cell case fits both. An evaluation that needs more than
// the round decides instead.
func TestCohortCellsFromTheRecordedFigures(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	round := ProgramMemory{Inputs: 234_250_650, Outputs: 177_733_632, Temporary: 7 * gib} // 223.4 MiB, 169.5 MiB
	eval := ProgramMemory{Temporary: 1_825_361_101}                                       // 1.7 GiB
	for _, c := range []struct {
		name   string
		budget int64
		want   int
	}{{"half an H200", 139 * gib / 2, 338}, {"half an H100", 42_734_924_595, 194}} {
		if got := CohortCells(round, eval, 36, c.budget); got != c.want {
			t.Errorf("%s: %d cells, want %d", c.name, got, c.want)
		}
	}
	big := ProgramMemory{Temporary: 14 * gib} // the evaluation of v4 on the H100 (13.5 GiB), rounded up
	if got := CohortCells(round, big, 36, 139*gib/2); got != 176 {
		t.Errorf("an evaluation of 14 GiB: %d cells, want 176 (69.5 GiB over 14 GiB + 169.5 MiB for 36)", got)
	}
	if got := CohortCells(round, eval, 36, 1*mib); got != 1 {
		t.Errorf("a budget below one cell: %d cells, want 1", got)
	}
}
