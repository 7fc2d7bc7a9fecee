package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Limits on a function outside the numerical kernels: one with more
// statements, or more parameters, does several things, which functions
// (or a type holding what they share) should name. Statements are
// counted, not lines, so that wrapping a line changes nothing.
const (
	maxStatements = 60
	maxParams     = 6
)

// kernels are the packages exempt from the limits: the CPU engine's
// numerical kernels and the generator of their assembly, whose loops and
// operands are the arithmetic itself.
var kernels = []string{"nn/cpu", "nn/cpu/asmgen"}

// statements counts the statements of a function's body, nested ones
// included; blocks and case clauses are counted by what they hold.
func statements(body *ast.BlockStmt) int {
	n := 0
	ast.Inspect(body, func(node ast.Node) bool {
		switch node.(type) {
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause, *ast.LabeledStmt, *ast.EmptyStmt:
		case ast.Stmt:
			n++
		}
		return true
	})
	return n
}

// overLimits lists the functions and methods of a file that break the
// limits, each as "file:line: what".
func overLimits(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		at := fset.Position(fd.Pos())
		where := fmt.Sprintf("%s:%d", filepath.ToSlash(strings.TrimPrefix(at.Filename, root+"/")), at.Line)
		if n := statements(fd.Body); n > maxStatements {
			out = append(out, fmt.Sprintf(
				"%s: %s holds %d statements, over %d: split it into functions that each do one thing",
				where, fd.Name.Name, n, maxStatements))
		}
		if n := fd.Type.Params.NumFields(); n > maxParams {
			out = append(out, fmt.Sprintf("%s: %s takes %d parameters, over %d: gather what they share in a type",
				where, fd.Name.Name, n, maxParams))
		}
	}
	return out
}

// goFiles parses every Go file of every package (every build tag's),
// tests included when tests is true, and calls check on each.
func goFiles(t *testing.T, tests bool, check func(fset *token.FileSet, path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range packages(t) {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if !tests && strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			check(fset, path, f)
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d files; the walk is broken", checked)
	}
}

// TestFunctionsAreShort: no function or method outside the kernels holds
// more than maxStatements statements or takes more than maxParams
// parameters.
func TestFunctionsAreShort(t *testing.T) {
	goFiles(t, false, func(fset *token.FileSet, path string, f *ast.File) {
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if slices.Contains(kernels, filepath.ToSlash(rel)) {
			return
		}
		for _, v := range overLimits(fset, f) {
			t.Error(v)
		}
	})
}

// TestTheLimitsCatchWhatBreaksThem: a function of maxStatements+1
// statements and one of maxParams+1 parameters are caught; one at both
// limits is not, however its lines are wrapped.
func TestTheLimitsCatchWhatBreaksThem(t *testing.T) {
	body := func(statements int) string {
		return strings.Repeat("\tif true {\n\t\t_ = 0\n\t}\n", statements/2) + strings.Repeat("\t_ = 0\n", statements%2)
	}
	src := "package p\n" +
		"func atLimits(a, b, c int, d, e string, f bool) {\n" + body(maxStatements) + "}\n" +
		"func long() {\n" + body(maxStatements+1) + "}\n" +
		"func (x T) many(a, b, c, d, e, f, g int) {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := overLimits(fset, f)
	want := fmt.Sprintf("long holds %d statements", maxStatements+1)
	if len(got) != 2 || !strings.Contains(got[0], want) || !strings.Contains(got[1], "many takes 7 parameters") {
		t.Errorf("over the limits: %q; want long (%d statements) and many (7 parameters) only", got, maxStatements+1)
	}
}
