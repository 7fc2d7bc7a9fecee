package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ump-lab/ump/report"
)

// reportBlock is a table REPRODUCING.md shows from committed results:
// what `ump report DIR` writes for it (grid: the table; paper: beside the
// paper's; "grid entry", "paper entry": the same under a declared select
// scope other than the first).
var reportBlock = regexp.MustCompile(`(?s)<!-- ump report (\S+) ((?:grid|paper)(?: entry| row)?) -->\n(.*?)<!-- end of ump report -->`)

// compareBlock is a comparison REPRODUCING.md shows: what `ump compare A
// B` prints for two directories of committed results.
var compareBlock = regexp.MustCompile(`(?s)<!-- ump compare (\S+) (\S+) -->\n(.*?)<!-- end of ump compare -->`)

// TestReproducingShowsTheCommittedResults regenerates every table
// REPRODUCING.md shows from the results committed under results/, and
// fails where the document and the results disagree, or where a
// directory of results is not shown at all.
func TestReproducingShowsTheCommittedResults(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, b := range reportBlock.FindAllStringSubmatch(string(doc), -1) {
		dir, kind, body := b[1], b[2], b[3]
		x, err := report.ReadExportedFinals(filepath.Join(root, dir)) // a directory may be committed without its figures, for size
		if err != nil {
			t.Errorf("REPRODUCING.md shows %s: %v", dir, err)
			continue
		}
		shown[dir] = true
		_, tables, err := reportTables(x)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := tables[kind]
		if !ok {
			t.Errorf("REPRODUCING.md shows %s beside the paper's, which publishes no table for it", dir)
			continue
		}
		if body != want {
			t.Errorf("REPRODUCING.md's %s table of %s is not what its results give (ump report %s --out DIR writes it); the results give:\n%s\nthe document has:\n%s",
				kind, dir, dir, want, body)
		}
	}
	compared := 0
	for _, b := range compareBlock.FindAllStringSubmatch(string(doc), -1) {
		var xs [2]*report.Exported
		for i, dir := range b[1:3] {
			if xs[i], err = report.ReadExportedFinals(filepath.Join(root, dir)); err != nil {
				t.Fatalf("REPRODUCING.md compares %s: %v", dir, err)
			}
		}
		c, err := report.Compare(b[1], b[2], xs[0], xs[1])
		if err != nil {
			t.Fatal(err)
		}
		if want := c.Markdown(); b[3] != want {
			t.Errorf("REPRODUCING.md's comparison of %s and %s is not what ump compare prints:\n%s\nthe document has:\n%s", b[1], b[2], want, b[3])
		}
		compared++
	}
	if compared == 0 {
		t.Error("REPRODUCING.md shows no comparison of two engines (<!-- ump compare A B --> ... <!-- end of ump compare -->)")
	}
	dirs, err := filepath.Glob(filepath.Join(root, "results", "*", report.RegistrationFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("results/ holds no exported manifest")
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, filepath.Dir(d))
		if !shown[filepath.ToSlash(rel)] {
			t.Errorf("REPRODUCING.md shows no table of %s (add <!-- ump report %s grid --> ... <!-- end of ump report -->)", rel, rel)
		}
	}
}
