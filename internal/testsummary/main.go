package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64
	Output     string
}

// Skip is a skipped test and the reason it gave.
type Skip struct {
	Package, Test, Reason string
}

// String is the skip as one line of the list.
func (s Skip) String() string {
	return fmt.Sprintf("%s %s: %s", s.Package, s.Test, s.Reason)
}

// Time is how long a package's tests ran, and whether they passed.
type Time struct {
	Package string
	Seconds float64
	Passed  bool
}

// String is the time as one line of the times file.
func (t Time) String() string {
	result := "ok"
	if !t.Passed {
		result = "FAIL"
	}
	return fmt.Sprintf("%s %.1f %s", t.Package, t.Seconds, result)
}

// errFailed is a run with a failing test, package or build.
var errFailed = errors.New("tests failed")

// summarize prints the run read from r to w as go test does without -v,
// and returns its skipped tests and each package's time; the error is
// errFailed when anything failed. A package that ran past go test's
// -timeout is told in two lines naming the tests it was running, its
// goroutine dump written to a file in dumpDir.
// With verbose, every line of output is printed as it comes, as with -v.
func summarize(r io.Reader, w io.Writer, verbose bool, dumpDir string) ([]Skip, []Time, error) {
	type pkgOutput struct {
		all   []string            // every line, in order
		tests map[string][]string // per test
	}
	pkgs := map[string]*pkgOutput{}
	pkg := func(name string) *pkgOutput {
		if p := pkgs[name]; p != nil {
			return p
		}
		p := &pkgOutput{tests: map[string][]string{}}
		pkgs[name] = p
		return p
	}
	var skips []Skip
	var times []Time
	failed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintln(w, string(line)) // go test's own messages (e.g. a bad flag)
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if verbose {
				fmt.Fprint(w, e.Output)
			}
			p := pkg(e.Package)
			p.all = append(p.all, e.Output)
			if e.Test != "" {
				p.tests[e.Test] = append(p.tests[e.Test], e.Output)
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, Skip{e.Package, e.Test, reason(pkg(e.Package).tests[e.Test])})
			}
		case "fail":
			failed = true
			if e.Test != "" {
				break
			}
			times = append(times, Time{e.Package, e.Elapsed, false})
			output := strings.Join(pkg(e.Package).all, "")
			if after, running, ok := timedOut(output); ok {
				dump := filepath.Join(dumpDir, "timeout-"+strings.ReplaceAll(e.Package, "/", "_")+".log")
				if err := os.WriteFile(dump, []byte(output), 0o644); err != nil {
					dump = "not written: " + err.Error()
				}
				fmt.Fprintf(w, "FAIL\t%s\ttimed out: its tests ran past go test's -timeout (%s), still running %s\n"+
					"\tits output and goroutine dump: %s\n", e.Package, after, strings.Join(running, ", "), dump)
			} else if !verbose {
				fmt.Fprint(w, output)
			}
		case "pass":
			if e.Test == "" {
				times = append(times, Time{e.Package, e.Elapsed, true})
				if !verbose {
					fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return skips, times, fmt.Errorf("reading go test -json: %w", err)
	}
	if failed {
		return skips, times, errFailed
	}
	return skips, times, nil
}

// timedOut reports whether a package's output is a test binary's panic
// at go test's -timeout, with the timeout and the tests it was running
// (with their times).
func timedOut(output string) (after string, running []string, ok bool) {
	m := timeoutPanic.FindStringSubmatch(output)
	if m == nil {
		return "", nil, false
	}
	rest := output[strings.Index(output, m[0])+len(m[0]):]
	for _, l := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(l, "\t\t") {
			break
		}
		running = append(running, strings.TrimSpace(l))
	}
	return m[1], running, true
}

// timeoutPanic begins a test binary's output at go test's -timeout.
var timeoutPanic = regexp.MustCompile(`panic: test timed out after (\S+)\n\s*running tests:`)

// position is the file:line prefix of a test's log line.
var position = regexp.MustCompile(`^[^ :]+\.go:\d+: `)

// reason is what a skipped test printed, without test2json's framing
// (=== RUN, --- SKIP, the file:line prefix).
func reason(output []string) string {
	var parts []string
	for _, l := range output {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		parts = append(parts, position.ReplaceAllString(l, ""))
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}

// listTimes prints the package times recorded in file (one per line),
// slowest first, and their sum.
func listTimes(file string, w io.Writer) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var times []Time
	var total float64
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var t Time
		var result string
		if _, err := fmt.Sscanf(l, "%s %g %s", &t.Package, &t.Seconds, &result); err != nil {
			return fmt.Errorf("%s: line %q: %w", file, l, err)
		}
		t.Passed = result == "ok"
		times = append(times, t)
		total += t.Seconds
	}
	slices.SortStableFunc(times, func(a, b Time) int { return cmp.Compare(b.Seconds, a.Seconds) })
	fmt.Fprintf(
		w,
		"Package times, slowest first (%d runs, %.0f s in all; packages run in parallel):\n",
		len(times),
		total,
	)
	for _, t := range times {
		result := ""
		if !t.Passed {
			result = "  FAIL"
		}
		fmt.Fprintf(w, "  %7.1f s  %s%s\n", t.Seconds, t.Package, result)
	}
	return nil
}

// list prints the skips recorded in file (one per line) and returns an
// error naming those whose reason holds forbid (none when forbid is "").
func list(file string, w io.Writer, forbid string) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(data) == 0 {
		lines = nil
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "Skipped tests: none.")
		return nil
	}
	fmt.Fprintf(w, "Skipped tests (%d), each with its reason:\n", len(lines))
	var forbidden []string
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
		if forbid != "" && strings.Contains(l, forbid) {
			forbidden = append(forbidden, l)
		}
	}
	if len(forbidden) > 0 {
		return fmt.Errorf(
			"%d tests skipped for want of what %q says is installed:\n  %s",
			len(forbidden),
			forbid,
			strings.Join(forbidden, "\n  "),
		)
	}
	return nil
}

func main() {
	skipsFile := flag.String("skips", "", "append skipped tests to this file (and package times to FILE.times)")
	listOnly := flag.Bool(
		"list",
		false,
		"print the package times and the skipped tests the files hold, and remove them",
	)
	verbose := flag.Bool("v", false, "print every line of output, as go test -v does")
	forbid := flag.String("forbid", "", "with -list: fail when a skip's reason contains this text")
	flag.Parse()
	if *skipsFile == "" {
		fmt.Fprintln(os.Stderr, "testsummary: -skips FILE is required")
		os.Exit(2)
	}
	timesFile := *skipsFile + ".times"
	if *listOnly {
		err := errors.Join(listTimes(timesFile, os.Stdout), list(*skipsFile, os.Stdout, *forbid))
		os.Remove(*skipsFile)
		os.Remove(timesFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		return
	}
	skips, times, err := summarize(os.Stdin, os.Stdout, *verbose, filepath.Dir(*skipsFile))
	if aerr := errors.Join(appendLines(*skipsFile, skips), appendLines(timesFile, times)); aerr != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", aerr)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}

// appendLines appends each of lines, as a line, to file.
func appendLines[T fmt.Stringer](file string, lines []T) error {
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(f, l)
	}
	return f.Close()
}
