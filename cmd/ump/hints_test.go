package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/report"
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

// printed runs a hint ump printed exactly as printed, in dir, in an
// environment with env added (a shell's own variables): one that
// names ump by the path it was run by (this test's binary), as `make run`
// runs ./bin/ump, which is not on the PATH.
func printed(t *testing.T, dir, command string, env ...string) result {
	t.Helper()
	if !strings.HasPrefix(command, umpBin+" ") {
		t.Fatalf("a hint that does not name ump as it was run (%s): %q", umpBin, command)
	}
	return inShell(t, dir, command, env...)
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

// TestEveryHintRunsAsPrinted runs every command ump prints for the user
// to run next, pasted as printed in a directory other than the store's:
// each names ump by the path it was run by, with the global flags given
// (the store, the data directory, S3, the key), and does what it says.
// (The gc that a full disk's message names needs a full disk: it is run as
// printed in TestDiskFilledMidRun.)
func TestEveryHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	t.Run("run and forget", hintsOfRunAndForget)
	t.Run("show", hintsOfShow)
	t.Run("errors", hintsInErrors)
	t.Run("submit and pull", hintsOfSubmitAndPull)
	t.Run("other inputs", hintsOfOtherInputs)
	t.Run("a store by default or by a relative path", hintsOfARelativeStore)
}

// hintsOfARelativeStore: after a run in the default store (./.ump of the
// directory it ran in) or in one named by a relative path, the table's
// hint names the store by its absolute path and runs pasted in another
// directory.
func hintsOfARelativeStore(t *testing.T) {
	here, elsewhere := t.TempDir(), t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	for _, flags := range []string{"", "--store stores/mine "} {
		run := inShell(t, here, "env -u UMP_STORE "+umpBin+" "+flags+"run "+m)
		if run.code != 0 {
			t.Fatalf("ump %srun: exit %d\n%s", flags, run.code, run.stderr)
		}
		table := hint(t, run.stdout, tableHint)
		if r := printed(t, elsewhere, table); r.code != 0 || !strings.HasPrefix(r.stdout, "| ") {
			t.Errorf(
				"ump %srun's hint %s, pasted in another directory: exit %d\n%s%s",
				flags,
				table,
				r.code,
				r.stdout,
				r.stderr,
			)
		}
	}
}

// hintsOfRunAndForget: the export of every figure and the table after a
// run, forget's show and gc, the show and the run that continue a run
// stopped by --until, and the rerun after an interrupt of `run -j 2` (which
// must keep -j 2 and resume); that run's live status and its interrupt
// name both cells in flight.
func hintsOfRunAndForget(t *testing.T) {
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
	if !regexp.MustCompile(`interrupted in cells 1 \(seed=1\), stage \w+; 2 \(seed=2\), stage \w+`).
		MatchString(stderr.String()) {
		t.Errorf("the interrupt of run -j 2 does not name both cells in flight:\n%s", stderr.String())
	}
	rerun := hint(t, stderr.String(), resumeHint)
	if !strings.Contains(rerun, " -j 2 ") {
		t.Errorf("the resume hint drops -j 2: %s", rerun)
	}
	if r := printed(t, dir, rerun); r.code != 0 ||
		!strings.Contains(r.stderr, "resuming from the checkpoint after round") {
		t.Errorf("%s: exit %d, did not resume\n%s", rerun, r.code, r.stderr)
	}
}

// hintsOfShow: show's exports of a histogram and a schedule longer than it
// prints.
func hintsOfShow(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "wide.yaml", strings.NewReplacer(
		"workers: 10",
		"workers: 41",
		"rounds: 30",
		"rounds: 50",
		"kind: mesh-to-ring",
		"kind: time-varying-ring",
		"alpha: 0.1",
		"alpha: 100",
		"DATASET",
		"synthetic",
	).Replace(inspectManifest))
	r := ump(t, store, "run", "--until", "topology", m)
	if r.code != 0 {
		t.Fatalf("run --until topology: exit %d\n%s", r.code, r.stderr)
	}
	show := ump(t, store, "show", hashOf(t, r))
	for table, re := range map[string]*regexp.Regexp{
		"partition": regexp.MustCompile(`\.\.\. 1 more workers \((.*) has them all\)`),
		"topology":  regexp.MustCompile(`\.\.\. more matrices \((.*) has them all\)`),
	} {
		export := hint(t, show.stdout, re)
		if r := printed(t, dir, export); r.code != 0 {
			t.Errorf("%s: exit %d\n%s", export, r.code, r.stderr)
		} else if rows, err := os.ReadFile(filepath.Join(dir, table+".csv")); err != nil || bytes.Count(rows, []byte(
			"\n")) <= report.ShowLimit+1 {
			t.Errorf("%s wrote no %s table longer than show prints: %v", export, table, err)
		}
	}
}

// hintsInErrors: the commands that errors name (written by the packages
// below cmd/ump as `ump ...`) carry the global flags too: fetching a data
// set into --data-dir, the status of a store in use, the recovery of a
// damaged marker, the help of a command given a flag it lacks.
func hintsInErrors(t *testing.T) {
	store, data, dir := t.TempDir(), t.TempDir(), t.TempDir()
	inErr := regexp.MustCompile("`([^`]*)`")
	notFetched := writeFile(
		t,
		"cifar.yaml",
		"version: 1\nname: c\ntask: {dataset: cifar10, model: lenet}\nworkers: 2\nrounds: 1\nlr: 0.1\nalgorithm: "+
			"{name: d-sum}\n",
	)
	r := ump(t, store, "--data-dir", data, "run", notFetched)
	fetch := hint(t, r.stderr, regexp.MustCompile("`([^`]* data fetch cifar10)`"))
	// No network reaches the archive here: the fetch fails, naming where
	// it installs the files.
	if r := printed(t, dir, fetch); !strings.Contains(r.stderr, "into "+filepath.Join(data, "cifar10")) {
		t.Errorf("%s does not fetch into --data-dir %s:\n%s", fetch, data, r.stderr)
	}

	m := writeFile(t, "m.yaml", smallManifest)
	cmd, _ := runUntilTraining(t, store, writeFile(t, "long.yaml", longManifest))
	busy := ump(t, store, "run", m)
	status := hint(t, busy.stderr, regexp.MustCompile("`([^`]* status)` works meanwhile"))
	if r := printed(t, dir, status); r.code != 0 || !strings.Contains(r.stdout, "running") {
		t.Errorf("%s: exit %d\n%s%s", status, r.code, r.stdout, r.stderr)
	}
	cmd.Process.Kill()
	cmd.Wait()

	os.WriteFile(filepath.Join(store, "ump-store.json"), []byte("garbage"), 0o644)
	damaged := ump(t, store, "status")
	dry := hint(t, damaged.stderr, regexp.MustCompile("delete it and run `([^`]*)`"))
	os.Remove(filepath.Join(store, "ump-store.json"))
	if r := printed(t, dir, dry); r.code != 0 {
		t.Errorf("%s: exit %d\n%s", dry, r.code, r.stderr)
	}

	usage := ump(t, store, "run", "--bogus", m)
	help := hint(t, usage.stderr, regexp.MustCompile("see `([^`]*)`"))
	if r := printed(t, dir, help); r.code != 0 || !strings.Contains(r.stdout, "run every cell of a manifest") {
		t.Errorf("%s: exit %d\n%s%s", help, r.code, r.stdout, r.stderr)
	}
	for _, r := range []result{r, busy, damaged, usage} {
		for _, m := range inErr.FindAllStringSubmatch(r.stderr, -1) {
			if strings.HasPrefix(m[1], "ump ") {
				t.Errorf("an error names ump without the flags it was run with: %s", m[0])
			}
		}
	}
}

// hintsOfSubmitAndPull: submit's status of the run and its pull of a run
// committed in full, and the trust a pull of another key's commits needs.
func hintsOfSubmitAndPull(t *testing.T) {
	_, env, _ := startS3(t)
	fleetKey := filepath.Join(t.TempDir(), "fleet-key")
	fleetEnv := append(slices.Clone(env), "UMP_KEY="+fleetKey)
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	submit := umpEnv(
		t,
		fleetEnv,
		store,
		"--s3-insecure",
		"submit",
		"--slurm",
		"--out",
		filepath.Join(dir, "job.sbatch"),
		m,
	)
	status := hint(t, submit.stdout, regexp.MustCompile("`([^`]* status --remote [0-9a-f]+)` follows them"))
	if r := printed(t, dir, status, env...); r.code != 0 ||
		!strings.Contains(r.stdout, "2 cells on s3://team/ump/ at 127.0.0.1:") ||
		!strings.Contains(r.stdout, "no machine has started a cell yet") {
		t.Errorf("%s: exit %d\n%s%s", status, r.code, r.stdout, r.stderr)
	}
	if r := umpEnv(t, fleetEnv, store, "--s3-insecure", "run", m); r.code != 0 {
		t.Fatalf("run committing to S3: exit %d\n%s", r.code, r.stderr)
	}
	again := umpEnv(
		t,
		fleetEnv,
		store,
		"--s3-insecure",
		"submit",
		"--slurm",
		"--only-missing",
		"--out",
		filepath.Join(dir, "job.sbatch"),
		m,
	)
	pull := hint(t, again.stdout, regexp.MustCompile("`([^`]* pull [0-9a-f]+)` brings them home"))
	if r := printed(t, dir, pull, env...); r.code != 0 {
		t.Errorf("%s: exit %d\n%s", pull, r.code, r.stderr)
	}

	hash := pull[strings.LastIndex(pull, " ")+1:]
	laptop := t.TempDir() // trusts the tests' key (UMP_KEY), not the fleet's
	refused := umpEnv(t, env, laptop, "--s3-insecure", "pull", hash)
	trust := hint(t, refused.stderr, regexp.MustCompile("`([^`]* trust add [^`]*)`"))
	if r := printed(t, dir, trust, env...); r.code != 0 {
		t.Fatalf("%s: exit %d\n%s", trust, r.code, r.stderr)
	}
	if r := umpEnv(t, env, laptop, "--s3-insecure", "pull", hash); r.code != 0 {
		t.Errorf("pull after %s: exit %d\n%s", trust, r.code, r.stderr)
	}
}

// hintsOfOtherInputs: status's note on cells whose results were recorded
// under other inputs (here other MNIST files in --data-dir; another engine
// version is the same case) gives, for an embedded manifest, the run that
// keeps them.
func hintsOfOtherInputs(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	a, b := tinyMNIST(t, 1), tinyMNIST(t, 2)
	small := []string{
		"quickstart",
		"workers=2",
		"rounds=1",
		"local_steps=1",
		"batch_size=4",
		"partition.alpha=100",
		"partition.min_size=1",
		"sweep.algorithm=[{name: d-sum}]",
	}
	if r := ump(t, store, append([]string{"--data-dir", a, "run"}, small...)...); r.code != 0 {
		t.Fatalf("run on the first files: exit %d\n%s", r.code, r.stderr)
	}
	if r := ump(t, store, append([]string{"--data-dir", b, "run", "--other-engine", "recompute", "--until",
		"partition"}, small...)...); r.code != 0 {
		t.Fatalf("run on the second files: exit %d\n%s", r.code, r.stderr)
	}
	use := hint(
		t,
		ump(t, store, "--data-dir", b, "status").stdout,
		regexp.MustCompile("`([^`]* run --other-engine use quickstart [^`]*)` brings them back"),
	)
	if r := printed(t, dir, use); r.code != 0 || !strings.Contains(r.stderr, "(1 fully cached)") {
		t.Errorf("%s: exit %d, did not keep the recorded cell\n%s", use, r.code, r.stderr)
	}
}

// tinyMNIST writes 200 training and 50 test images of MNIST's format,
// drawn from seed, into a data directory's mnist/ and returns the
// directory.
func tinyMNIST(t *testing.T, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mnist"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0))
	for _, f := range []struct {
		name string
		n    int
	}{{"train", 200}, {"t10k", 50}} {
		images, labels := make([]byte, f.n*28*28), make([]byte, f.n)
		for i := range images {
			images[i] = byte(r.IntN(256))
		}
		for i := range labels {
			labels[i] = byte(i % 10)
		}
		idx := func(name string, magic uint32, dims []uint32, data []byte) {
			var buf bytes.Buffer
			binary.Write(&buf, binary.BigEndian, magic)
			binary.Write(&buf, binary.BigEndian, dims)
			buf.Write(data)
			if err := os.WriteFile(filepath.Join(dir, "mnist", name), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		idx(f.name+"-images-idx3-ubyte", 2051, []uint32{uint32(f.n), 28, 28}, images)
		idx(f.name+"-labels-idx1-ubyte", 2049, []uint32{uint32(f.n)}, labels)
	}
	return dir
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
// it was run by (a relative path made absolute), quoted for a shell, and
// "ump" when it was given none.
func TestHintsNameUmpAsItWasRun(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for arg0, want := range map[string]string{"ump": "ump", "./bin/ump-gpu": filepath.Join(wd, "bin", "ump-gpu"),
		"/opt/my tools/ump": "'/opt/my tools/ump'", "": "ump"} {
		if got := program(arg0); got != want {
			t.Errorf("run as %q: hints name %s; want %s", arg0, got, want)
		}
	}
}
