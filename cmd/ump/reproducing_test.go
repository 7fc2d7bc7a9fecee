package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/report/document"
	"github.com/ump-lab/ump/report/paper"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
)

// reportBlock is a table REPRODUCING.md shows from committed results:
// what `ump report DIR` writes for it (grid: the table; paper: beside the
// paper's; "grid entry", "paper entry": the same under a declared select
// scope other than the first).
var reportBlock = regexp.MustCompile(
	`(?s)<!-- ump report (\S+) ((?:grid|paper)(?: entry| row)?) -->\n(.*?)<!-- end of ump report -->`,
)

// compareBlock is a comparison REPRODUCING.md shows: what `ump compare A
// B` prints for two directories of committed results.
var compareBlock = regexp.MustCompile(`(?s)<!-- ump compare (\S+) (\S+) -->\n(.*?)<!-- end of ump compare -->`)

// claimBlock is a comparison REPRODUCING.md makes beyond the paper's
// quoted claims: declared in its marker (a results directory, an optional
// select scope, the claim in YAML), its verdict generated.
var claimBlock = regexp.MustCompile(
	`(?s)<!-- ump claim (\S+?)(?: (entry|row))?: (\{.*?\}) -->\n(.*?)<!-- end of ump claim -->`)

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
		x, err := resultsdir.ReadExportedFinals(
			filepath.Join(root, dir),
		) // a directory may be committed without its figures, for size
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
			t.Errorf(
				"REPRODUCING.md's %s table of %s is not what its results give (ump report %s --out DIR writes it); "+
					"the results give:\n%s\nthe document has:\n%s",
				kind,
				dir,
				dir,
				want,
				body,
			)
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
			t.Errorf(
				"REPRODUCING.md's comparison of %s and %s is not what ump compare prints:\n%s\nthe document has:\n%s",
				b[1],
				b[2],
				want,
				b[3],
			)
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
			t.Errorf("REPRODUCING.md's verdict of %s on %s is not what its results decide:\n%s\nthe document has:\n%s",
				b[3], b[1], want, b[4])
		}
	}
	if compared == 0 {
		t.Error(
			"REPRODUCING.md shows no comparison of two engines (<!-- ump compare A B --> " +
				"... <!-- end of ump compare -->)",
		)
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
			t.Errorf(
				"REPRODUCING.md shows no table of %s (add <!-- ump report %s grid --> ... <!-- end of ump report -->)",
				rel,
				rel,
			)
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
			drawn, err := os.ReadFile(
				filepath.Join(out, filepath.Base(filepath.Dir(f)), filepath.Base(f)),
			) // the same directory name: NAME-HASH12
			if err != nil || !bytes.Equal(committed, drawn) {
				t.Errorf("%s is not what its results draw (ump report %s --out X draws it again): %v", f, arg, err)
			}
		}
	}
}

// engineName is an engine as section headings name it: engine v3 for
// go-cpu-float32/v3, the GPU engine for gomlx.
var engineName = regexp.MustCompile(`(go-cpu|gomlx)-float\d+/v(\d+)`)

// TestEverySectionNamesItsEngine: a section of REPRODUCING.md that shows
// a table or a claim of a results directory names, in its heading, the
// engine that computed those results ("engine v2", "the GPU engine"), so
// that no reader takes one engine's conclusion for another's.
func TestEverySectionNamesItsEngine(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := 0
	for _, section := range regexp.MustCompile(`(?m)^#+ `).Split(string(doc), -1)[1:] {
		heading, _, _ := strings.Cut(section, "\n")
		var dirs []string
		for _, b := range reportBlock.FindAllStringSubmatch(section, -1) {
			dirs = append(dirs, b[1])
		}
		for _, b := range claimBlock.FindAllStringSubmatch(section, -1) {
			dirs = append(dirs, b[1])
		}
		for _, dir := range dirs {
			x, err := resultsdir.ReadExportedFinals(filepath.Join(root, dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range engineName.FindAllStringSubmatch(x.Engines(), -1) {
				want := "engine v" + m[2]
				if m[1] == "gomlx" {
					want = "GPU engine"
				}
				if !strings.Contains(heading, want) {
					t.Errorf("REPRODUCING.md, section %q shows %s, computed by %s: its heading does not say %q",
						heading, dir, m[0], want)
				}
			}
		}
		if len(dirs) > 0 {
			sections++
		}
	}
	if sections < 10 {
		t.Errorf("only %d sections show results: the pattern changed", sections)
	}
}

// summaryRow is a row of REPRODUCING.md's first table: the paper's claim,
// the engine, our verdict, and the evidence with its results directory.
var summaryRow = regexp.MustCompile("(?m)^\\| (.+?) \\| (v\\d|–) \\| ([a-z ]+) \\| (.*?)`(results/[^`]+)`.*\\|$")

// TestReproducingOpensWithTheAnswer: REPRODUCING.md answers "does the
// paper reproduce?" on its first screen, in a table of the paper's
// claims, and each verdict there is the one ump decides on the results
// directory the row names, under the engine the row names.
func TestReproducingOpensWithTheAnswer(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	screen := strings.Join(lines[:min(60, len(lines))], "\n")
	rows := summaryRow.FindAllStringSubmatch(screen, -1)
	if len(rows) < 10 {
		t.Fatalf("the first 60 lines of REPRODUCING.md hold %d rows of the summary table "+
			"(| the paper's claim | engine | ours | evidence |), want the paper's claims", len(rows))
	}
	taken := map[string]int{} // claims of a directory already read, by their words
	for _, r := range rows {
		claim, engine, ours, dir := r[1], r[2], r[3], r[5]
		x, err := resultsdir.ReadExportedFinals(filepath.Join(root, dir))
		if err != nil {
			t.Fatalf("the summary's row %q: %v", claim, err)
		}
		if m := engineName.FindStringSubmatch(x.Engines()); m == nil || "v"+m[2] != engine {
			t.Errorf("the summary's row %q says engine %s; %s was computed by %s", claim, engine, dir, x.Engines())
		}
		verdicts, err := document.Claims(x)
		if err != nil {
			t.Fatal(err)
		}
		var matching []paper.Verdict
		for _, v := range verdicts {
			if v.Claim.Claim == claim {
				matching = append(matching, v)
			}
		}
		k := taken[dir+claim]
		taken[dir+claim]++
		if k >= len(matching) {
			t.Errorf("the summary's row %q: %s decides no such claim (or fewer of them)", claim, dir)
			continue
		}
		v := matching[k].Ours
		word := paper.VerdictWord(v)
		if strings.HasPrefix(v, word+" by divergence") {
			word += " by divergence"
		}
		if ours != word {
			t.Errorf("the summary's row %q says %q; %s decides %q", claim, ours, dir, v)
		}
	}
}
