package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/pipeline"
)

// smallManifest is longManifest at test size: two cells of 20 rounds.
var smallManifest = strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 20").Replace(longManifest)

// tree lists every file under dir with its size and modification time.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %d %d", rel, info.Size(), info.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestReadersNeverWrite: status, show, table, export, verify and plot
// leave every file of a store as it was.
func TestReadersNeverWrite(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	before := tree(t, store)
	for _, args := range [][]string{{"status"}, {"show", hash}, {"table", hash}, {"export", "--manifest", hash,
		"--table", "rounds", "--out", "-"},
		{"verify", hash}, {"plot", "--out", t.TempDir(), hash}} {
		if r := ump(t, store, args...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		if after := tree(t, store); after != before {
			t.Fatalf("%v wrote to the store:\nbefore\n%s\nafter\n%s", args, before, after)
		}
	}
}

// TestDamagedLogIsRefusedNotEmptied: with the event log's MANIFEST
// missing or truncated, or the log shorter than the store's marker
// records, every command refuses the store (exit 3, naming the damage and
// the recovery) and deletes nothing; once repaired, the store is whole.
// With a truncated MANIFEST, whose table files look like a crash's
// leftovers, readers show the events the last writer published (exit 0,
// saying so) and writers, after setting the files aside, find the log
// short of the marker and put them back.
func TestDamagedLogIsRefusedNotEmptied(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, store, "run", m))
	manifest := filepath.Join(store, "events", "MANIFEST")
	good, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(store, "events", "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the run left no table files; the test needs some")
	}
	goodTable, _ := os.ReadFile(tables[0])
	marker := filepath.Join(store, "ump-store.json")
	goodMarker, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	damages := []struct {
		name, want string
		readable   bool // readers show the published events
		damage     func()
	}{
		{"MANIFEST missing", "MANIFEST is missing", false, func() { os.Remove(manifest) }},
		{"MANIFEST truncated", "they are back in place", true, func() { os.WriteFile(manifest, good[:8], 0o644) }},
		{"table file truncated", "does not read", false, func() { os.Truncate(tables[0], 5000) }},
		{"log shorter than the marker", "records 1000000 committed events", false, func() {
			os.WriteFile(marker, []byte(`{"format":"ump store","version":1,"last_seq":1000000}`), 0o644)
		}},
	}
	for _, d := range damages {
		d.damage()
		damaged := tree(t, store)
		for _, args := range [][]string{{"status"}, {"table", hash}, {"run", m}, {"gc"}} {
			r := ump(t, store, args...)
			if d.readable && args[0] != "run" && args[0] != "gc" {
				if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "showing the events it published") {
					t.Errorf("%s: %v: exit %d %q; want 0 and the published events", d.name, args, r.code, r.stderr)
				}
				continue
			}
			if r.code != 3 || !strings.Contains(r.stderr, "store is damaged") || !strings.Contains(r.stderr, d.want) ||
				!strings.Contains(r.stderr, "To recover") {
				t.Errorf(
					"%s: %v: exit %d %q; want 3 naming %q and the recovery",
					d.name,
					args,
					r.code,
					r.stderr,
					d.want,
				)
			}
		}
		if after := tree(t, store); after != damaged {
			t.Errorf("%s: the commands changed the damaged store:\nbefore\n%s\nafter\n%s", d.name, damaged, after)
		}
		os.WriteFile(manifest, good, 0o644)
		os.WriteFile(tables[0], goodTable, 0o644)
		os.WriteFile(marker, goodMarker, 0o644)
		if r := ump(t, store, "run", m); r.code != 0 || !strings.Contains(r.stderr, "(2 fully cached)") {
			t.Fatalf("%s, repaired: rerun exit %d, want every cell cached:\n%s", d.name, r.code, r.stderr)
		}
		good, _ = os.ReadFile(manifest) // the run may have compacted
		goodTable, _ = os.ReadFile(tables[0])
		goodMarker, _ = os.ReadFile(marker)
	}
}

// TestCrashLeftoversAreSetAside: table files the event log's MANIFEST
// does not list — what a memory-table flush or compaction interrupted by
// kill -9 leaves, empty or not — are not damage: readers show the
// published events and change nothing; the next writer moves them to
// events/orphaned (kept byte for byte), says so once, and the store is
// whole (every cell cached, readers plain again).
func TestCrashLeftoversAreSetAside(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, store, "run", m))
	want := ump(t, store, "table", hash).stdout
	events := filepath.Join(store, "events")
	leftovers := map[string][]byte{"000099.sst": nil, "000098.sst": []byte("half a flushed table")}
	for name, data := range leftovers {
		os.WriteFile(filepath.Join(events, name), data, 0o644)
	}
	before := tree(t, store)
	for _, args := range [][]string{{"status"}, {"table", hash}} {
		r := ump(t, store, args...)
		if r.code != 0 ||
			!strings.Contains(r.stdout+r.stderr, "table files its MANIFEST does not list") { // status says it on stdout
			t.Errorf("%v beside leftovers: exit %d %q", args, r.code, r.stderr)
		}
	}
	if got := ump(t, store, "table", hash).stdout; got != want {
		t.Errorf("the table from the published events:\n%s\nwant\n%s", got, want)
	}
	if after := tree(t, store); after != before {
		t.Errorf("readers changed the store:\nbefore\n%s\nafter\n%s", before, after)
	}
	r := ump(t, store, "run", m)
	if r.code != 0 ||
		!strings.Contains(r.stderr, "moved 2 table files its MANIFEST does not list (000098.sst, 000099.sst)") ||
		!strings.Contains(r.stderr, "(2 fully cached)") {
		t.Fatalf("run beside leftovers: exit %d %q", r.code, r.stderr)
	}
	for name, data := range leftovers {
		if got, err := os.ReadFile(filepath.Join(events, "orphaned", name)); err != nil || string(got) != string(data) {
			t.Errorf("%s set aside as %q, %v; want it kept as %q", name, got, err, data)
		}
	}
	if r := ump(t, store, "status"); r.code != 0 || strings.Contains(r.stdout+r.stderr, "published") {
		t.Errorf("status after: exit %d %q", r.code, r.stderr)
	}
}

// TestForeignDirectoryIsNotAdopted: a non-empty directory that is not a
// store is refused by writers and readers, and left as it was.
func TestForeignDirectoryIsNotAdopted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("\\documentclass{article}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "blobs"), 0o755)
	os.WriteFile(filepath.Join(dir, "blobs", ".tmp-draft"), []byte("mine"), 0o644)
	before := tree(t, dir)
	m := writeFile(t, "m.yaml", smallManifest)
	for _, args := range [][]string{{"run", m}, {"status"}, {"gc"}} {
		r := ump(t, dir, args...)
		if r.code != 3 || !strings.Contains(r.stderr, "not an ump store") || !strings.Contains(r.stderr, "thesis.tex") {
			t.Errorf("%v on a foreign directory: exit %d %q; want 3, not an ump store", args, r.code, r.stderr)
		}
	}
	if after := tree(t, dir); after != before {
		t.Errorf("ump changed a foreign directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	// An empty directory becomes a store.
	empty := t.TempDir()
	if r := ump(t, empty, "run", m); r.code != 0 {
		t.Errorf("run in an empty directory: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "ump-store.json")); err != nil {
		t.Errorf("a new store has no marker: %v", err)
	}
}

// TestGCRefusesAPartlyUnreadableLog: with bytes flipped in a table file,
// gc removes nothing (exit 3); with the file restored it removes only the
// unreferenced blob.
func TestGCRefusesAPartlyUnreadableLog(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	ump(t, store, "run", m)
	s, err := pipeline.Open(store, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Local.Put(context.Background(), []byte("a checkpoint whose event was never written")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	tables, _ := filepath.Glob(filepath.Join(store, "events", "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the run left no table files; the test needs some")
	}
	good, _ := os.ReadFile(tables[0])
	bad := slices.Clone(good)
	for i := range 16 {
		bad[len(bad)/3+i] ^= 0xff
	}
	os.WriteFile(tables[0], bad, 0o644)
	blobs := tree(t, filepath.Join(store, "blobs"))
	for _, args := range [][]string{{"gc"}, {"gc", "--dry-run"}} {
		r := ump(t, store, args...)
		if r.code != 3 || !strings.Contains(r.stderr, "store is damaged") {
			t.Errorf("%v with a damaged table: exit %d %q; want 3, store is damaged", args, r.code, r.stderr)
		}
	}
	if after := tree(t, filepath.Join(store, "blobs")); after != blobs {
		t.Fatalf("gc removed blobs from a damaged store:\nbefore\n%s\nafter\n%s", blobs, after)
	}
	os.WriteFile(tables[0], good, 0o644)
	if r := ump(t, store, "gc"); r.code != 0 || !strings.HasPrefix(r.stdout, "removed 1 unreferenced blobs") {
		t.Errorf("gc of the repaired store: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestVerifyReadsBackBlobs: verify reports a missing and a corrupt blob
// (exit 1) even though the recomputation matches, --repair stores them
// again, and a rerun finds the store whole.
func TestVerifyReadsBackBlobs(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	blobs, _ := filepath.Glob(filepath.Join(store, "blobs", "sha256", "*", "*"))
	if len(blobs) < 2 {
		t.Fatalf("the run stored %d blobs", len(blobs))
	}
	os.Remove(blobs[0])
	os.WriteFile(blobs[1], []byte("flipped"), 0o644)
	v := ump(t, store, "verify", hash)
	if v.code != 1 || !strings.Contains(v.stdout, "2 missing or corrupt") ||
		!strings.Contains(v.stdout, "artifact not found") ||
		!strings.Contains(v.stdout, "artifact corrupt") ||
		!strings.Contains(v.stdout, "verify --repair") {
		t.Errorf("verify with a missing and a corrupt blob: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	r := ump(t, store, "verify", "--repair", hash)
	if r.code != 0 || strings.Count(r.stdout, "repaired from the recomputation") != 2 {
		t.Errorf("verify --repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if again := ump(t, store, "verify", hash); again.code != 0 ||
		!strings.Contains(again.stdout, "0 missing or corrupt") {
		t.Errorf("verify after the repair: exit %d\n%s", again.code, again.stdout)
	}
}

// TestImpossibleInputsAreRefused: inputs that used to exhaust the machine
// are refused at once with exit 2, naming the cause, and record nothing.
func TestImpossibleInputsAreRefused(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	axis := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprint(i + 1)
		}
		return "[" + strings.Join(v, ", ") + "]"
	}
	cases := []struct{ name, manifest, want string }{
		{"an endless file", "/dev/zero", "/dev/zero is a device"},
		{"a directory", t.TempDir(), "is a directory"},
		{"a file over 1 MiB", writeFile(t, "big.yaml", strings.Repeat("#\n", 1<<19+1)), "more than 1048576 bytes"},
		{"a 10^7-cell sweep", writeFile(t, "huge.yaml", strings.Replace(smallManifest, "seed: [1, 2]",
			"seed: "+axis(1000)+"\n  local_steps: "+axis(100)+"\n  workers: "+axis(100), 1)), "more than 20000 cells"},
		{
			"dim 1e12",
			writeFile(t, "dim.yaml", strings.Replace(smallManifest, "dim: 30", "dim: 1000000000000", 1)),
			`field "task.quadratic.dim" is too large`,
		},
		{
			"10^11 synthetic samples",
			writeFile(t, "samples.yaml", strings.NewReplacer(
				"{dataset: quadratic, quadratic: {dim: 30, sigma: 0.5}}",
				"{dataset: synthetic, synthetic: {train: 100000000000}}",
			).Replace(smallManifest)),
			`field "task.synthetic.train" is too large`,
		},
		{"2·10^9 synthetic classes", writeFile(t, "classes.yaml", strings.Replace(smallManifest,
			"{dataset: quadratic, quadratic: {dim: 30, sigma: 0.5}}",
			"{dataset: synthetic, synthetic: {classes: 2000000000}}", 1)),
			`field "task.synthetic.classes" is too large`},
		{
			"batch_size 1e9",
			writeFile(t, "batch.yaml", strings.NewReplacer("{dataset: quadratic, quadratic: {dim: 30, sigma: 0.5}}",
				"{dataset: synthetic}\nbatch_size: 1000000000").Replace(smallManifest)),
			`field "batch_size" is too large`,
		},
	}
	for _, c := range cases {
		start := time.Now()
		r := ump(t, store, "run", c.manifest)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || time.Since(start) > 30*time.Second {
			t.Errorf(
				"run with %s: exit %d after %s: %q; want 2 naming %q",
				c.name,
				r.code,
				time.Since(start),
				r.stderr,
				c.want,
			)
		}
	}
	if st := ump(t, store, "status"); strings.Contains(st.stdout, "cells") {
		t.Errorf("a refused run registered a manifest:\n%s", st.stdout)
	}
}

// TestDiskFull runs a sweep on a small tmpfs (where this test may mount
// one): the run stops with exit 3 and a message saying what to do, no
// cell is recorded as failed, and after the disk grows the same command
// finishes with the results of a run that never stopped.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf(
			"cannot mount a tmpfs here (%v: %s); pipeline's TestStoreFailureStopsTheRun injects the error instead",
			err,
			out,
		)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	m := writeFile(t, "m.yaml", strings.NewReplacer("dim: 30,", "dim: 20000,", "rounds: 20", "rounds: 200",
		"checkpoint: {every: 10}", "checkpoint: {every: 5}").Replace(smallManifest))
	store := filepath.Join(dir, "store")
	full := ump(t, store, "run", m)
	if full.code != 3 || !strings.Contains(full.stderr, "no space left on device") ||
		!strings.Contains(full.stderr, "rerun the same command to resume") ||
		strings.Contains(full.stderr, "panic") ||
		strings.Contains(full.stderr, "FAILED") {
		t.Fatalf("run on a full disk: exit %d\n%s", full.code, full.stderr)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=512m", dir).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v %s", err, out)
	}
	resumed := ump(t, store, "run", m)
	if resumed.code != 0 || !strings.Contains(resumed.stderr, "2 completed") {
		t.Fatalf("rerun after freeing space: exit %d\n%s", resumed.code, resumed.stderr)
	}
	whole := t.TempDir()
	hash := hashOf(t, ump(t, whole, "run", m))
	if a, b := exportCSV(t, store, hash, "rounds"), exportCSV(t, whole, hash, "rounds"); a != b {
		t.Error("the resumed run's rounds differ from a run that never stopped")
	}
}

// TestDamagedMarker: a marker that is not one is refused (exit 3) with the
// way out; without it, gc --dry-run checks the log and writes a new one.
func TestDamagedMarker(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	ump(t, store, "run", m)
	marker := filepath.Join(store, "ump-store.json")
	os.WriteFile(marker, []byte("\x00\x00garbage"), 0o644)
	for _, args := range [][]string{{"status"}, {"run", m}} {
		if r := ump(t, store, args...); r.code != 3 || !strings.Contains(r.stderr, "is not an ump store marker") ||
			!strings.Contains(r.stderr, "gc --dry-run") {
			t.Errorf("%v with a damaged marker: exit %d %q", args, r.code, r.stderr)
		}
	}
	os.Remove(marker)
	if r := ump(t, store, "gc", "--dry-run"); r.code != 0 {
		t.Fatalf("gc --dry-run without a marker: exit %d %s", r.code, r.stderr)
	}
	if data, err := os.ReadFile(marker); err != nil || !strings.Contains(string(data), `"last_seq":`) ||
		strings.Contains(string(data), `"last_seq":0`) {
		t.Errorf("gc --dry-run did not write a marker with the log's length: %q %v", data, err)
	}
	if r := ump(t, store, "run", m); r.code != 0 || !strings.Contains(r.stderr, "(2 fully cached)") {
		t.Errorf("rerun: exit %d\n%s", r.code, r.stderr)
	}
}

// TestSigtermDuringRegistration: the first SIGTERM stops a run of the
// largest sweep allowed while it registers its cells (exit 130, at once).
func TestSigtermDuringRegistration(t *testing.T) {
	t.Parallel()
	m := writeFile(
		t,
		"wide.yaml",
		strings.Replace(smallManifest, "seed: [1, 2]", "seed: [1, 2]\n  lr: ["+lrs(10000)+"]", 1),
	)
	cmd := exec.Command(umpBin, "--store", t.TempDir(), "run", m)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// "manifest <hash>\n": registration comes next.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("no manifest line: %v %s", err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	signalled := time.Now()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || time.Since(signalled) > 2*time.Second {
		t.Errorf(
			"SIGTERM while registering 20,000 cells: %v after %s; want exit 130 at once\n%s",
			err,
			time.Since(signalled),
			stderr.String(),
		)
	}
}

// lrs lists n distinct learning rates.
func lrs(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprint(float64(i+1) * 1e-5)
	}
	return strings.Join(v, ", ")
}

// TestReadersAfterAKill: after a run is killed, its log needs a replay
// only a writer may do; readers show the events it published, say so,
// and write nothing; the next run recovers the log and finishes.
func TestReadersAfterAKill(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 3000", "rounds: 120", "rounds: 2000").Replace(longManifest),
	)
	cmd := exec.Command(umpBin, "--store", store, "run", m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			t.Fatalf("the run ended (%v) before the test killed it in its second cell", err)
		case <-time.After(10 * time.Millisecond):
		}
		if s := snapshot(store); s != nil && s.PID == cmd.Process.Pid && s.CellsDone == 1 && s.Stage == "train" {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	before := tree(t, store)
	st := ump(t, store, "status")
	if st.code != 0 || !strings.Contains(st.stdout, "not closed by its last writer") ||
		!strings.Contains(st.stdout, "1 incomplete, 0 pending") {
		t.Errorf("status after a kill: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if after := tree(t, store); after != before {
		t.Errorf("status after a kill wrote to the store")
	}
	if r := ump(t, store, "run", m); r.code != 0 || !strings.Contains(r.stderr, "0 failed (1 fully cached)") {
		t.Errorf("run after a kill: exit %d\n%s", r.code, r.stderr)
	}
	if st := ump(t, store, "status"); st.code != 0 || strings.Contains(st.stdout, "not closed") {
		t.Errorf("status after the recovering run: exit %d\n%s", st.code, st.stdout)
	}
}

// TestValidationThatHoldsOutNothingStopsTheRun: where only the partition
// shows that no worker holds out a sample (a Dirichlet split of 2,000
// samples over 40 workers: at most 108 each), the run stops at the
// partition with exit 2, naming the workers' sizes and the fraction to
// use, and records no failed cell.
func TestValidationThatHoldsOutNothingStopsTheRun(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(
		t,
		"v.yaml",
		"version: 1\nname: val\ntask: {dataset: synthetic, model: logreg, synthetic: {train: 2000}}\nworkers: "+
			"40\nrounds: 2\nlr: 0.1\n"+
			"algorithm: {name: d-sum}\npartition: {kind: dirichlet, alpha: 1}\nvalidation: {fraction: 0.001}\n",
	)
	r := ump(t, store, "run", m)
	if r.code != 2 ||
		!strings.Contains(
			r.stderr,
			`stage partition: bad input: field "validation.fraction": 0.001 holds out no sample: each of the 40 `+
				`workers holds`,
		) ||
		!strings.Contains(r.stderr, "use a fraction of at least") {
		t.Errorf("exit %d, %s; want exit 2 saying the fraction holds out nothing", r.code, r.stderr)
	}
	if st := ump(t, store, "status"); strings.Contains(st.stdout, "1 failed") {
		t.Errorf("the refused cell was recorded as failed:\n%s", st.stdout)
	}
}
