package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ump-lab/ump/artifacts"
)

// Store is an opened store directory: event log, blobs and the lock.
// Blobs is where artifacts go: the directory's Local blobs unless the
// caller points it elsewhere (an S3 store) right after Open.
//
// A store opened by OpenReader beside a running writer has no Log and no
// lock: Events are the events the writer had published when it was
// opened, and Beside names the writer.
type Store struct {
	Dir    string
	Log    *Log   // nil beside a writer
	Events Events // the Log, or the writer's published events
	Local  *artifacts.Local
	Blobs  artifacts.Store
	Beside string // "PID n (command)" of the writer, or ""
	lock   *os.File
}

// ErrBusy is returned (wrapped) by Open when another process holds the store.
var ErrBusy = errors.New("store is in use")

// Open locks the store directory (creating it) and opens its event log and
// blobs. command describes the holder to anyone who finds the store busy.
// A store held by a reading command (OpenReader while no run holds it) is
// waited for up to readerWait: they hold it for a moment.
func Open(dir, command string) (*Store, error) { return open(dir, command, false) }

// readerWait bounds how long Open waits for a reading command.
const readerWait = 10 * time.Second

// open is Open; reading marks the holder as a reading command.
func open(dir, command string, reading bool) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	for deadline := time.Now().Add(readerWait); ; time.Sleep(20 * time.Millisecond) {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "lock")); reading || !strings.HasSuffix(string(data), "\n"+readingRole+"\n") || time.Now().After(deadline) {
			lock.Close()
			pid, what := Holder(dir)
			return nil, fmt.Errorf("%w: store %s is in use by PID %d (%s); wait for it to finish, or use another --store. `ump status` works meanwhile", ErrBusy, dir, pid, what)
		}
	}
	role := "write"
	if reading {
		role = readingRole
	}
	lock.Truncate(0)
	lock.WriteAt([]byte(fmt.Sprintf("%d\n%s since %s\n%s\n", os.Getpid(), command, time.Now().UTC().Format(time.RFC3339), role)), 0)
	s := &Store{Dir: dir, lock: lock}
	if s.Local, err = artifacts.NewLocal(filepath.Join(dir, "blobs")); err == nil {
		err = s.Local.RemoveTemp()
	}
	s.Blobs = s.Local
	if err == nil {
		s.Log, err = openLog(filepath.Join(dir, "events"), dir)
	}
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.Events = s.Log
	return s, nil
}

// OpenReader opens the store for reading: like Open when no other process
// holds it, else beside the holder, on the events it has published so far
// (a consistent prefix of its log) and the blobs they name. It still
// returns ErrBusy when the holder publishes nothing (a store written by an
// older ump that is still running).
func OpenReader(dir, command string) (*Store, error) {
	s, err := open(dir, command, true)
	if !errors.Is(err, ErrBusy) {
		return s, err
	}
	evs, perr := readPublished(dir)
	if errors.Is(perr, os.ErrNotExist) {
		return nil, err
	}
	if perr != nil {
		return nil, perr
	}
	local, lerr := artifacts.NewLocal(filepath.Join(dir, "blobs"))
	if lerr != nil {
		return nil, lerr
	}
	pid, what := Holder(dir)
	return &Store{Dir: dir, Events: evs, Local: local, Blobs: local, Beside: fmt.Sprintf("PID %d (%s)", pid, what)}, nil
}

// readingRole marks, on the lock file's last line, a holder that only
// reads.
const readingRole = "read"

// Holder returns the PID and command line recorded by the last process
// that locked the store in dir.
func Holder(dir string) (pid int, what string) {
	data, _ := os.ReadFile(filepath.Join(dir, "lock"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	pid, _ = strconv.Atoi(lines[0])
	if len(lines) > 1 {
		what = lines[1]
	}
	return pid, what
}

// Close closes the log and releases the lock (nothing beside a writer).
func (s *Store) Close() error {
	if s.Log == nil {
		return nil
	}
	err := s.Log.close()
	s.lock.Close()
	return err
}

// Snapshot is what a running process publishes about itself for
// `ump status`, which cannot open the locked log.
type Snapshot struct {
	PID        int       `json:"pid"`
	State      string    `json:"state"` // running, finished, interrupted, failed
	Manifest   string    `json:"manifest"`
	Name       string    `json:"name"`
	Started    time.Time `json:"started"`
	Updated    time.Time `json:"updated"`
	Cells      int       `json:"cells"`
	CellsDone  int       `json:"cells_done"`
	Cell       int       `json:"cell"` // 1-based index of the cell running
	Label      string    `json:"label,omitempty"`
	Stage      string    `json:"stage,omitempty"`
	Round      int       `json:"round,omitempty"`
	Rounds     int       `json:"rounds,omitempty"`
	ETASeconds float64   `json:"eta_seconds,omitempty"`
}

func snapshotPath(dir string) string { return filepath.Join(dir, "status.json") }

// writeSnapshot replaces the snapshot atomically.
func writeSnapshot(dir string, s *Snapshot) error {
	s.Updated = time.Now().UTC()
	data, _ := json.MarshalIndent(s, "", "  ")
	tmp := snapshotPath(dir) + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, snapshotPath(dir))
}

// ReadSnapshot returns the last snapshot a run published in dir.
func ReadSnapshot(dir string) (*Snapshot, error) {
	data, err := os.ReadFile(snapshotPath(dir))
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", snapshotPath(dir), err)
	}
	return &s, nil
}
