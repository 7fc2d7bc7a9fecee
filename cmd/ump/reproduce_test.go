package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
)

// TestReproduceComputesEveryDirectoryAgain: ump reproduce of a tree that
// holds a results directory and a GPU-trained one computes the first
// again in a fresh store and finds every finished cell identical bit for
// bit, naming the second as left out; a rerun finds every cell in the
// store; a figure edited by one ulp is found, exit 4, naming the cell; a
// tree without results, or with none this machine computes, is bad input.
func TestReproduceComputesEveryDirectoryAgain(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "results")
	_, hash, dir := reported(t, root)
	gpuTrained := filepath.Join(root, "engine-gpu", "table1-mnist-42e8b37e275f")
	copyFiles(t, filepath.Join("..", "..", "results", "engine-gpu-h200", "table1-mnist-42e8b37e275f"), gpuTrained)
	elsewhere := filepath.Join(root, "elsewhere", "quad-table")
	copyFiles(t, dir, elsewhere)
	rekey(t, elsewhere, 3)
	store := t.TempDir()
	identical := dir + " (quad-table, " + hash[:12] + "): 36 finished cells identical bit for bit (status, final row " +
		"and 525 evaluated rounds); "
	r := ump(t, store, "reproduce", "-j", "2", root)
	if r.code != 0 || !strings.Contains(r.stdout, identical+"36 of them computed in this run, 0 found in the store") ||
		!strings.Contains(
			r.stdout,
			gpuTrained+" (table1-mnist, 42e8b37e275f): left out: its cells train on the GPU engine, which this build "+
				"lacks",
		) ||
		!strings.Contains(
			r.stdout,
			elsewhere+" (quad-table, "+hash[:12]+"): left out: 1 of its 36 cells have other keys here: they were "+
				"computed under engine ",
		) ||
		!strings.Contains(r.stdout, "directories computed again: 1 (1 identical, 0 differ); left out: 2") ||
		!strings.Contains(
			r.stderr,
			"reproduce: directories to compute again in "+store+": 1 (36 distinct cells, whose rounds record 0.0 "+
				"hours of compute where they ran: about 1 min at -j 2 on a machine as fast); left out: 2",
		) ||
		!strings.Contains(r.stderr, "reproduce: directory 1 of 1, "+dir+" (36 cells); 100.0% of the work, took ") ||
		!strings.Contains(r.stderr, "reproduce: leaves out "+gpuTrained+": its cells train on the GPU engine") ||
		strings.Contains(r.stderr, "resuming") {
		t.Fatalf("reproduce: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ump(t, store, "reproduce", root)
	if r.code != 0 || !strings.Contains(r.stdout, identical+"0 of them computed in this run, 36 found in the store") ||
		!strings.Contains(r.stderr, "reproduce: resuming: 36 of the 36 cells to compute are done in "+store) {
		t.Errorf("reproduce again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	link := filepath.Join(t.TempDir(), "results-link") // a link to the tree finds the same directories
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	r = ump(t, store, "reproduce", link)
	want := "directories computed again: 1 (1 identical, 0 differ); left out: 2"
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("reproduce LINK: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	nudgeFigure(t, dir, 5, 15)
	r = ump(t, store, "reproduce", root)
	if r.code != 4 || !strings.Contains(r.stdout, "): cell 5 ") ||
		!strings.Contains(r.stdout, " DIFFERS: the final row: objective_gap committed") ||
		!strings.Contains(r.stdout, "1 of 36 finished cells differ (`") ||
		!strings.Contains(r.stderr, "directories computed again that differ from their committed figures: 1 of 1") {
		t.Errorf("reproduce of an edited figure: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	side := hint(t, r.stdout, regexp.MustCompile("finished cells differ \\(`([^`]*)` sets the two side by side\\)"))
	if r := printed(t, t.TempDir(), side); r.code != 0 ||
		!strings.Contains(r.stdout, "Two computations of quad-table") {
		t.Errorf("%s: exit %d\n%s%s", side, r.code, r.stdout, r.stderr)
	}
	if r := ump(t, store, "reproduce", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "holds no results directory") {
		t.Errorf("reproduce of an empty tree: exit %d, %s", r.code, r.stderr)
	}
	if r := ump(t, store, "reproduce", filepath.Dir(gpuTrained)); r.code != 2 ||
		!strings.Contains(
			r.stderr,
			"no results directory under "+filepath.Dir(
				gpuTrained,
			)+" can be computed again on this machine (1 left out, named above)",
		) {
		t.Errorf("reproduce of GPU results on a CPU build: exit %d, %s", r.code, r.stderr)
	}
}

// rekey gives cell (from 1) of the results directory another key, as
// computing it under another engine would, and drops the record that
// vouches for the old one (editTables).
func rekey(t *testing.T, dir string, cell int) {
	t.Helper()
	path := filepath.Join(dir, "registration.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("0", 64)
	reg["cell_keys"].([]any)[cell-1] = other
	if data, err = json.Marshal(reg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	editTables(t, dir, func(tb *artifacts.Table, r int) {
		if tb.Column("cell").Ints[r] == int64(cell) {
			tb.Column("cell_key").Strings[r] = other
		}
	})
}

// copyFiles copies the files of directory from into a new directory to.
func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
