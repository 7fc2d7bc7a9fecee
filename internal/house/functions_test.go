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

// Limits on a function outside the numerical kernels: a longer one, or
// one with more parameters, does several things, which functions (or a
// type holding what they share) should name.
const (
	maxLines  = 80
	maxParams = 6
)

// kernels are the packages exempt from the limits: the CPU engine's
// numerical kernels, whose loops and operands are the arithmetic itself.
var kernels = []string{"nn/cpu"}

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
		if lines := fset.Position(fd.End()).Line - at.Line + 1; lines > maxLines {
			out = append(out, fmt.Sprintf("%s: %s runs %d lines, over %d: split it into functions that each do one thing", where, fd.Name.Name, lines, maxLines))
		}
		if n := fd.Type.Params.NumFields(); n > maxParams {
			out = append(out, fmt.Sprintf("%s: %s takes %d parameters, over %d: gather what they share in a type", where, fd.Name.Name, n, maxParams))
		}
	}
	return out
}

// TestFunctionsAreShort: no function or method outside the kernels, in
// any file of any build (every build tag's), runs over maxLines lines or
// takes more than maxParams parameters.
func TestFunctionsAreShort(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range packages(t) {
		if slices.Contains(kernels, dir) {
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, v := range overLimits(fset, f) {
				t.Error(v)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d files; the walk is broken", checked)
	}
}

// TestTheLimitsCatchWhatBreaksThem: a function of maxLines+1 lines and
// one of maxParams+1 parameters are caught, one at both limits is not.
func TestTheLimitsCatchWhatBreaksThem(t *testing.T) {
	body := func(lines int) string { // a function of that many lines in all
		return strings.Repeat("\t_ = 0\n", lines-2)
	}
	src := "package p\n" +
		"func atLimits(a, b, c int, d, e string, f bool) {\n" + body(maxLines) + "}\n" +
		"func long() {\n" + body(maxLines+1) + "}\n" +
		"func (x T) many(a, b, c, d, e, f, g int) {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := overLimits(fset, f)
	if len(got) != 2 || !strings.Contains(got[0], "long runs 81 lines") || !strings.Contains(got[1], "many takes 7 parameters") {
		t.Errorf("over the limits: %q; want long (81 lines) and many (7 parameters) only", got)
	}
}
