package house

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is ump's module path, and root the repository's root.
const (
	module = "github.com/ump-lab/ump"
	root   = "../.."
)

// packages lists the repository's package directories (relative to
// root), skipping testdata, results and hidden directories.
func packages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root &&
			(strings.HasPrefix(name, ".") || name == "testdata" || name == "results" || name == "node_modules" ||
				name == "bin") {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(path, 0); err == nil {
			rel, _ := filepath.Rel(root, path)
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found %d packages under %s; the walk is broken", len(dirs), root)
	}
	return dirs
}

// imports are the project packages a package imports (not its tests), as
// the build sees them on this machine with the default tags or with xla
// (the GPU engine's), relative to the module.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	xla := build.Default
	xla.BuildTags = append(slices.Clone(xla.BuildTags), "xla")
	var out []string
	for _, ctx := range []*build.Context{&build.Default, &xla} {
		p, err := ctx.ImportDir(filepath.Join(root, dir), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(out, rest) {
				out = append(out, rest)
			}
		}
	}
	slices.Sort(out)
	return out
}

var (
	importsParagraph = regexp.MustCompile(`(?s)\n// Imports: (.*?)\.\n`)
	parenthetical    = regexp.MustCompile(`\([^)]*\)`)
)

// stated are the packages a doc.go's "Imports:" paragraph names, and
// whether it has one. "none of ump's packages" names none.
func stated(doc string) ([]string, bool) {
	m := importsParagraph.FindStringSubmatch(doc)
	if m == nil {
		return nil, false
	}
	text := strings.ReplaceAll(m[1], "\n//", "")
	if strings.TrimSpace(text) == "none of ump's packages" {
		return nil, true
	}
	var out []string
	for _, name := range strings.Split(parenthetical.ReplaceAllString(text, ""), ",") {
		out = append(out, strings.TrimSpace(name))
	}
	slices.Sort(out)
	return out, true
}

// TestEveryDocStatesItsImports: every package has a doc.go whose
// "Imports:" paragraph names exactly the project packages it imports, so
// that a newcomer reads the house's arrows where the package is
// described, and a doc that names an import the code lacks (or misses one
// it has) fails here.
func TestEveryDocStatesItsImports(t *testing.T) {
	for _, dir := range packages(t) {
		data, err := os.ReadFile(filepath.Join(root, dir, "doc.go"))
		if err != nil {
			t.Errorf("%s: no doc.go (each package's says its one job and its imports)", dir)
			continue
		}
		got, ok := stated(string(data))
		want := imports(t, dir)
		switch {
		case !ok:
			t.Errorf("%s/doc.go: no \"Imports:\" paragraph; write \"// Imports: %s.\" as its last", dir, orNone(want))
		case !slices.Equal(got, want):
			t.Errorf(
				"%s/doc.go says it imports %q; it imports %q: write \"// Imports: %s.\"",
				dir,
				got,
				want,
				orNone(want),
			)
		}
	}
}

// orNone is an "Imports:" paragraph's text for a list of packages.
func orNone(pkgs []string) string {
	if len(pkgs) == 0 {
		return "none of ump's packages"
	}
	return strings.Join(pkgs, ", ")
}

// TestInternalsNamesEveryPackage: docs/internals.md, which draws the
// packages layer by layer, names every package the build has (in
// backquotes), so that a new package is placed in it.
func TestInternalsNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "internals.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range packages(t) {
		if !strings.Contains(string(data), "`"+dir+"`") {
			t.Errorf("docs/internals.md does not name package %s: place it in the table of layers", dir)
		}
	}
}
