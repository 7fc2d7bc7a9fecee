package resultsdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"
)

// twoCells is a small exported manifest: two cells of a quadratic, one
// completed and one diverged, from no store.
func twoCells(tb testing.TB) *Exported {
	tb.Helper()
	plan, err := manifests.Parse(
		"f.yaml",
		[]byte("version: 1\nname: f\ntask: {dataset: quadratic, quadratic: {dim: 4}}\nrounds: 2\nlr: 0.1\n"+
			"algorithm: {name: d-sum}\nsweep:\n  seed: [1, 2]\n"),
	)
	if err != nil {
		tb.Fatal(err)
	}
	meta := map[string]string{"ump.manifests": plan.Hash}
	final := &artifacts.Table{
		Metadata: meta,
		Columns: []artifacts.Column{
			{Name: "cell", Ints: []int64{1, 2}},
			{Name: "cell_key", Strings: []string{"k1", "k2"}},
			{
				Name:    "status",
				Strings: []string{eventlog.Completed, eventlog.Diverged},
			},
			{Name: "objective_gap", Floats: []float64{0.5, 7}},
		},
	}
	rounds := &artifacts.Table{Metadata: meta, Columns: []artifacts.Column{{Name: "cell", Ints: []int64{1, 1, 2, 2}},
		{Name: "round", Ints: []int64{1, 2, 1, 2}}, {Name: "objective_gap", Floats: []float64{1, 0.5, 3, 7}}}}
	return &Exported{
		Registration: state.Registration{Plan: *plan, CellKeys: []string{"k1", "k2"}},
		Final:        final,
		Rounds:       rounds,
	}
}

// smallExport is a results directory of two quadratic cells, small enough
// (a few KB) to fuzz quickly: its registration, final and rounds files.
func smallExport(f *testing.F) map[string][]byte {
	x := twoCells(f)
	var err error
	dir := filepath.Join(f.TempDir(), "r")
	if err := x.WriteResults(dir); err != nil {
		f.Fatal(err)
	}
	if err := x.WriteRecord(dir, nil); err != nil {
		f.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{RegistrationFile, FinalFile, RoundsFile} {
		if files[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			f.Fatal(err)
		}
	}
	if _, err := ReadExported(dir); err != nil {
		f.Fatalf("the fuzz seed is not a valid export: %v", err)
	}
	return files
}

// FuzzReadExported feeds ReadExported results directories whose
// registration.json, final.parquet or rounds.parquet is a mutation of a
// valid one's, and lays out what it accepts as ump report does (counts,
// finals, grid, Markdown, curves): nothing may panic. make test fuzzes it
// for a bounded time; go test runs its seeds.
func FuzzReadExported(f *testing.F) {
	names := []string{RegistrationFile, FinalFile, RoundsFile}
	files := smallExport(f)
	for i, name := range names {
		f.Add(uint8(i), files[name])
	}
	f.Add(uint8(1), []byte("PAR1"))
	f.Add(uint8(0), []byte(`{"plan":{}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		dir := t.TempDir()
		for name, content := range files {
			if name == names[int(which)%len(names)] {
				content = data
			}
			if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		x, err := ReadExported(dir)
		if err != nil {
			return
		}
		x.Counts()
		x.Engines()
		grid, err := x.Grid(report.Layout(&x.Registration.Plan))
		if err != nil {
			return
		}
		grid.Markdown()
		x.Curves(grid, report.CurveOptions{X: "round", Y: grid.Spec.Value})
	})
}
