package eventlog

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
	"github.com/ump-lab/ump/internal/durable"
)

// Dir is an opened store directory: its event log, its local blobs and
// the lock.
//
// A store opened by OpenReader beside a running writer, or after its last
// writer was killed, has no Log and no lock: Events are the events the
// writer had published, Beside names a running writer and Note says
// which case it is.
type Dir struct {
	Path   string
	Log    *Badger // nil beside a writer
	Events Reader  // the Log, or the writer's published events
	Local  *artifacts.Local
	Beside string // "PID n (command)" of the writer, or ""
	Note   string // for the user: whose the events are when not the log's own, or what opening the log did
	lock   *os.File
}

// ErrBusy is returned (wrapped) by Open when another process holds the store.
var ErrBusy = errors.New("store is in use")

// ErrUnavailable is returned (wrapped) when the store directory cannot be
// opened, read or written: permissions, a read-only or failing disk.
var ErrUnavailable = errors.New("store is unavailable")

// ErrNotDirectory is returned (wrapped) when the store's path names a
// file: the user's mistake, not a damaged store.
var ErrNotDirectory = errors.New("is a file, not a store directory")

// notADirectory refuses a store path that names anything but a directory
// (a path that does not exist yet is a new store's).
func notADirectory(dir string) error {
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("%s %w: name a directory (ump creates it when it does not exist)", dir, ErrNotDirectory)
	}
	return nil
}

// opening gives every error of opening a store an identity: busy, damaged,
// not a store, not a directory, a full disk, or else unavailable.
func opening(err error) error {
	for _, known := range []error{ErrBusy, ErrDamaged, ErrNotStore, ErrNotDirectory, ErrUnavailable, syscall.ENOSPC} {
		if errors.Is(err, known) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// Open locks the store directory (creating it) and opens its event log and
// blobs. command describes the holder to anyone who finds the store busy.
// A store held by reading commands (OpenReader while no run holds it) is
// waited for up to readerWait: they hold it for a moment.
func Open(dir, command string) (*Dir, error) {
	if err := notADirectory(dir); err != nil {
		return nil, err
	}
	s, err := open(dir, command)
	if err != nil {
		return nil, opening(err)
	}
	return s, nil
}

func open(dir, command string) (*Dir, error) {
	if err := recognise(dir, true); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	for deadline := time.Now().Add(readerWait); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			break
		}
		// Only readers hold it when a shared lock is free to take.
		readers := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil
		if readers {
			syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
		if !readers || time.Now().After(deadline) {
			lock.Close()
			return nil, busy(dir)
		}
	}
	s := &Dir{Path: dir, lock: lock}
	if s.Log, err = openLog(dir, false); err != nil {
		lock.Close()
		return nil, err // a store it cannot open keeps its last holder's line
	}
	s.Note = s.Log.note
	// Who holds it: written over the last holder's line, then cut to its
	// length, so that a look at it never finds it empty.
	holder := []byte(fmt.Sprintf("%d\n%s since %s\n", os.Getpid(), command, time.Now().UTC().Format(time.RFC3339)))
	lock.WriteAt(holder, 0)
	lock.Truncate(int64(len(holder)))
	if s.Local, err = artifacts.NewLocal(filepath.Join(dir, "blobs")); err == nil {
		err = s.Local.RemoveTemp()
	}
	if err == nil {
		err = removeTemp(dir)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Events = s.Log
	return s, nil
}

// removeTemp deletes the temporary files a killed writer left in the
// store directory (of the marker, the published events, the snapshot).
// Call it only while holding the store's exclusive lock.
func removeTemp(dir string) error {
	for _, pattern := range []string{filepath.Join(dir, durable.TempPrefix+"*"), filepath.Join(dir, publishedName+
		".tmp-*"), snapshotPath(dir) + ".tmp-*"} {
		left, _ := filepath.Glob(pattern)
		for _, p := range left {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// readerWait bounds how long Open waits for reading commands.
const readerWait = 10 * time.Second

func busy(dir string) error {
	pid, what := Holder(dir)
	return fmt.Errorf(
		"%w: store %s is in use by %s; wait for it to finish, or use another --store. `ump status` works meanwhile",
		ErrBusy,
		dir,
		pidCommand(pid, what),
	)
}

// OpenReader opens the store for reading and writes nothing to it. When
// no run holds it, it opens the event log read-only under a shared lock;
// else it reads beside the holder, on the events it has published so far
// (a consistent prefix of its log) and the blobs they name. It still
// returns ErrBusy when the holder publishes nothing (a store written by an
// older ump that is still running).
func OpenReader(dir string) (*Dir, error) {
	if err := notADirectory(dir); err != nil {
		return nil, err
	}
	s, err := openReader(dir)
	if err != nil {
		return nil, opening(err)
	}
	return s, nil
}

func openReader(dir string) (*Dir, error) {
	if err := recognise(dir, false); err != nil {
		return nil, err
	}
	local := artifacts.ExistingLocal(filepath.Join(dir, "blobs"))
	lock, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	if lock == nil || syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil {
		log, err := openLog(dir, true)
		if err == nil {
			return &Dir{Path: dir, Log: log, Events: log, Local: local, lock: lock}, nil
		}
		if lock != nil {
			lock.Close()
		}
		var why string
		switch {
		case errors.Is(err, errNoLog):
			return &Dir{Path: dir, Events: NewMemory(), Local: local,
				Note: fmt.Sprintf("store %s has %s: it holds no events; `ump run` creates its log", dir, errNoLog)}, nil
		case errors.Is(err, errUnclosed): // a replay only a writer may do
			why = errUnclosed.Error()
		case errors.Is(err, errUnlisted): // only a writer may set them aside
			why = fmt.Sprintf(
				"has %s in its event log (a flush or compaction interrupted by a crash leaves them)",
				errUnlisted,
			)
		default:
			return nil, err
		}
		// Its published events are every event its last writer committed;
		// none when that writer was killed in the store's first open,
		// before it published or marked anything.
		evs, perr := readPublished(dir)
		if mark, _, _ := readMarker(dir); errors.Is(perr, os.ErrNotExist) && mark.LastSeq == 0 {
			evs, perr = NewMemory(), nil
		}
		if perr != nil {
			return nil, err
		}
		return &Dir{Path: dir, Events: evs, Local: local,
			Note: fmt.Sprintf(
				"store %s %s: showing the events it published; the next `ump run` or `ump gc --dry-run` recovers its "+
					"log",
				dir,
				why,
			)}, nil
	}
	lock.Close()
	evs, err := readPublished(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, busy(dir)
	}
	if err != nil {
		return nil, err
	}
	pid, what := Holder(dir)
	return &Dir{Path: dir, Events: evs, Local: local, Beside: pidCommand(pid, what),
		Note: fmt.Sprintf(
			"store %s is in use by %s: showing what it has recorded so far",
			dir,
			pidCommand(pid, what),
		)}, nil
}

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

// pidCommand describes a process holding a store, as Dir.Beside does; a
// holder that has not written its line yet (it has just taken the lock)
// is another ump starting.
func pidCommand(pid int, what string) string {
	if pid <= 0 {
		return "another ump that is starting (it has not written its PID yet)"
	}
	return fmt.Sprintf("PID %d (%s)", pid, what)
}

// Close closes the log and releases the lock (nothing beside a writer);
// where the store was removed meanwhile (Removed), it only releases the
// lock and says so.
func (s *Dir) Close() error {
	if s.Log == nil {
		return nil
	}
	if gone := s.Removed(); gone != nil {
		// Badger's close would flush into the removed directory and
		// retry for ever; what it holds has nowhere to go.
		s.lock.Close()
		return gone
	}
	err := s.Log.close()
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// Removed says, with ErrUnavailable, where the store's directory was
// removed or moved away while this process held it: what it writes from
// then on reaches no store (nil while it is in place).
func (s *Dir) Removed() error {
	if s.lock == nil {
		return nil
	}
	held, err := s.lock.Stat()
	if err != nil {
		return nil // nothing to compare: the writes themselves will say
	}
	there, err := os.Stat(filepath.Join(s.Path, "lock"))
	if err != nil || !os.SameFile(held, there) {
		return fmt.Errorf("%w: store %s was removed or moved while this command used it; what it wrote since is lost "+
			"(put the directory back, or run again into a new store)", ErrUnavailable, s.Path)
	}
	return nil
}

// Snapshot is what a running process publishes about itself for
// `ump status`, which cannot open the locked log.
type Snapshot struct {
	PID       int       `json:"pid"`
	State     string    `json:"state"` // running, finished, interrupted, failed
	Manifest  string    `json:"manifest"`
	Name      string    `json:"name"`
	Started   time.Time `json:"started"`
	Updated   time.Time `json:"updated"`
	Cells     int       `json:"cells"`
	CellsDone int       `json:"cells_done"`
	Cell      int       `json:"cell"` // 1-based index of the cell reported last
	// Running holds the 1-based indices of every cell running (several
	// with -j or a cohort).
	Running    []int   `json:"running,omitempty"`
	Label      string  `json:"label,omitempty"`
	Stage      string  `json:"stage,omitempty"`
	Round      int     `json:"round,omitempty"`
	Rounds     int     `json:"rounds,omitempty"`
	ETASeconds float64 `json:"eta_seconds,omitempty"`
}

func snapshotPath(dir string) string { return filepath.Join(dir, "status.json") }

// WriteSnapshot replaces the snapshot atomically.
func WriteSnapshot(dir string, s *Snapshot) error {
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
