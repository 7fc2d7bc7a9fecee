package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/durable"
)

// errInjected is the failure faults inject.
var errInjected = errors.New("injected write failure")

// faults fails the k-th write to a store (events and blobs counted
// together) and every write after it, as a disk or process that dies
// there would. With lost the k-th write does not happen; without, it
// happens but its caller hears it failed (the process died before the
// acknowledgement).
type faults struct {
	k, n int
	lost bool
}

func (f *faults) before() error {
	f.n++
	if f.n > f.k || (f.n == f.k && f.lost) {
		return fmt.Errorf("write %d: %w", f.n, errInjected)
	}
	return nil
}

func (f *faults) after() error {
	if f.n == f.k && !f.lost {
		return fmt.Errorf("write %d (done): %w", f.n, errInjected)
	}
	return nil
}

// faultyBlobs routes a blob store's writes through faults.
type faultyBlobs struct {
	artifacts.Store
	f *faults
}

func (b faultyBlobs) Put(ctx context.Context, data []byte) (artifacts.Ref, error) {
	if err := b.f.before(); err != nil {
		return artifacts.Ref{}, err
	}
	ref, err := b.Store.Put(ctx, data)
	if err == nil {
		err = b.f.after()
	}
	return ref, err
}

// crashManifest is a small sweep whose cells checkpoint, evaluate and
// share their partition and topology stages.
const crashManifest = `version: 1
name: crash
task: {dataset: quadratic, quadratic: {dim: 20, sigma: 0.1}}
workers: 4
rounds: 4
local_steps: 2
lr: 0.05
algorithm: {name: gt-dsum}
sweep:
  seed: [1, 2]
evaluate: {every: 1}
checkpoint: {every: 2}
`

// TestEveryCrashPointResumes fails the k-th write of a run, for every k
// and both ways a write can fail (lost, or done but unacknowledged), then
// reopens the store and reruns: the rerun must complete every cell with
// the uninterrupted run's output digests.
func TestEveryCrashPointResumes(t *testing.T) {
	plan := parse(t, crashManifest)
	run := func(dir string, f *faults) error {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if f != nil {
			s.Log.fault = func(committed bool) error {
				if committed {
					return f.after()
				}
				return f.before()
			}
			s.Blobs = faultyBlobs{Store: s.Blobs, f: f}
		}
		_, err = (&Runner{Store: s, Stages: DefaultStages()}).Run(context.Background(), plan)
		return err
	}
	digests := func(dir string) map[string]string {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return outputDigests(t, s, plan.Hash)
	}

	clean := t.TempDir()
	count := &faults{k: 1 << 30}
	if err := run(clean, count); err != nil {
		t.Fatal(err)
	}
	want, writes := digests(clean), count.n
	if writes < 20 {
		t.Fatalf("the sweep made only %d writes; too few to exercise crash points", writes)
	}
	for _, lost := range []bool{true, false} {
		for k := 1; k <= writes; k++ {
			dir := t.TempDir()
			if err := run(dir, &faults{k: k, lost: lost}); !errors.Is(err, errInjected) {
				t.Fatalf("write %d of %d failing (lost %v): run returned %v; want the injected failure", k, writes, lost, err)
			}
			if err := run(dir, nil); err != nil {
				t.Fatalf("rerun after write %d failed (lost %v): %v", k, lost, err)
			}
			got := digests(dir)
			for name, d := range want {
				if got[name] != d {
					t.Errorf("rerun after write %d failed (lost %v): %s is %s, want %s", k, lost, name, got[name], d)
				}
			}
			if len(got) != len(want) {
				t.Errorf("rerun after write %d failed (lost %v): %d outputs, want %d", k, lost, len(got), len(want))
			}
		}
	}
	t.Logf("%d crash points, each lost and unacknowledged, all resumed to the same digests", writes)
}

// fullDisk fails every blob write from the k-th on as a full disk does.
type fullDisk struct {
	artifacts.Store
	k, n int
}

func (b *fullDisk) Put(ctx context.Context, data []byte) (artifacts.Ref, error) {
	if b.n++; b.n >= b.k {
		return artifacts.Ref{}, fmt.Errorf("writing blob %d: %w", b.n, syscall.ENOSPC)
	}
	return b.Store.Put(ctx, data)
}

// TestStoreFailureStopsTheRun: when the store cannot take a stage's
// outputs (a full disk), the run stops with that error instead of
// recording the cell as failed, and a rerun finishes every cell with the
// digests of a run that never stopped.
func TestStoreFailureStopsTheRun(t *testing.T) {
	plan := parse(t, crashManifest)
	run := func(dir string, k int) error {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if k > 0 {
			s.Blobs = &fullDisk{Store: s.Blobs, k: k}
		}
		_, err = (&Runner{Store: s, Stages: DefaultStages()}).Run(context.Background(), plan)
		return err
	}
	clean := t.TempDir()
	if err := run(clean, 0); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(clean, "test")
	want := outputDigests(t, s, plan.Hash)
	s.Close()
	for _, k := range []int{1, 3, 6} {
		dir := t.TempDir()
		if err := run(dir, k); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("blob write %d failing with a full disk: run returned %v; want ENOSPC", k, err)
		}
		s, _ := Open(dir, "test")
		failed, _ := s.Log.ByKind(StageFailed)
		s.Close()
		if len(failed) > 0 {
			t.Errorf("blob write %d failing: %d stages recorded as failed; a full disk is not the cell's failure", k, len(failed))
		}
		if err := run(dir, 0); err != nil {
			t.Fatalf("rerun: %v", err)
		}
		s, _ = Open(dir, "test")
		got := outputDigests(t, s, plan.Hash)
		s.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("blob write %d failing: the rerun's digests differ:\n%v\nwant\n%v", k, got, want)
		}
	}
}

// TestMarkerSurvivesAPowerLoss: once a writer closes the store, a power
// loss leaves the marker recording every event it committed (the marker
// written through a file system that keeps only what was synced).
func TestMarkerSurvivesAPowerLoss(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	crash := durable.NewCrashable()
	s.Log.fs = crash
	for range 3 {
		if err := s.Log.Append(&Event{Kind: CellStarted}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, ok := crash.AfterPowerLoss(filepath.Join(dir, markerName))
	var m marker
	if err := json.Unmarshal(data, &m); !ok || err != nil || m.LastSeq != 3 {
		t.Fatalf("marker after a power loss: present %v, %q (%v); want last_seq 3", ok, data, err)
	}
}

// TestLogShorterThanItsMarkerIsRefused: a log one event short of what
// the marker records lost an event; one as long opens.
func TestLogShorterThanItsMarkerIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.Log.Append(&Event{Kind: CellStarted}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for _, c := range []struct {
		marked uint64
		opens  bool
	}{{3, true}, {4, false}} {
		if err := writeMarker(durable.OS, dir, c.marked); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, "test")
		if err == nil {
			s.Close()
		}
		if opens := err == nil; opens != c.opens || (!opens && !errors.Is(err, ErrDamaged)) {
			t.Errorf("a log of 3 events under a marker recording %d: opened %v (%v); want opened %v, else ErrDamaged", c.marked, opens, err, c.opens)
		}
	}
}

// TestLogCommitsAreSynced: the event log is opened to sync every commit
// before Append returns (Badger's SyncWrites), as Log's contract says.
func TestLogCommitsAreSynced(t *testing.T) {
	s := openTestStore(t)
	if !s.Log.db.Opts().SyncWrites {
		t.Error("the event log is open without synchronous writes: a commit Append acknowledged can be lost in a power loss")
	}
}

// TestWriterRemovesTemporaryFiles: what a writer killed mid-write leaves
// in the store directory (the marker's, the published events', the
// snapshot's temporary files) is gone once the next writer opens it, and
// readers leave it alone.
func TestWriterRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	left := []string{durable.TempPrefix + "123", publishedName + ".tmp-456", "status.json.tmp-789"}
	for _, name := range left {
		os.WriteFile(filepath.Join(dir, name), []byte("half"), 0o644)
	}
	r, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := os.Stat(filepath.Join(dir, left[0])); err != nil {
		t.Errorf("a reader removed %s: %v", left[0], err)
	}
	if s, err = Open(dir, "test"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, name := range left {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after a writer opened the store", name)
		}
	}
}

// TestReaderOfAStoreKilledInItsFirstOpen: a store copied while its first
// writer held it (as a kill leaves it: a memory table to replay, nothing
// published) opens for readers, empty.
func TestReaderOfAStoreKilledInItsFirstOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(t.TempDir(), "store")
	if out, err := exec.Command("cp", "-a", dir, killed).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	s.Close()
	os.Remove(filepath.Join(killed, publishedName))
	r, err := OpenReader(killed)
	if err != nil {
		t.Fatalf("a store whose first writer was killed: %v", err)
	}
	if evs, err := r.Events.All(); err != nil || len(evs) != 0 || r.Note == "" {
		t.Errorf("events %d (%v), note %q; want none, and a note saying why", len(evs), err, r.Note)
	}
}

// TestEmptyMemoryTableIsSetAside: a writer killed while Badger created a
// memory table leaves it empty, which Badger refuses to open; readers
// show the published events, and the next writer moves it to
// events/orphaned and opens the log.
func TestEmptyMemoryTableIsSetAside(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	s.Log.Append(&Event{Kind: CellStarted})
	s.Close()
	empty := filepath.Join(dir, "events", "00099.mem")
	os.WriteFile(empty, nil, 0o644)
	r, err := OpenReader(dir)
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	if evs, _ := r.Events.All(); len(evs) != 1 || r.Note == "" {
		t.Errorf("reader: %d events, note %q; want the one published, and a note", len(evs), r.Note)
	}
	if s, err = Open(dir, "test"); err != nil {
		t.Fatalf("writer: %v", err)
	}
	defer s.Close()
	if n := countKind(t, s, CellStarted); n != 1 {
		t.Errorf("the log holds %d events; want 1", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "events", orphanedDir, "00099.mem")); err != nil {
		t.Errorf("the empty memory table was not set aside: %v", err)
	}
}

// TestFirstWriterKilledBeforeTheMarker: a directory holding only what a
// first writer creates before the marker (lock, spare-space) is a store
// without events, for readers and writers.
func TestFirstWriterKilledBeforeTheMarker(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"lock", spareName} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	r, err := OpenReader(dir)
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	if evs, _ := r.Events.All(); len(evs) != 0 {
		t.Errorf("reader: %d events; want none", len(evs))
	}
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatalf("writer: %v", err)
	}
	s.Close()
}
