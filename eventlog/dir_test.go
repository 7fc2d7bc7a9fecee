package eventlog

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/internal/durable"
)

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
			t.Errorf(
				"a log of 3 events under a marker recording %d: opened %v (%v); want opened %v, else ErrDamaged",
				c.marked,
				opens,
				err,
				c.opens,
			)
		}
	}
}

// TestLogCommitsAreSynced: the event log is opened to sync every commit
// before Append returns (Badger's SyncWrites), as Log's contract says.
func TestLogCommitsAreSynced(t *testing.T) {
	s := openTestStore(t)
	if !s.Log.db.Opts().SyncWrites {
		t.Error(
			"the event log is open without synchronous writes: a commit Append " +
				"acknowledged can be lost in a power loss",
		)
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

// TestEmptyFilesOfAKilledWriterAreSetAside: a writer killed while Badger
// created a memory table or a value log file leaves it empty, which Badger
// refuses to open; readers show the published events, and the next writer
// moves them to events/orphaned and opens the log.
func TestEmptyFilesOfAKilledWriterAreSetAside(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	s.Log.Append(&Event{Kind: CellStarted})
	s.Close()
	empty := []string{"00099.mem", "000099.vlog"}
	for _, name := range empty {
		os.WriteFile(filepath.Join(dir, "events", name), nil, 0o644)
	}
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
	if evs, err := s.Log.ByKind(CellStarted); err != nil || len(evs) != 1 {
		t.Errorf("the log holds %d events (%v); want 1", len(evs), err)
	}
	for _, name := range empty {
		if _, err := os.Stat(filepath.Join(dir, "events", orphanedDir, name)); err != nil {
			t.Errorf("the empty %s was not set aside: %v", name, err)
		}
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

func openTestStore(t *testing.T) *Dir {
	t.Helper()
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestAStoreJustTakenNamesItsHolder: a writer that has opened a store is
// named by its PID and command; one that has not written its line yet (a
// new store, while the writer opens its log) is another ump starting,
// never "PID 0".
func TestAStoreJustTakenNamesItsHolder(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "ump run first")
	if err != nil {
		t.Fatal(err)
	}
	if pid, what := Holder(dir); pid != os.Getpid() || !strings.HasPrefix(what, "ump run first since ") {
		t.Errorf("holder PID %d (%s); want this process's, ump run first", pid, what)
	}
	s.Close()
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	lock.Truncate(0) // as a holder that has just taken the lock of a new store
	_, err = Open(dir, "ump run second")
	if !errors.Is(err, ErrBusy) || strings.Contains(err.Error(), "PID 0") ||
		!strings.Contains(err.Error(), "another ump that is starting") {
		t.Errorf("a store whose holder has not written its line: %v; want ErrBusy naming another ump starting", err)
	}
}
