package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
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

// errFailed is a run with a failing test, package or build.
var errFailed = errors.New("tests failed")

// summarize prints the run read from r to w as go test does without -v,
// and returns its skipped tests; the error is errFailed when anything
// failed.
// With verbose, every line of output is printed as it comes, as with -v.
func summarize(r io.Reader, w io.Writer, verbose bool) ([]Skip, error) {
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
			if e.Test == "" && !verbose {
				fmt.Fprint(w, strings.Join(pkg(e.Package).all, ""))
			}
		case "pass":
			if e.Test == "" && !verbose {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return skips, fmt.Errorf("reading go test -json: %w", err)
	}
	if failed {
		return skips, errFailed
	}
	return skips, nil
}

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
		return fmt.Errorf("%d tests skipped for want of what %q says is installed:\n  %s", len(forbidden), forbid, strings.Join(forbidden, "\n  "))
	}
	return nil
}

func main() {
	skipsFile := flag.String("skips", "", "append skipped tests to this file")
	listOnly := flag.Bool("list", false, "print the tests the -skips file holds, and remove it")
	verbose := flag.Bool("v", false, "print every line of output, as go test -v does")
	forbid := flag.String("forbid", "", "with -list: fail when a skip's reason contains this text")
	flag.Parse()
	if *skipsFile == "" {
		fmt.Fprintln(os.Stderr, "testsummary: -skips FILE is required")
		os.Exit(2)
	}
	if *listOnly {
		err := list(*skipsFile, os.Stdout, *forbid)
		os.Remove(*skipsFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		return
	}
	skips, err := summarize(os.Stdin, os.Stdout, *verbose)
	if len(skips) > 0 {
		f, ferr := os.OpenFile(*skipsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if ferr != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", ferr)
			os.Exit(1)
		}
		for _, s := range skips {
			fmt.Fprintln(f, s)
		}
		if ferr := f.Close(); ferr != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", ferr)
			os.Exit(1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}
