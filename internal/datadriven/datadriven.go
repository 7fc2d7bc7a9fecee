package datadriven

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Case is one case of a testdata file, in the style of pebble's
// datadriven files:
//
//	# what it shows
//	COMMAND
//	INPUT
//	----
//	EXPECTED
//	end
type Case struct {
	Line    int // of its command
	Comment []string
	Command string
	Input   []string
	Want    string
}

func read(t *testing.T, path string) []Case {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	var comment []string // the lines above the next case
	var c *Case
	inWant := false
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case c == nil && line == "":
		case c == nil && strings.HasPrefix(line, "#"):
			comment = append(comment, line)
		case c == nil:
			cases = append(cases, Case{Line: n + 1, Comment: comment, Command: line})
			c, comment, inWant = &cases[len(cases)-1], nil, false
		case !inWant && line == "----":
			inWant = true
		case !inWant:
			c.Input = append(c.Input, line)
		case line == "end":
			c = nil
		default:
			c.Want += line + "\n"
		}
	}
	if c != nil {
		t.Fatalf("%s: the case at line %d has no \"end\"", path, c.Line)
	}
	if len(cases) == 0 {
		t.Fatalf("%s holds no case", path)
	}
	return cases
}

// Run runs each case of a testdata file through do, which returns its
// output, and compares; with rewrite it writes the outputs back as the
// expected ones instead.
func Run(t *testing.T, rewrite bool, path string, do func(t *testing.T, at string, c Case) string) {
	var out strings.Builder
	for _, c := range read(t, path) {
		at := fmt.Sprintf("%s:%d", path, c.Line)
		got := do(t, at, c)
		if !rewrite && got != c.Want {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", at, strings.Join(c.Comment, " "), got, c.Want)
		}
		for _, l := range c.Comment {
			out.WriteString(l + "\n")
		}
		out.WriteString(c.Command + "\n" + strings.Join(append(c.Input, "----"), "\n") + "\n" + got + "end\n\n")
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
