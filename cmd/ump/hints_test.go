package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// pasted runs a command of the docs (`ump ...`) as a user pastes it into a
// shell, in dir, with `ump` this test's binary.
func pasted(t *testing.T, dir, command string) result {
	t.Helper()
	rest, ok := strings.CutPrefix(command, "ump ")
	if !ok {
		t.Fatalf("a command that is not an ump command: %q", command)
	}
	return inShell(t, dir, `"$UMP" `+rest, "UMP="+umpBin)
}

// printed runs a hint ump printed exactly as printed, in dir: one that
// names ump by the path it was run by (this test's binary), as `make run`
// runs ./bin/ump, which is not on the PATH.
func printed(t *testing.T, dir, command string) result {
	t.Helper()
	if !strings.HasPrefix(command, umpBin+" ") {
		t.Fatalf("a hint that does not name ump as it was run (%s): %q", umpBin, command)
	}
	return inShell(t, dir, command)
}

// inShell runs a command line with bash in dir, with env added.
func inShell(t *testing.T, dir, command string, env ...string) result {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitStatus(t, cmd.Run())
	return result{out.String(), errb.String(), code}
}

// hint is the command in a line of ump's output that matches re (its
// first group).
func hint(t *testing.T, output string, re *regexp.Regexp) string {
	t.Helper()
	m := re.FindStringSubmatch(output)
	if m == nil {
		t.Fatalf("no hint matching %s in:\n%s", re, output)
	}
	return m[1]
}

var (
	everyFigureHint = regexp.MustCompile(`\(every figure: ([^)]*)\)`)
	tableHint       = regexp.MustCompile(`\ntable \(([^)]*)\):\n`)
	forgetShowHint  = regexp.MustCompile("`([^`]*show [^`]*)` still shows it")
	forgetGCHint    = regexp.MustCompile("`([^`]*gc)` reclaims")
	resumeHint      = regexp.MustCompile("stopped at a safe point; rerun `([^`]*)` to resume")
	untilHints      = regexp.MustCompile("`([^`]*show[^`]*)` shows them, `([^`]*)` continues")
)

// TestPrintedHintsRunAsPrinted runs, as a user pastes them, the commands
// ump prints (naming ump by the path it was run by): the export of every
// figure and the table after a run, forget's show and gc, the show and the run that continue a run stopped by
// --until, and the rerun after an interrupt of `run -j 2` (which must keep
// -j 2 and resume); that run's live status and its interrupt name both
// cells in flight.
func TestPrintedHintsRunAsPrinted(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	until := ump(t, store, "run", "--until", "topology", m)
	if until.code != 0 {
		t.Fatalf("run --until: exit %d\n%s", until.code, until.stderr)
	}
	m2 := untilHints.FindStringSubmatch(until.stderr)
	if m2 == nil {
		t.Fatalf("run --until printed no hints:\n%s", until.stderr)
	}
	if r := printed(t, dir, m2[1]); r.code != 0 || !strings.Contains(r.stdout, "stage topology: completed") {
		t.Errorf("%s: exit %d\n%s%s", m2[1], r.code, r.stdout, r.stderr)
	}
	finished := printed(t, dir, m2[2])
	if finished.code != 0 {
		t.Fatalf("%s: exit %d\n%s", m2[2], finished.code, finished.stderr)
	}
	export := hint(t, finished.stdout, everyFigureHint)
	if r := printed(t, dir, export); r.code != 0 {
		t.Errorf("%s: exit %d\n%s", export, r.code, r.stderr)
	} else if out := strings.Fields(export)[len(strings.Fields(export))-1]; !isFinalCSV(filepath.Join(dir, out), 2) {
		t.Errorf("%s wrote no CSV table of the 2 cells to %s", export, out)
	}
	table := hint(t, finished.stdout, tableHint)
	if r := printed(t, dir, table); r.code != 0 || !strings.HasPrefix(r.stdout, "| ") {
		t.Errorf("%s: exit %d\n%s%s", table, r.code, r.stdout, r.stderr)
	}
	forgot := ump(t, store, "forget", hashOf(t, finished))
	show, gc := hint(t, forgot.stdout, forgetShowHint), hint(t, forgot.stdout, forgetGCHint)
	if r := printed(t, dir, show); r.code != 0 || !strings.Contains(r.stdout, "manifest ") {
		t.Errorf("%s: exit %d\n%s%s", show, r.code, r.stdout, r.stderr)
	}
	if r := printed(t, dir, gc); r.code != 0 {
		t.Errorf("%s: exit %d\n%s", gc, r.code, r.stderr)
	}

	long := writeFile(t, "long.yaml", longManifest)
	store = t.TempDir()
	cmd, stderr := runUntilTraining(t, store, "-j", "2", long)
	if st := ump(t, store, "status"); !strings.Contains(st.stdout, "cells 1, 2 running; last reported: cell ") {
		t.Errorf("status during run -j 2 does not name both cells in flight:\n%s", st.stdout)
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if !regexp.MustCompile(`interrupted in cells 1 \(seed=1\), stage \w+; 2 \(seed=2\), stage \w+`).MatchString(stderr.String()) {
		t.Errorf("the interrupt of run -j 2 does not name both cells in flight:\n%s", stderr.String())
	}
	rerun := hint(t, stderr.String(), resumeHint)
	if !strings.Contains(rerun, " -j 2 ") {
		t.Errorf("the resume hint drops -j 2: %s", rerun)
	}
	if r := printed(t, dir, rerun); r.code != 0 || !strings.Contains(r.stderr, "resuming from the checkpoint after round") {
		t.Errorf("%s: exit %d, did not resume\n%s", rerun, r.code, r.stderr)
	}
}

// isFinalCSV says whether a file is a CSV final table of that many cells.
func isFinalCSV(path string, cells int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	return err == nil && len(rows) == cells+1 && slices.Contains(rows[0], "cell_key")
}

// TestHintsNameUmpAsItWasRun: a hint names the binary by the name or path
// it was run by, quoted for a shell, and "ump" when it was given none.
func TestHintsNameUmpAsItWasRun(t *testing.T) {
	for arg0, want := range map[string]string{"ump": "ump", "./bin/ump-gpu": "./bin/ump-gpu", "/opt/my tools/ump": "'/opt/my tools/ump'", "": "ump"} {
		if got := program(arg0); got != want {
			t.Errorf("run as %q: hints name %s; want %s", arg0, got, want)
		}
	}
}
