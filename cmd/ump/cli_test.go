package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

var umpBin string

// TestMain builds the ump binary once: the tests drive it as a user does,
// including killing it. $UMP_TEST_BINARY names a prebuilt one instead (the
// GPU kit's, on a host without Go). With UMP_TEST_AS_UMP=1 this binary is
// ump itself: the GPU kit carries it alone, not beside a second binary of
// the same code (10 MB less to take to a GPU host).
func TestMain(m *testing.M) {
	if os.Getenv("UMP_TEST_AS_UMP") == "1" {
		main()
	}
	dir, err := os.MkdirTemp("", "ump-cli-test")
	if err != nil {
		panic(err)
	}
	umpBin = filepath.Join(dir, "ump")
	// Every ump the tests start signs with this key unless a test names
	// another (UMP_KEY in its environment); none touches the user's own.
	os.Setenv("UMP_KEY", filepath.Join(dir, "signing-key"))
	if prebuilt := os.Getenv("UMP_TEST_BINARY"); prebuilt != "" {
		umpBin = prebuilt
	} else if out, err := exec.Command("go", append([]string{"build", "-o", umpBin}, append(buildTags,
		".")...)...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ump: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// longManifest trains long enough (about a second per cell) to be
// interrupted; sigma > 0 exercises the counter-based noise streams.
const longManifest = `version: 1
name: long
task: {dataset: quadratic, quadratic: {dim: 30000, sigma: 0.5}}
workers: 8
rounds: 120
local_steps: 2
lr: 0.02
algorithm: {name: gt-dsum}
sweep:
  seed: [1, 2]
evaluate: {every: 3}
checkpoint: {every: 10}
`

func TestRunShowsHashTableAndCaches(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	first := ump(t, store, "run", m)
	if first.code != 0 {
		t.Fatalf("run exited %d: %s", first.code, first.stderr)
	}
	hash := hashOf(t, first)
	if !strings.Contains(first.stdout, "objective_gap") || !strings.Contains(first.stderr, "round 120/120") {
		t.Errorf("run output lacks the final table or progress:\n%s\n%s", first.stdout, first.stderr)
	}
	again := ump(t, store, "run", m)
	if again.code != 0 || hashOf(t, again) != hash || !strings.Contains(again.stderr, "(2 fully cached)") ||
		strings.Contains(again.stderr, "done") {
		t.Errorf("rerun was not all cache hits:\n%s", again.stderr)
	}
	if again.stdout != first.stdout {
		t.Errorf("rerun printed a different table:\n%s\nvs\n%s", again.stdout, first.stdout)
	}
	st := ump(t, store, "status", hash[:8])
	if st.code != 0 || !strings.Contains(st.stdout, "2 completed") {
		t.Errorf("status: %d %s %s", st.code, st.stdout, st.stderr)
	}
	// The engine that computed the cells, on a line of its own: the
	// quadratic task names its plain-Go code (issue 102, item 11).
	if !regexp.MustCompile(`(?m)^ +engine go-cpu-float32/v1$`).MatchString(st.stdout) {
		t.Errorf("status does not name the cells' engine:\n%s", st.stdout)
	}
	show := ump(t, store, "show", hash[:8])
	for _, want := range []string{"stage train: completed, round 120/120", "cache key ", "input  " +
		"topology/mixing=sha256:", "output rounds = sha256:", "RoundCompleted"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	v := ump(t, store, "verify", hash[:10])
	if v.code != 0 || strings.Count(v.stdout, ": ok,") != 2 {
		t.Errorf("verify: %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
	arrowPath := filepath.Join(t.TempDir(), "rounds.arrow")
	if r := ump(t, store, "export", "--manifest", hash, "--format", "arrow", "--out", arrowPath); r.code != 0 {
		t.Fatalf("export arrow: %s", r.stderr)
	}
	if data, _ := os.ReadFile(arrowPath); !bytes.HasPrefix(data, []byte("ARROW1")) {
		t.Error("arrow export is not an Arrow IPC file")
	}
}

// TestRunScale runs a manifest with --scale: fewer rounds, a new hash, the
// table printed, and cells shared with the unscaled manifest of that many
// rounds (all cache hits).
func TestRunScale(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	small := strings.Replace(longManifest, "dim: 30000", "dim: 30", 1)
	m := writeFile(t, "m.yaml", small)
	scaled := ump(t, store, "run", "--scale", "0.25", m)
	if scaled.code != 0 {
		t.Fatalf("run --scale 0.25 exited %d: %s", scaled.code, scaled.stderr)
	}
	if !strings.Contains(scaled.stderr, "round 30/30") || strings.Contains(scaled.stderr, "/120") {
		t.Errorf("--scale 0.25 of 120 rounds did not run 30:\n%s", scaled.stderr)
	}
	if !tableHint.MatchString(scaled.stdout) || !strings.Contains(scaled.stdout, "| objective_gap |") {
		t.Errorf("run did not print the manifest's table:\n%s", scaled.stdout)
	}
	short := ump(t, store, "run", writeFile(t, "short.yaml", strings.Replace(small, "rounds: 120", "rounds: 30", 1)))
	if short.code != 0 || hashOf(t, short) == hashOf(t, scaled) || !strings.Contains(short.stderr, "(2 fully cached)") {
		t.Errorf(
			"the 30-round manifest: exit %d, hash equal to the scaled one: %v; want a different hash and every cell "+
				"cached:\n%s",
			short.code,
			hashOf(t, short) == hashOf(t, scaled),
			short.stderr,
		)
	}
	if bad := ump(t, store, "run", "--scale", "0", m); bad.code != 2 ||
		!strings.Contains(bad.stderr, "--scale 0: use a number in (0, 1]") {
		t.Errorf("--scale 0: exit %d, %s; want exit 2 naming the flag", bad.code, bad.stderr)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	bad := writeFile(
		t,
		"bad.yaml",
		"version: 1\nname: bad\ntask: {dataset: quadratic}\nrounds: 5\nlr: 0.1\nalgorithm: {name: d-sum}\nworkers: "+
			"many\n",
	)
	if r := ump(t, store, "run", bad); r.code != 2 || !strings.Contains(r.stderr, "bad.yaml:7:") ||
		!strings.Contains(r.stderr, `"workers"`) {
		t.Errorf("bad manifest: exit %d, stderr %q; want 2 naming bad.yaml:7 and workers", r.code, r.stderr)
	}
	if r := ump(t, store, "run", filepath.Join(t.TempDir(), "missing.yaml")); r.code == 0 {
		t.Errorf("missing manifest exited 0")
	}
	diverging := writeFile(
		t,
		"div.yaml",
		strings.NewReplacer("dim: 30000", "dim: 10", "lr: 0.02", "lr: 3").Replace(longManifest),
	)
	r := ump(t, store, "run", diverging)
	if r.code != 0 || !strings.Contains(r.stdout, "diverged") || !strings.Contains(r.stdout, "*") {
		t.Errorf("diverging manifest: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if r := ump(t, store, "show", "0000000"); r.code != 2 || !strings.Contains(r.stderr, "no manifest") {
		t.Errorf("unknown hash: exit %d, %q", r.code, r.stderr)
	}
	if r := ump(t, store, "export", "--manifest", hashOf(t, ump(t, store, "run", diverging)), "--table", "nope",
		"--out", "-"); r.code != 2 {
		t.Errorf("bad --table: exit %d", r.code)
	}
	notFetched := writeFile(
		t,
		"cifar.yaml",
		"version: 1\nname: c\ntask: {dataset: cifar10, model: lenet}\nworkers: 2\nrounds: 1\nlr: 0.1\nalgorithm: "+
			"{name: d-sum}\n",
	)
	if r := ump(t, store, "--data-dir", t.TempDir(), "run", notFetched); r.code != 2 ||
		!strings.Contains(r.stderr, " data fetch cifar10`") {
		t.Errorf("a data set not fetched: exit %d, %q; want 2 saying how to fetch it", r.code, r.stderr)
	}
	if r := ump(t, store, "help"); r.code != 0 || !strings.Contains(r.stdout, "EXIT CODES") {
		t.Errorf("help lacks exit codes: %s", r.stdout)
	}
}

// TestFlagsAnywhere runs the command forms the README documents with
// their flags after the positional argument, and checks that a flag a
// command does not know, a flag without its value and a missing required
// flag exit 2 with one line saying what is wrong (no help dump).
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, store, "run", m, "--scale", "0.5"))
	plots := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table", hash, "--latex"}, `\begin{tabular}`},
		{[]string{"table", hash[:12], "--value", "grad_norm_sq", "--csv"}, "grad_norm_sq"},
		{[]string{"show", hash, "--manifest"}, `"scale": 0.5`},
		{[]string{"plot", hash, "--out", plots, "--format", "svg"}, "curves"},
		{[]string{"status", hash}, "completed"},
		{[]string{"export", "--table", "final", "--out", "-", "--manifest", hash}, "objective_gap"},
	} {
		if r := ump(t, store, tc.args...); r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf(
				"ump %s: exit %d, stdout lacks %q\n%s%s",
				strings.Join(tc.args, " "),
				r.code,
				tc.want,
				r.stdout,
				r.stderr,
			)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(plots, "curves*.svg")); len(files) == 0 {
		t.Error("plot HASH --out DIR wrote no curves into DIR")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", m, "--set", "lr=1"}, "flag provided but not defined: -set"},
		{[]string{"run", "--scale"}, "flag needs an argument"},
		{[]string{"export", "--manifest", hash, "--table", "final"}, "export needs --out"},
		{[]string{"worker", "--index", "0"}, "worker needs --run"},
		{[]string{"table", hash, "extra"}, "exactly one argument"},
		{[]string{"help", "nosuchcmd"}, "No help topic for 'nosuchcmd'"},
		{[]string{"stauts"}, `Did you mean "status"?`},
		{[]string{"table", hash, "--value"}, "flag needs an argument: -value"},
		{[]string{"run", m, "lr=0.1", "lr=0.2"}, "override 1 already sets lr"},
	} {
		r := ump(t, store, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stdout+r.stderr, "USAGE:") {
			t.Errorf(
				"ump %s: exit %d, %q%q; want exit 2 naming %q, without the help",
				strings.Join(tc.args, " "),
				r.code,
				r.stdout,
				r.stderr,
				tc.want,
			)
		}
	}
}

// TestGlobalFlagsAfterTheCommandAndVersion: a global flag given after the
// command (and after its argument) applies; a hint to rerun keeps it;
// --version names the build.
func TestGlobalFlagsAfterTheCommandAndVersion(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	for _, args := range [][]string{{"status", "--store", store}, {"status", hash, "--store=" + store}, {"table",
		hash[:12], "--latex", "--store", store}} {
		out, err := exec.Command(umpBin, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), hash[:12]) && !strings.Contains(string(out), "tabular") {
			t.Errorf("ump %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	m := writeFile(t, "m2.yaml", strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1))
	// (TestMain sets UMP_KEY, which the hint keeps too, as it keeps a data
	// directory chosen by UMP_DATA.)
	globals := "`" + umpBin + " --store " + store
	if dir := os.Getenv("UMP_DATA"); dir != "" {
		globals += " --data-dir " + dir
	}
	if r := ump(t, store, "run", m, "--until", "topology"); r.code != 0 ||
		!strings.Contains(r.stderr, globals+" --key "+os.Getenv("UMP_KEY")+" run "+m+"` continues") {
		t.Errorf("run --until: exit %d; want the hint to continue with --store:\n%s", r.code, r.stderr)
	}
	if out, err := exec.Command(umpBin, "--version").CombinedOutput(); err != nil ||
		!strings.HasPrefix(string(out), "ump version ") {
		t.Errorf("ump --version: %v %q", err, out)
	}
}

// TestATableThatCannotBeLaidOutIsRefusedBeforeTraining: a table block
// that does not place every swept path is bad input before any cell
// runs, naming them all, with nothing registered. One that an older ump
// registered says so on its line of `ump status`, and the others are
// listed as usual.
func TestATableThatCannotBeLaidOutIsRefusedBeforeTraining(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	good := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	before := ump(t, store, "status").stdout
	badYAML := strings.Replace(
		smallManifest,
		"  seed: [1, 2]\n",
		"  seed: [1, 2]\n  lr: [0.02, 0.01]\n  local_steps: [1, 2]\ntable: {rows: [algorithm], value: objective_gap}\n",
		1,
	)
	r := ump(t, store, "run", writeFile(t, "bad.yaml", badYAML))
	if r.code != 2 || !strings.Contains(r.stderr, `field "table": the sweep varies lr (`) ||
		!strings.Contains(r.stderr, "and local_steps (") ||
		strings.Contains(r.stderr, "round") {
		t.Errorf(
			"run of a manifest whose table places no lr or local_steps: exit %d; want 2 naming both before any "+
				"training\n%s",
			r.code,
			r.stderr,
		)
	}
	if after := ump(t, store, "status").stdout; after != before {
		t.Errorf("the refused manifest was registered: status was\n%s\nand is\n%s", before, after)
	}

	// As an older ump registered it: the plan built without the check.
	plan, err := manifests.Parse(
		"m.yaml",
		[]byte(strings.Replace(smallManifest, "  seed: [1, 2]\n", "  seed: [1, 2]\n  lr: [0.02, 0.01]\n", 1)),
	)
	if err != nil {
		t.Fatal(err)
	}
	plan.Manifest.Table = &manifests.Table{Rows: []string{"algorithm"}, Value: "objective_gap", Best: "min", Digits: 4}
	plan.Hash = manifests.HashOf(plan.Manifest)
	s, err := pipeline.Open(store, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&pipeline.Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: globals{}.cellStages(),
		Engines: engines.Set{}, Until: "partition"}).Run(
		context.Background(),
		plan,
	)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	bad := plan.Hash
	st := ump(t, store, "status")
	if st.code != 0 || !strings.Contains(st.stdout, good[:12]) || !strings.Contains(st.stdout, bad[:12]) ||
		!strings.Contains(st.stdout, "no table: ") ||
		!strings.Contains(st.stdout, "the sweep varies lr") {
		t.Errorf(
			"status with a manifest whose table cannot be laid out: exit %d; want both listed, that one saying "+
				"why\n%s%s",
			st.code,
			st.stdout,
			st.stderr,
		)
	}
}

// TestStatusSaysWhenAndBest: the store's list gives each manifest's run
// time and its table's best entry so far.
func TestStatusSaysWhenAndBest(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	st := ump(t, store, "status")
	line := regexp.MustCompile(
		`(?m)^ +ran \d{4}-\d\d-\d\d \d\d:\d\d to \d\d:\d\d \(\S+\); best objective_gap \S+ \(gt-dsum\(`,
	)
	if st.code != 0 || !strings.Contains(st.stdout, hash[:12]) || !line.MatchString(st.stdout) {
		t.Errorf("status lacks when the manifest ran and its best entry:\n%s", st.stdout)
	}
}

// TestRunJobsIsBitIdentical: four data-set cells two at a time (each
// engine on half the cores) give the outputs and tables of one at a time.
func TestRunJobsIsBitIdentical(t *testing.T) {
	t.Parallel()
	m := writeFile(
		t,
		"syn.yaml",
		strings.NewReplacer("task: {dataset: quadratic, quadratic: {dim: 30, sigma: 0.5}}", "task: {dataset: "+
			"synthetic, model: mlp}",
			"seed: [1, 2]", "seed: [1, 2, 3, 4]").
			Replace(smallManifest),
	)
	one, two := t.TempDir(), t.TempDir()
	hash := hashOf(t, ump(t, one, "run", m))
	r := ump(t, two, "run", m, "-j", "2")
	if r.code != 0 || hashOf(t, r) != hash || !strings.Contains(r.stderr, "4 cells, 2 at a time") {
		t.Fatalf("run -j 2: exit %d\n%s", r.code, r.stderr)
	}
	if a, b := outputsOf(t, one, hash), outputsOf(t, two, hash); a == "" || a != b {
		t.Errorf("outputs differ between -j 1 and -j 2:\n%s\n---\n%s", a, b)
	}
	if a, b := exportCSV(t, one, hash, "rounds"), exportCSV(t, two, hash, "rounds"); a != b {
		t.Error("the rounds table differs between -j 1 and -j 2")
	}
}

// TestRunOverrides: `ump run M.yaml PATH=VALUE ...` runs the manifest as
// if the file said so (same hash), says which overrides it applied, and a
// bad one is exit 2 naming it.
func TestRunOverrides(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	r := ump(t, store, "run", m, "lr=0.01", "sweep.seed=[3]")
	written := writeFile(
		t,
		"w.yaml",
		strings.NewReplacer("lr: 0.02", "lr: 0.01", "seed: [1, 2]", "seed: [3]").Replace(smallManifest),
	)
	if r.code != 0 || !strings.Contains(r.stderr, "override 1: lr=0.01") || !strings.Contains(r.stderr, "1 cells:") ||
		hashOf(t, r) != hashOf(t, ump(t, store, "run", written)) {
		t.Errorf("run with overrides: exit %d, hash %s\n%s", r.code, hashOf(t, r), r.stderr)
	}
	if bad := ump(t, store, "run", m, "lr=fast"); bad.code != 2 || !strings.Contains(bad.stderr, "override 1") ||
		!strings.Contains(bad.stderr, `"lr"`) {
		t.Errorf("a bad override: exit %d %q", bad.code, bad.stderr)
	}
}

// TestKillAnywhereThenResumeIsBitIdentical SIGKILLs a quadratic sweep again
// and again at growing delays, then lets it finish, and compares every
// table and output digest with an uninterrupted run. The sweep compresses
// with qsgd (random streams): D-SUM keeps CHOCO copies of x and v, SlowMo
// an error-feedback residual, and the bit counters go through checkpoints.
func TestKillAnywhereThenResumeIsBitIdentical(t *testing.T) {
	t.Parallel()
	compressed := strings.Replace(
		longManifest,
		"algorithm: {name: gt-dsum}\nsweep:\n  seed: [1, 2]\n",
		"algorithm: {name: d-sum}\ncompression: {codec: qsgd, levels: 8}\nsweep:\n  algorithm: [{name: d-sum}, "+
			"{name: slowmo}]\n",
		1,
	)
	if compressed == longManifest {
		t.Fatal("the compressed variant of longManifest did not apply")
	}
	killThenResume(t, compressed, 120*time.Millisecond)
}

// mnistKillManifest is a small version of the all-algorithms MNIST run:
// LeNet, Dirichlet 0.1, ring, momentum and tracker state in the
// checkpoints.
const mnistKillManifest = `version: 1
name: mnist-kill
task: {dataset: mnist, model: lenet}
workers: 4
rounds: 12
local_steps: 5
batch_size: 64
lr: 0.03
partition: {kind: dirichlet, alpha: 0.1}
topology: {kind: ring}
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: gt-dsum, beta: 0.5}, {name: qg-dsgdm}]
evaluate: {every: 4}
checkpoint: {every: 2}
`

// TestKillDuringMNISTTrainingThenResumeIsBitIdentical does the same on
// real MNIST with LeNet.
func TestKillDuringMNISTTrainingThenResumeIsBitIdentical(t *testing.T) {
	t.Parallel()
	if info, _ := datasets.Lookup("mnist"); !info.Installed(datasets.DefaultDir()) {
		t.Skipf("mnist is not installed in %s (run `ump data fetch mnist`; .ci/run installs it)", datasets.DefaultDir())
	}
	killThenResume(t, mnistKillManifest, 400*time.Millisecond)
}

// killThenResume kills runs of manifest after 150 ms, then step longer
// each time, until one finishes.
func killThenResume(t *testing.T, manifest string, step time.Duration) {
	m := writeFile(t, "m.yaml", manifest)
	clean := t.TempDir()
	ref := ump(t, clean, "run", m)
	if ref.code != 0 {
		t.Fatalf("clean run: %s", ref.stderr)
	}
	hash := hashOf(t, ref)

	store := t.TempDir()
	midTraining, finished := 0, false
	for delay := 150 * time.Millisecond; delay < 20*time.Second && !finished; delay += step {
		finished = !killedAfter(t, delay, func(pid int) {
			if s := snapshot(store); s != nil && s.PID == pid && s.State == "running" && s.Stage == "train" {
				midTraining++
				if midTraining == 1 {
					st := ump(t, store, "status")
					if st.code != 0 || !strings.Contains(st.stdout, fmt.Sprintf("run running by PID %d", pid)) {
						t.Errorf("status during a run: %d %q %q", st.code, st.stdout, st.stderr)
					}
				}
			}
		}, "--store", store, "run", m)
	}
	if midTraining < 2 {
		t.Fatalf("only %d kills landed during training; the test did not exercise resume", midTraining)
	}
	t.Logf("killed %d times during training", midTraining)
	final := ump(t, store, "run", m)
	if final.code != 0 {
		t.Fatalf("final run: %d %s", final.code, final.stderr)
	}
	for _, table := range []string{"rounds", "final"} {
		if a, b := exportCSV(t, clean, hash, table), exportCSV(t, store, hash, table); a != b {
			t.Errorf("%s table differs after kills:\n%s\nvs\n%s", table, a, b)
		}
	}
	if a, b := outputsOf(t, clean, hash), outputsOf(t, store, hash); a != b || a == "" {
		t.Errorf("output digests differ after kills:\n%s\nvs\n%s", a, b)
	}
	if v := ump(t, store, "verify", hash); v.code != 0 {
		t.Errorf("verify after kills: %s", v.stdout)
	}
}

// TestCtrlCStopsCleanlyAndSecondProcessIsRefused interrupts a run with
// SIGINT after a second process was refused the store.
func TestCtrlCStopsCleanlyAndSecondProcessIsRefused(t *testing.T) {
	t.Parallel()
	m := writeFile(t, "long.yaml", longManifest)
	store := t.TempDir()
	cmd, stderr := runUntilTraining(t, store, m)
	second := ump(t, store, "run", m)
	if second.code != 3 || !strings.Contains(second.stderr, fmt.Sprintf("in use by PID %d", cmd.Process.Pid)) {
		t.Errorf("second process: exit %d, %q; want 3 naming PID %d", second.code, second.stderr, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 ||
		!strings.Contains(stderr.String(), "stopped at a safe point") {
		t.Fatalf("after SIGINT: %v\n%s", err, stderr.String())
	}
	if s := snapshot(store); s == nil || s.State != "interrupted" {
		t.Errorf("snapshot after SIGINT: %+v", s)
	}
	// The interrupted cell's rounds so far, with --include-incomplete.
	hash := snapshot(store).Manifest
	if r := ump(t, store, "export", "--manifest", hash, "--table", "rounds", "--out", "-"); !strings.Contains(
		r.stderr,
		"left out",
	) {
		t.Errorf("export without --include-incomplete did not leave out the interrupted cell:\n%s", r.stderr)
	}
	rows := exportRows(t, store, hash, "rounds", "--include-incomplete")
	round, status := slices.Index(rows[0], "round"), slices.Index(rows[0], "status")
	if len(rows) < 3 || rows[1][status] != "incomplete" || rows[1][round] != "3" || rows[2][round] != "6" {
		t.Errorf("export --include-incomplete of the interrupted cell: %v", rows)
	}
	resumed := ump(t, store, "run", m)
	if resumed.code != 0 || !strings.Contains(resumed.stderr, "resuming from the checkpoint after round") {
		t.Errorf("rerun did not resume: %d\n%s", resumed.code, resumed.stderr)
	}
}

// TestReadersBesideARun reads a store while a run holds it: status, show,
// table and export answer from the events the run has published, with
// the finished cell's results and the rest still pending, while a second
// writer is still refused.
func TestReadersBesideARun(t *testing.T) {
	t.Parallel()
	m := writeFile(t, "long.yaml", longManifest)
	store := t.TempDir()
	cmd := exec.Command(umpBin, "--store", store, "run", m)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if s := snapshot(store); s != nil && s.PID == cmd.Process.Pid && s.CellsDone == 1 && s.Stage == "train" &&
			s.Round >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run never reached its second cell's training: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	hash := hashOf(t, result{stdout: stdout.String()})
	holder := fmt.Sprintf("in use by PID %d", cmd.Process.Pid)

	st := ump(t, store, "status")
	if st.code != 0 || !strings.Contains(st.stdout, fmt.Sprintf("run running by PID %d", cmd.Process.Pid)) ||
		!strings.Contains(st.stdout, "2 cells: 1 completed, 0 diverged, 0 failed, 1 incomplete, 0 pending") {
		t.Errorf("status beside the run: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	show := ump(t, store, "show", hash[:12])
	if show.code != 0 || !strings.Contains(show.stderr, holder) ||
		!regexp.MustCompile(
			`(?s)cell 1 seed=1\n.*status completed.*cell 2 seed=2\n.*status incomplete.*stage train: running`).
			MatchString(show.stdout) {
		t.Errorf("show beside the run: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	rows := exportRows(t, store, hash, "final")
	seed := slices.Index(rows[0], "seed")
	if len(rows) != 2 || seed < 0 || rows[1][seed] != "1" {
		t.Errorf("final table beside the run: want the header and seed 1's row, got %v", rows)
	}
	table := ump(t, store, "table", hash)
	if table.code != 0 || !strings.Contains(table.stderr, holder) || !strings.Contains(table.stdout, "objective_gap") {
		t.Errorf("table beside the run: exit %d\n%s%s", table.code, table.stdout, table.stderr)
	}
	if second := ump(t, store, "run", m); second.code != 3 || !strings.Contains(second.stderr, holder) {
		t.Errorf("second writer: exit %d %q; want 3 naming PID %d", second.code, second.stderr, cmd.Process.Pid)
	}
	if gc := ump(t, store, "gc"); gc.code != 3 {
		t.Errorf("gc beside the run: exit %d; it removes blobs and must wait for the run", gc.code)
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
}

// TestFlagPlaceholdersAreNames: the placeholder `ump help` shows after
// each flag (the first backquoted word of its usage) is a name such as
// FILE or HASH, without spaces, never a phrase quoted in the usage.
func TestFlagPlaceholdersAreNames(t *testing.T) {
	t.Parallel()
	var check func(where string, flags []cli.Flag, cmds []*cli.Command)
	check = func(where string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			d, ok := f.(cli.DocGenerationFlag)
			if !ok {
				continue
			}
			_, quoted, _ := strings.Cut(d.GetUsage(), "`")
			name, _, closed := strings.Cut(quoted, "`") // as urfave/cli reads the placeholder
			if closed && (strings.ContainsAny(name, " \t") || strings.ToLower(name) == name) {
				t.Errorf(
					"%s --%s shows the placeholder %q; quote a name such as FILE in its usage",
					where,
					f.Names()[0],
					name,
				)
			}
		}
		for _, c := range cmds {
			check(where+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	app := newApp("ump", io.Discard, io.Discard)
	check("ump", app.Flags, app.Commands)
	var out bytes.Buffer
	newApp("ump", &out, io.Discard).Run([]string{"ump", "help"})
	if !strings.Contains(out.String(), "--data-dir DIR") {
		t.Errorf("ump help does not show --data-dir DIR:\n%s", out.String())
	}
}

// TestOneInterruptStopsALongRound: a round of 10^9 local steps prints its
// progress within the round, and one SIGINT stops it within 5 s (exit
// 130): the round is abandoned at a local step after the 2 s it may take
// to end, the store is left with the cell incomplete (not failed), and a
// rerun starts it again.
func TestOneInterruptStopsALongRound(t *testing.T) {
	t.Parallel()
	m := writeFile(t, "long-round.yaml", `version: 1
name: long-round
task: {dataset: quadratic, quadratic: {dim: 3000}}
workers: 4
rounds: 1
local_steps: 1000000000
lr: 0.001
algorithm: {name: d-sum}
`)
	store := t.TempDir()
	cmd := exec.Command(umpBin, "--store", store, "run", m)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "train: round 1/1, local step ") {
		if time.Now().After(deadline) {
			t.Fatalf("no progress within the round after 30 s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("after one SIGINT: %v, want exit 130\n%s", err, stderr.String())
		}
		t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatalf("one SIGINT did not stop a long round within 5 s:\n%s", stderr.String())
	}
	if st := ump(t, store, "status"); !strings.Contains(st.stdout, "1 incomplete") {
		t.Errorf("after the interrupt the cell is not incomplete:\n%s%s", st.stdout, st.stderr)
	}
	again := exec.Command(umpBin, "--store", store, "run", m)
	var again2 syncBuffer
	again.Stderr = &again2
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	defer again.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(again2.String(), "local step "); time.Sleep(
		50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the rerun did not train again:\n%s", again2.String())
		}
	}
	if !strings.Contains(again2.String(), "partition: cached") {
		t.Errorf("the rerun did not take the cell's earlier stages from the store:\n%s", again2.String())
	}
}

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runUntilTraining starts `ump --store store run args...` and waits (20 s
// at most) until it reports round 6 of a cell's training; the process is
// killed when the test ends.
func runUntilTraining(t *testing.T, store string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(umpBin, append([]string{"--store", store, "run"}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for s := snapshot(store); s == nil || s.PID != cmd.Process.Pid || s.Stage != "train" || s.Round < 6; s = snapshot(
		store) {
		if time.Now().After(deadline) {
			t.Fatalf("run never reached training: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, stderr
}

// TestKernelsFromTheEnvironment: UMP_KERNELS forces a kernel path that
// `ump doctor` then names, and a path this CPU cannot run is bad input
// (exit 2) naming the paths it can.
func TestKernelsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	if r := umpEnv(t, []string{"UMP_KERNELS=go"}, store, "doctor"); r.code != 0 ||
		!strings.Contains(r.stdout, "kernels go (Go loops; ") {
		t.Errorf("UMP_KERNELS=go ump doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := umpEnv(t, []string{"UMP_KERNELS=neon"}, store, "doctor"); r.code != 2 ||
		!strings.Contains(r.stderr, "UMP_KERNELS=neon") ||
		!strings.Contains(r.stderr, "go") {
		t.Errorf("UMP_KERNELS=neon: exit %d, want 2 naming the paths this CPU runs\n%s", r.code, r.stderr)
	}
}

// TestAFetchThatReachesNoSourceExits3: a data set none of whose sources
// gave its files (datasets.ErrUnreachable, which Fetch's test checks it
// returns) is the network's failure, exit 3, not the input's.
func TestAFetchThatReachesNoSourceExits3(t *testing.T) {
	t.Parallel()
	if code := exitCode(fmt.Errorf("could not fetch cifar10: %w", datasets.ErrUnreachable)); code != exitStore {
		t.Errorf("exit %d; want %d", code, exitStore)
	}
}

// TestARunWhoseReaderLeavesClosesItsStore: `ump run M | head -1` reads
// the hash and closes the pipe; the run finishes and closes its store,
// exit 0 (it was killed by SIGPIPE holding it, and readers then saw a
// store not closed by its last writer).
func TestARunWhoseReaderLeavesClosesItsStore(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12").Replace(longManifest),
	)
	r := inShell(
		t,
		t.TempDir(),
		display.Shell(
			umpBin,
		)+" --store "+display.Shell(
			store,
		)+" run "+display.Shell(
			m,
		)+" 2>/dev/null | head -1; exit ${PIPESTATUS[0]}",
	)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "manifest ") {
		t.Fatalf("run | head -1: exit %d (141: killed by SIGPIPE), %q", r.code, r.stdout)
	}
	if st := ump(t, store, "status"); st.code != 0 || strings.Contains(st.stderr, "not closed by its last writer") {
		t.Errorf("status after run | head -1: exit %d\n%s", st.code, st.stderr)
	}
}

// TestARemovedStoreStopsTheRun removes the store's directory under a
// run: the run notices within seconds and exits 3 naming the store,
// rather than writing on into nothing or hanging in the log's close.
func TestARemovedStoreStopsTheRun(t *testing.T) {
	t.Parallel()
	m := writeFile(t, "long.yaml", longManifest)
	store := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(umpBin, "--store", store, "run", m)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for s := snapshot(store); s == nil || s.Stage != "train"; s = snapshot(store) {
		if time.Now().After(deadline) {
			t.Fatalf("the run never started training: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for os.RemoveAll(store) != nil { // the run may write a blob while it goes
	}
	removed := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		said := strings.Contains(stderr.String(), "was removed or moved while this command used it")
		if !errors.As(err, &exit) || exit.ExitCode() != exitStore || !said {
			t.Errorf("the run after its store was removed: %v, want exit 3 naming the store\n%s", err, stderr.String())
		}
		if d := time.Since(removed); d > 20*time.Second {
			t.Errorf("the run took %s to notice", d)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the run still runs a minute after its store was removed:\n%s", stderr.String())
	}
}

// TestTheStoreIsFoundAbove: without --store, ump uses ./.ump, or else
// the .ump store of the nearest directory above, as git finds its
// repository, and says so; where there is none it says what it searched.
func TestTheStoreIsFoundAbove(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	if r := ump(t, filepath.Join(project, ".ump"), "run", writeFile(t, "m.yaml", smallManifest)); r.code != 0 {
		t.Fatalf("run: exit %d, %s", r.code, r.stderr)
	}
	sub := filepath.Join(project, "notebooks", "today")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := func(dir string, args ...string) (string, string, error) {
		cmd := exec.Command(umpBin, args...)
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "UMP_STORE=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := bare(sub, "status")
	found := strings.Contains(stderr, "using the store "+filepath.Join(project, ".ump"))
	if err != nil || !strings.Contains(stdout, "long ") || !found {
		t.Errorf("status from %s: %v\n%s%s", sub, err, stdout, stderr)
	}
	if _, stderr, err := bare(project, "status"); err != nil || strings.Contains(stderr, "using the store") {
		t.Errorf("status beside the store: %v, %s (want it used quietly)", err, stderr)
	}
	_, stderr, err = bare(t.TempDir(), "status")
	if err == nil || !strings.Contains(stderr, "no store at ./.ump, nor a .ump store in a directory above") {
		t.Errorf("status with no store anywhere: %v, %s", err, stderr)
	}
}
