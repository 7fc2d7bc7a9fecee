package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// width is the most columns a line of Go may take, a tab counting tabWidth.
const (
	width    = 120
	tabWidth = 4
)

// columns is the width of a line as an editor shows it.
func columns(line string) int {
	n := 0
	for _, r := range line {
		n += runeColumns(r)
	}
	return n
}

// runeColumns is how many columns a character takes: a tab tabWidth.
func runeColumns(r rune) int {
	if r == '\t' {
		return tabWidth
	}
	return 1
}

// textSpans are the byte ranges of a file that hold text rather than code:
// struct tags and raw strings over several lines (a manifest, a script).
// Go cannot break a line inside them without changing the text.
func textSpans(fset *token.FileSet, f *ast.File) [][2]int {
	var spans [][2]int
	ast.Inspect(f, func(node ast.Node) bool {
		var lit *ast.BasicLit
		switch n := node.(type) {
		case *ast.Field:
			lit = n.Tag
		case *ast.BasicLit:
			if n.Kind == token.STRING && strings.HasPrefix(n.Value, "`") && strings.Contains(n.Value, "\n") {
				lit = n
			}
		}
		if lit != nil {
			spans = append(spans, [2]int{fset.Position(lit.Pos()).Offset, fset.Position(lit.End()).Offset})
		}
		return true
	})
	return spans
}

// overWidth lists the lines of a file that run past width, each as
// "file:line: what", except where the column past width is in a text span.
func overWidth(name string, src []byte, spans [][2]int) []string {
	var out []string
	offset := 0
	for i, line := range strings.Split(string(src), "\n") {
		if columns(line) > width {
			past, n := 0, 0 // the byte offset of the first column past width
			for j, r := range line {
				if n >= width {
					past = j
					break
				}
				n += runeColumns(r)
			}
			text := false
			for _, s := range spans {
				text = text || s[0] <= offset+past && offset+past < s[1]
			}
			if !text {
				out = append(out, fmt.Sprintf("%s:%d: %d columns, over %d: break the line where its parts meet",
					name, i+1, columns(line), width))
			}
		}
		offset += len(line) + 1
	}
	return out
}

// TestLinesFitTheWidth: no line of Go, tests included, runs past width
// columns, except text Go cannot break and generated files.
func TestLinesFitTheWidth(t *testing.T) {
	goFiles(t, true, func(fset *token.FileSet, path string, f *ast.File) {
		if ast.IsGenerated(f) {
			return
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, v := range overWidth(filepath.ToSlash(rel), src, textSpans(fset, f)) {
			t.Error(v)
		}
	})
}

// TestTheWidthCatchesWhatBreaksIt: a line of width+1 columns is caught, a
// tab counting tabWidth; one of width is not, nor a long struct tag or a
// long line inside a raw string over several lines, but a long one-line
// raw string is.
func TestTheWidthCatchesWhatBreaksIt(t *testing.T) {
	long := strings.Repeat("x", width)
	src := "package " +
		"p\nvar a = \"" + long[:width-10] + "\"\n" + // width columns
		"\tvar b = \"" + long[:width-10-tabWidth+1] + "\"\n" + // width+1 with the tab
		"type T struct {\n\tF int `help:\"" + long + "\"`\n}\n" +
		"var c = `\n" + long + "\n`\n" +
		"var d = `" + long + "`\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := overWidth("p.go", []byte(src), textSpans(fset, f))
	if len(got) != 2 || !strings.HasPrefix(got[0], "p.go:3: 121 columns") || !strings.HasPrefix(got[1], "p.go:10: ") {
		t.Errorf("over the width: %q; want lines 3 (121 columns) and 10 only", got)
	}
}
