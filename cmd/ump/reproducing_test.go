package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/ump-lab/ump/report/document"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
)

// reportBlock is a table REPRODUCING.md shows from committed results:
// what `ump report DIR` writes for it (grid: the table; paper: beside the
// paper's; "grid entry", "paper entry": the same under a declared select
// scope other than the first).
var reportBlock = regexp.MustCompile(`(?s)<!-- ump report (\S+) ((?:grid|paper)(?: entry| row)?) -->\n(.*?)<!-- end of ump report -->`)

// compareBlock is a comparison REPRODUCING.md shows: what `ump compare A
// B` prints for two directories of committed results.
var compareBlock = regexp.MustCompile(`(?s)<!-- ump compare (\S+) (\S+) -->\n(.*?)<!-- end of ump compare -->`)

// claimBlock is a comparison REPRODUCING.md makes beyond the paper's
// quoted claims: declared in its marker (a results directory, an optional
// select scope, the claim in YAML), its verdict generated.
var claimBlock = regexp.MustCompile(`(?s)<!-- ump claim (\S+?)(?: (entry|row))?: (\{.*?\}) -->\n(.*?)<!-- end of ump claim -->`)

// TestReproducingShowsTheCommittedResults regenerates every table
// REPRODUCING.md shows from the results committed under results/, and
// fails where the document and the results disagree, or where a
// directory of results is not shown at all.
func TestReproducingShowsTheCommittedResults(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, b := range reportBlock.FindAllStringSubmatch(string(doc), -1) {
		dir, kind, body := b[1], b[2], b[3]
		x, err := resultsdir.ReadExportedFinals(filepath.Join(root, dir)) // a directory may be committed without its figures, for size
		if err != nil {
			t.Errorf("REPRODUCING.md shows %s: %v", dir, err)
			continue
		}
		shown[dir] = true
		_, tables, err := document.Tables(x)
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
		var xs [2]*resultsdir.Exported
		for i, dir := range b[1:3] {
			if xs[i], err = resultsdir.ReadExportedFinals(filepath.Join(root, dir)); err != nil {
				t.Fatalf("REPRODUCING.md compares %s: %v", dir, err)
			}
		}
		c, err := resultsdir.Compare(b[1], b[2], xs[0], xs[1])
		if err != nil {
			t.Fatal(err)
		}
		if want := c.Markdown(); b[3] != want {
			t.Errorf("REPRODUCING.md's comparison of %s and %s is not what ump compare prints:\n%s\nthe document has:\n%s", b[1], b[2], want, b[3])
		}
		compared++
	}
	for _, b := range claimBlock.FindAllStringSubmatch(string(doc), -1) {
		x, err := resultsdir.ReadExportedFinals(filepath.Join(root, b[1]))
		if err != nil {
			t.Fatalf("REPRODUCING.md decides a claim on %s: %v", b[1], err)
		}
		line, err := document.Decide(x, b[2], []byte(b[3]))
		if err != nil {
			t.Errorf("REPRODUCING.md's claim %s on %s: %v", b[3], b[1], err)
			continue
		}
		if want := "- " + line + "\n"; b[4] != want {
			t.Errorf("REPRODUCING.md's verdict of %s on %s is not what its results decide:\n%s\nthe document has:\n%s", b[3], b[1], want, b[4])
		}
	}
	if compared == 0 {
		t.Error("REPRODUCING.md shows no comparison of two engines (<!-- ump compare A B --> ... <!-- end of ump compare -->)")
	}
	dirs, err := filepath.Glob(filepath.Join(root, "results", "*", resultsdir.RegistrationFile))
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

// TestEveryCommittedDirectoryReportsAgain: every report and every results
// directory under results/ reports again with `ump report DIR --out X`,
// without a store, whether or not its figures were committed; and each
// figure committed beside its results is what they draw (figures are
// checked by drawing them again).
func TestEveryCommittedDirectoryReportsAgain(t *testing.T) {
	t.Parallel()
	results := filepath.Join("..", "..", "results")
	var roots, dirs []string
	err := filepath.WalkDir(results, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return err
		case resultsdir.IsRoot(path):
			roots = append(roots, path)
		case resultsdir.IsExported(path):
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, root := range roots {
		listed, err := resultsdir.ReadRoot(root)
		if err != nil {
			t.Errorf("%s: %v", root, err)
		}
		for _, d := range listed {
			covered[d] = true
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("results/ holds %d results directories; want every committed one (%v)", len(dirs), dirs)
	}
	// The keys that sign the project's results.
	keys, bad, err := signing.ReadTrusted(filepath.Join(results, "trusted-keys"))
	if err != nil || len(bad) > 0 {
		t.Fatalf("results/trusted-keys: %v %v", err, bad)
	}
	var trust []string
	for _, k := range keys {
		trust = append(trust, "--trust", k)
	}
	for _, arg := range append(roots, slices.DeleteFunc(dirs, func(d string) bool { return covered[d] })...) {
		out := filepath.Join(t.TempDir(), "out")
		if r := ump(t, t.TempDir(), append([]string{"report", arg, "--out", out}, trust...)...); r.code != 0 {
			t.Errorf("ump report %s --out X: exit %d\n%s", arg, r.code, r.stderr)
			continue
		}
		figures, _ := filepath.Glob(filepath.Join(arg, "*", "*.p[nd][gf]"))
		more, _ := filepath.Glob(filepath.Join(arg, "*.p[nd][gf]"))
		for _, f := range append(figures, more...) {
			if !resultsdir.IsFigure(filepath.Base(f)) {
				continue
			}
			committed, _ := os.ReadFile(f)
			drawn, err := os.ReadFile(filepath.Join(out, filepath.Base(filepath.Dir(f)), filepath.Base(f))) // the same directory name: NAME-HASH12
			if err != nil || !bytes.Equal(committed, drawn) {
				t.Errorf("%s is not what its results draw (ump report %s --out X draws it again): %v", f, arg, err)
			}
		}
	}
}
