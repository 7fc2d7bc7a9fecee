package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goTestJSON runs `go test -json` on a module of two packages written
// here: one whose tests pass or skip, one with a failing test.
func goTestJSON(t *testing.T, args ...string) []byte {
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
		"slow/slow_test.go": `package slow

import (
	"testing"
	"time"
)

func TestTakesAMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	time.Sleep(time.Minute)
}
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
	cmd := exec.Command("go", append([]string{"test", "-count=1", "-json"}, append(args, "./...")...)...)
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
	skips, times, err := summarize(bytes.NewReader(goTestJSON(t, "-short")), &out, false, t.TempDir())
	if !errors.Is(err, errFailed) {
		t.Errorf("a run with a failing test: error %v, want errFailed", err)
	}
	want := []Skip{
		{"example.com/m/good", "TestSkips", "looked for the tool needs a tool (.ci/run installs it)"},
		{"example.com/m/good", "TestSubtests/one", "case 1 is not here"},
		{"example.com/m/slow", "TestTakesAMinute", "-short"},
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
	slices.SortFunc(times, func(a, b Time) int { return strings.Compare(a.Package, b.Package) })
	if len(times) != 3 || times[0].Package != "example.com/m/bad" || times[0].Passed || !times[1].Passed ||
		!times[2].Passed {
		t.Errorf("package times %v, want bad failed, good and slow passed", times)
	}
}

// TestATimeoutNamesTheTestsItStopped: a package that runs past go test's
// -timeout is told in two lines naming the test it was running, and its
// goroutine dump goes to a file.
func TestATimeoutNamesTheTestsItStopped(t *testing.T) {
	var out bytes.Buffer
	dumps := t.TempDir()
	_, times, err := summarize(bytes.NewReader(goTestJSON(t, "-timeout", "3s")), &out, false, dumps)
	if !errors.Is(err, errFailed) {
		t.Errorf("a run that timed out: error %v, want errFailed", err)
	}
	text := out.String()
	if !strings.Contains(
		text,
		"FAIL\texample.com/m/slow\ttimed out: its tests ran past go test's -timeout (3s), still running "+
			"TestTakesAMinute (",
	) ||
		goroutineDump.MatchString(text) {
		t.Errorf("the summary of a timeout:\n%s", text)
	}
	dump, err := os.ReadFile(filepath.Join(dumps, "timeout-example.com_m_slow.log"))
	if err != nil || !goroutineDump.MatchString(string(dump)) {
		t.Errorf("the goroutine dump: %v\n%s", err, dump)
	}
	for _, tm := range times {
		if tm.Package == "example.com/m/slow" && tm.Passed {
			t.Errorf("the slow package's time says it passed: %v", tm)
		}
	}
}

// goroutineDump is the first line of a goroutine's stack in a dump.
var goroutineDump = regexp.MustCompile(`goroutine \d+ \[`)

func TestListTimesPutsTheSlowestFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skips.times")
	if err := os.WriteFile(file, []byte("p/fast 1.5 ok\np/slow 300.0 FAIL\np/mid 20.0 ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := listTimes(file, &out); err != nil {
		t.Fatal(err)
	}
	want := "Package times, slowest first (3 runs, 322 s in all; packages run in parallel):\n" +
		"    300.0 s  p/slow  FAIL\n     20.0 s  p/mid\n      1.5 s  p/fast\n"
	if out.String() != want {
		t.Errorf("listTimes printed\n%s\nwant\n%s", out.String(), want)
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
	if !strings.Contains(out.String(), "Skipped tests (2)") ||
		!strings.Contains(out.String(), "p TestB: runs natively on arm64") {
		t.Errorf("list printed:\n%s", out.String())
	}
	if err := list(file, &out, ""); err != nil {
		t.Errorf("without -forbid: %v", err)
	}
	out.Reset()
	if err := list(filepath.Join(t.TempDir(), "none"), &out, ".ci/run installs"); err != nil ||
		out.String() != "Skipped tests: none.\n" {
		t.Errorf("no file: %v, %q", err, out.String())
	}
}
