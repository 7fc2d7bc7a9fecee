package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var flips = flag.Int("flips", 100, "TestByteFlipsNeverPanic: how many table files to damage")

// TestByteFlipsNeverPanic flips one byte of one table file of a finished
// store at a time and runs a command on it: it exits 3 naming the damage
// or, when the flip changed nothing Badger reads, answers as the intact
// store does — never a panic or an internal error.
func TestByteFlipsNeverPanic(t *testing.T) {
	t.Parallel()
	good := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, good, "run", m))
	ump(t, good, "run", writeFile(t, "m2.yaml", strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1)))
	tables, _ := filepath.Glob(filepath.Join(good, "events", "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the store has no table files to damage")
	}
	want := map[string]string{"table": ump(t, good, "table", hash).stdout}
	completed := regexp.MustCompile(`\d+ completed`)
	want["status"] = completed.FindString(ump(t, good, "status", hash).stdout)
	commands := [][]string{
		{"status", hash},
		{"table", hash},
		{"gc", "--dry-run"},
		{"run", m},
		{"export", "--manifest", hash, "--out", "-"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	outcomes := map[string]int{}
	for try := range *flips {
		store := filepath.Join(t.TempDir(), "store")
		if out, err := exec.Command("cp", "-a", good, store).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		file := filepath.Join(store, "events", filepath.Base(tables[r.IntN(len(tables))]))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		at := r.IntN(len(data))
		data[at] ^= byte(1 + r.IntN(255))
		os.WriteFile(file, data, 0o644)
		args := commands[r.IntN(len(commands))]
		res := ump(t, store, args...)
		what := fmt.Sprintf("%s byte %d: ump %s", filepath.Base(file), at, strings.Join(args, " "))
		switch {
		case strings.Contains(res.stderr, "internal error") || strings.Contains(res.stderr, "panic") ||
			strings.Contains(res.stderr, "fatal error"):
			t.Errorf("try %d, %s: crashed (exit %d)\n%s", try, what, res.code, res.stderr)
		case res.code == 3:
			if !strings.Contains(res.stderr, "store is damaged") {
				t.Errorf("try %d, %s: exit 3 without naming the damage\n%s", try, what, res.stderr)
			}
		case res.code != 0:
			t.Errorf("try %d, %s: exit %d; want 3 or 0\n%s", try, what, res.code, res.stderr)
		case args[0] == "table" && res.stdout != want["table"],
			args[0] == "status" && completed.FindString(res.stdout) != want["status"]:
			t.Errorf(
				"try %d, %s: exit 0 with an answer that differs from the intact store's:\n%s",
				try,
				what,
				res.stdout,
			)
		}
		outcomes[fmt.Sprintf("%s exit %d", args[0], res.code)]++
		os.RemoveAll(store)
	}
	t.Logf("%d flips: %v", *flips, outcomes)

	// A flip that leaves the event valid JSON naming another digest: only
	// the tables' checksums can tell, and every command checks them first.
	store := filepath.Join(t.TempDir(), "store")
	if out, err := exec.Command("cp", "-a", good, store).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	flipped := false
	for _, table := range tables {
		file := filepath.Join(store, "events", filepath.Base(table))
		data, _ := os.ReadFile(file)
		if at := strings.Index(string(data), "sha256:"); at >= 0 && !flipped {
			digit := &data[at+len("sha256:")+10] // another hex digit
			if *digit == '0' {
				*digit = '1'
			} else {
				*digit = '0'
			}
			os.WriteFile(file, data, 0o644)
			flipped = true
		}
	}
	if !flipped {
		t.Fatal("no digest found in the table files to change")
	}
	if r := ump(t, store, "show", hash); r.code != 3 || !strings.Contains(r.stderr, "store is damaged") {
		t.Errorf(
			"show on a table with one digest's hex digit changed: exit %d; want 3 naming the damage\n%s",
			r.code,
			r.stderr,
		)
	}
}

var (
	kills    = flag.Int("kills", 24, "TestKillAtRandomMomentsResumes: how many times to SIGKILL ump run")
	killSeed = flag.Uint64(
		"kill-seed",
		0,
		"TestKillAtRandomMomentsResumes: the seed of its kill moments (0: a new one from the clock)",
	)
)

// killManifest writes its event log fast: every round evaluated, three
// cells, checkpoints every 20 rounds.
const killManifest = `version: 1
name: kills
task: {dataset: quadratic, quadratic: {dim: 2000, sigma: 0.5}}
workers: 8
rounds: 200
local_steps: 2
lr: 0.02
algorithm: {name: gt-dsum}
sweep:
  seed: [1, 2, 3]
evaluate: {every: 1}
checkpoint: {every: 20}
`

// TestKillAtRandomMomentsResumes SIGKILLs `ump run` at random moments of
// its life (opening the store, registering, training, checkpointing,
// closing), built with a 128 KiB Badger memory table so that memory-table
// flushes and compactions run all through it. After every kill every
// command must open the store (status exits 0), and each run that gets to
// finish must have the uninterrupted run's output digests. Each run of the
// test kills at new moments (-kill-seed replays a run's).
func TestKillAtRandomMomentsResumes(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "ump-small-memtable")
	build := exec.Command("go", append([]string{"build", "-o", bin, "-ldflags",
		"-X github.com/ump-lab/ump/eventlog.memTableBytes=131072"}, append(buildTags, ".")...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building ump with a small memory table: %v\n%s", err, out)
	}
	run := func(store string, args ...string) result { return umpBinary(t, bin, nil, store, args...) }
	m := writeFile(t, "m.yaml", killManifest)
	clean := t.TempDir()
	start := time.Now()
	ref := run(clean, "run", m)
	whole := time.Since(start)
	if ref.code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", ref.code, ref.stderr)
	}
	hash := hashOf(t, ref)
	want := outputsOf(t, clean, hash)
	seed := *killSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("kill moments from seed %d (go test ./cmd/ump -run KillAtRandom -kill-seed %d replays them)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 4))
	store := filepath.Join(t.TempDir(), "store")
	killed, finished := 0, 0
	for killed < *kills {
		cmd := exec.Command(bin, "--store", store, "run", m)
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		delay := time.Duration(r.Int64N(int64(whole * 11 / 10)))
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("after %d kills, run exited on its own with %v\n%s", killed, err, errb.String())
			}
			finished++
			if got := outputsOf(t, store, hash); got != want {
				t.Fatalf("after %d kills, the finished run's digests differ:\n%s\nwant\n%s", killed, got, want)
			}
			os.RemoveAll(store)
			store = filepath.Join(t.TempDir(), "store") // start again from nothing
			continue
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
		if st := run(store, "status"); st.code != 0 && !strings.Contains(st.stderr, "no store at") {
			t.Fatalf("kill %d after %v: status cannot open the store: exit %d\n%s", killed, delay, st.code, st.stderr)
		}
	}
	if final := run(store, "run", m); final.code != 0 {
		t.Fatalf("the last rerun: exit %d\n%s", final.code, final.stderr)
	} else if got := outputsOf(t, store, hash); got != want {
		t.Fatalf("the last rerun's digests differ:\n%s\nwant\n%s", got, want)
	}
	t.Logf("%d kills; %d runs finished between them with the uninterrupted run's digests", killed, finished)
}

var fills = flag.Int("fills", 6, "TestDiskFilledMidRun: how many runs to fill the disk under")

// fillManifest commits an event every 20 rounds (about 0.2 s): a disk
// filled in between is full when the run next writes, and when it closes.
var fillManifest = strings.Replace(
	longManifest,
	"evaluate: {every: 3}\ncheckpoint: {every: 10}",
	"evaluate: {every: 20}\ncheckpoint: {every: 60}",
	1,
)

// TestDiskFilledMidRun runs a sweep on a small tmpfs (where this test may
// mount one) and, at a random moment, fills the disk from this process, as
// another program would: the run must stop with exit 3 saying to free
// space — never die inside Badger — and, once the filler's file is gone,
// the same command must finish with the digests of a run that never
// stopped; the gc its message names runs as printed.
func TestDiskFilledMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	if fillManifest == longManifest {
		t.Fatal("fillManifest did not apply to longManifest")
	}
	m := writeFile(t, "m.yaml", fillManifest)
	clean := t.TempDir()
	start := time.Now()
	hash := hashOf(t, ump(t, clean, "run", m))
	whole := time.Since(start)
	want := outputsOf(t, clean, hash)
	r := rand.New(rand.NewPCG(5, 6))
	stopped := 0
	for trial := range *fills {
		store := filepath.Join(dir, fmt.Sprintf("store%d", trial))
		cmd := exec.Command(umpBin, "--store", store, "run", m)
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.Int64N(int64(whole))))
		filler := filepath.Join(dir, "filler")
		fill(t, filler)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		switch {
		case err == nil: // it finished first
		case code == 3 && strings.Contains(errb.String(), "free space"):
			stopped++
		default:
			t.Errorf(
				"trial %d: the run on a disk filled under it: exit %d (%v)\n%s",
				trial,
				code,
				err,
				lastLines(errb.String(), 15),
			)
		}
		os.Remove(filler)
		if code == 3 { // its hint, pasted as printed, once space is free
			gc := hint(t, errb.String(), regexp.MustCompile("`([^`]* gc)` removes unreferenced blobs"))
			if r := printed(t, t.TempDir(), gc); r.code != 0 {
				t.Errorf("trial %d: %s: exit %d\n%s", trial, gc, r.code, r.stderr)
			}
		}
		if rerun := ump(t, store, "run", m); rerun.code != 0 {
			t.Fatalf("trial %d: rerun after freeing space: exit %d\n%s", trial, rerun.code, rerun.stderr)
		}
		if got := outputsOf(t, store, hash); got != want {
			t.Fatalf("trial %d: the rerun's digests differ:\n%s\nwant\n%s", trial, got, want)
		}
		os.RemoveAll(store)
	}
	t.Logf("%d fills: %d runs stopped with exit 3, the others finished first", *fills, stopped)
}

// fill fills the disk with a file at path: at once (fallocate), then
// page by page.
func fill(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err == nil {
		syscall.Fallocate(int(f.Fd()), 0, 0, max(0, int64(st.Bavail)*st.Bsize-1<<20))
		f.Seek(0, io.SeekEnd)
	}
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	for { // and the last pages
		if _, err := f.Write(chunk[:4096]); err != nil {
			return
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
