package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
)

// TestVerifyComputesCommittedCellsAgain: ump verify of a results directory
// computes the cells --cells names again in a scratch store and finds
// every figure the committed one; a figure edited in the directory (its
// record rewritten to match, as whoever edits can) is found, exit 4,
// naming the cell and the figure; --cells outside the plan is bad input.
func TestVerifyComputesCommittedCellsAgain(t *testing.T) {
	t.Parallel()
	_, _, dir := reported(t, filepath.Join(t.TempDir(), "report"))
	if r := ump(t, t.TempDir(), "verify", dir, "--cells", "2,5"); r.code != 0 ||
		!strings.Contains(r.stdout, "computing 2 of its 36 cells again in a scratch store, on kernels ") ||
		strings.Count(r.stdout, ": ok, its status and every figure of the final row and of 15 rounds identical") != 2 ||
		!strings.Contains(r.stderr, ": 2 cells, ") { // its progress counts the cells it computes, not the sweep's 36
		t.Fatalf("verify of the committed directory: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	nudgeFigure(t, dir, 5, 15)
	if r := ump(t, t.TempDir(), "verify", dir, "--cells", "2,5"); r.code != 4 ||
		!strings.Contains(
			r.stdout,
			"cell 5 ",
		) || !strings.Contains(r.stdout, ": DIFFERS: the final row: objective_gap committed") ||
		!strings.Contains(
			r.stderr,
			"1 of 2 cells of "+dir+" differ from their committed figures, computed again on kernels ",
		) {
		t.Errorf("verify of an edited figure: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, cells := range []string{"37", "0", "x"} {
		if r := ump(t, t.TempDir(), "verify", dir, "--cells", cells); r.code != 2 ||
			!strings.Contains(r.stderr, "is not a cell of the 36") {
			t.Errorf("--cells %s: exit %d, %q; want exit 2", cells, r.code, r.stderr)
		}
	}
}

// nudgeFigure edits cell's objective_gap by one ulp in the final row
// and at round in the rounds, consistently, in a results directory, as
// whoever edits a directory can (editTables).
func nudgeFigure(t *testing.T, dir string, cell, round int64) {
	t.Helper()
	editTables(t, dir, func(tb *artifacts.Table, r int) {
		if rounds := tb.Column("round"); tb.Column("cell").Ints[r] == cell &&
			(rounds == nil || rounds.Ints[r] == round) {
			tb.Column("objective_gap").Floats[r] *= 1 + 1e-16*2
		}
	})
}

// editTables calls edit on every row of a results directory's final and
// rounds tables, then drops its record and CSV copies, which no longer
// match them.
func editTables(t *testing.T, dir string, edit func(tb *artifacts.Table, row int)) {
	t.Helper()
	for _, file := range []string{"final.parquet", "rounds.parquet"} {
		data, _ := os.ReadFile(filepath.Join(dir, file))
		tb, err := artifacts.ReadParquet(data, 1<<27)
		if err != nil {
			t.Fatal(err)
		}
		for r := range tb.Column("cell").Ints {
			edit(tb, r)
		}
		if data, err = artifacts.Encode(tb, "parquet"); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, file), data, 0o644)
	}
	for _, name := range []string{"record.json", "final.csv", "rounds.csv.gz"} {
		os.Remove(filepath.Join(dir, name))
	}
}
