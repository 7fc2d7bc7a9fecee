package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goTestJSON runs `go test -json` on a module of two packages written
// here: one whose tests pass or skip, one with a failing test.
func goTestJSON(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"good/good_test.go": `package good

import "testing"

func TestPasses(t *testing.T) {}

func TestSkips(t *testing.T) {
	t.Log("looked for the tool")
	t.Skip("needs a tool (.ci/run installs it)")
}

func TestSubtests(t *testing.T) {
	t.Run("one", func(t *testing.T) { t.Skipf("case %d is not here", 1) })
	t.Run("two", func(t *testing.T) {})
}
`,
		"bad/bad_test.go": `package bad

import "testing"

func TestFails(t *testing.T) { t.Error("wrong answer 41") }
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out
}

func TestSummaryListsEverySkipWithItsReason(t *testing.T) {
	var out bytes.Buffer
	skips, err := summarize(bytes.NewReader(goTestJSON(t)), &out, false)
	if !errors.Is(err, errFailed) {
		t.Errorf("a run with a failing test: error %v, want errFailed", err)
	}
	want := []Skip{
		{"example.com/m/good", "TestSkips", "looked for the tool needs a tool (.ci/run installs it)"},
		{"example.com/m/good", "TestSubtests/one", "case 1 is not here"},
	}
	slices.SortFunc(skips, func(a, b Skip) int { return strings.Compare(a.Test, b.Test) })
	if !slices.Equal(skips, want) {
		t.Errorf("skips:\n%q\nwant\n%q", skips, want)
	}
	text := out.String()
	for _, s := range []string{"ok  \texample.com/m/good\t", "wrong answer 41", "FAIL\texample.com/m/bad"} {
		if !strings.Contains(text, s) {
			t.Errorf("the summary lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "=== RUN   TestPasses") {
		t.Errorf("the summary shows a passing package's output:\n%s", text)
	}
}

func TestListFailsOnAForbiddenReason(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skips")
	lines := "p TestA: needs a tool (.ci/run installs it)\np TestB: runs natively on arm64\n"
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := list(file, &out, ".ci/run installs")
	if err == nil || !strings.Contains(err.Error(), "TestA") || strings.Contains(err.Error(), "TestB") {
		t.Errorf("error %v, want one naming TestA alone", err)
	}
	if !strings.Contains(out.String(), "Skipped tests (2)") || !strings.Contains(out.String(), "p TestB: runs natively on arm64") {
		t.Errorf("list printed:\n%s", out.String())
	}
	if err := list(file, &out, ""); err != nil {
		t.Errorf("without -forbid: %v", err)
	}
	out.Reset()
	if err := list(filepath.Join(t.TempDir(), "none"), &out, ".ci/run installs"); err != nil || out.String() != "Skipped tests: none.\n" {
		t.Errorf("no file: %v, %q", err, out.String())
	}
}
