package eventlog

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ump-lab/ump/artifacts"
)

// Follower keeps a store's events in memory for a reader that lives
// beside the store's writers (ump serve) and never holds the store: it
// follows the file a writer publishes its events to (publishedName),
// reading only the lines appended since its last look, and rereads it
// whole when it was replaced (every writer does when it opens the store),
// by a rename or in place: another file, a shorter one, or other first
// bytes. A store without a published file (written by an older ump) is
// read through OpenReader, again each time its marker changes. It is not
// safe for concurrent use: the caller serialises Refresh with readers of
// Dir.
type Follower struct {
	dir string
	log *Memory
	// file is the published file as last read (not read again while the
	// same); nil when read through OpenReader.
	file   os.FileInfo
	read   int64       // bytes of it read
	head   []byte      // its first bytes (up to headBytes) as read
	bad    *badFile    // a file with a line that does not read, not read again while it is the same
	marker os.FileInfo // the marker when the log was last read through OpenReader
	note   string      // OpenReader's note on the events it read
}

// badFile is a published file as it was when a line of it did not read.
type badFile struct {
	file os.FileInfo
	head []byte
	err  error
}

// NewFollower follows the store in dir; Refresh reads it.
func NewFollower(dir string) *Follower { return &Follower{dir: dir} }

// Refresh brings the events up to the store and reports whether any
// changed. An error leaves the events read before.
func (f *Follower) Refresh() (bool, error) {
	changed, err := f.refresh()
	if err != nil {
		return changed, opening(err)
	}
	return changed, nil
}

func (f *Follower) refresh() (bool, error) {
	path := filepath.Join(f.dir, publishedName)
	fi, err := os.Stat(path)
	if b := f.bad; err == nil && b != nil && os.SameFile(fi, b.file) && sameStamp(fi, b.file) &&
		sameHead(path, b.head) {
		return false, b.err // a line that does not read is not read again until the file changes
	}
	same := err == nil && f.file != nil && os.SameFile(fi, f.file) && fi.Size() >= f.read && sameHead(path, f.head)
	switch {
	case same && (fi.Size() == f.read || sameStamp(fi, f.file)):
		return false, nil // nothing appended, or only to a last line still unterminated when last read
	case same:
		return f.readFile(path, f.log, f.read)
	case err == nil:
		return f.readFile(path, NewMemory(), 0)
	case errors.Is(err, os.ErrNotExist):
		return f.readLog()
	}
	return false, err
}

// headBytes is how much of the published file's start the follower
// compares to tell a file rewritten in place from one appended to.
const headBytes = 512

// sameHead reports whether the file at path still starts with head.
func sameHead(path string, head []byte) bool {
	file, err := os.Open(path)
	if err != nil {
		return false
	}
	defer file.Close()
	now := make([]byte, len(head))
	_, err = io.ReadFull(file, now)
	return err == nil && string(now) == string(head)
}

// readFile reads the published file from offset into log, and makes log
// the follower's.
func (f *Follower) readFile(path string, log *Memory, offset int64) (bool, error) {
	file, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return false, err
	}
	head := f.head
	if offset == 0 {
		head = make([]byte, headBytes)
		n, _ := io.ReadFull(file, head)
		head = head[:n]
	}
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return false, err
	}
	before := len(log.evs)
	used, err := log.read(path, file, offset)
	f.bad = nil
	if err != nil {
		f.bad = &badFile{file: fi, head: head, err: err}
	}
	if err != nil && log != f.log {
		return false, err // a new copy that does not read: keep the events read before
	}
	// Lines read before a bad one stay read (the next look at another
	// file, or the same one replaced, starts at it).
	changed := f.log != log || len(log.evs) > before
	f.log, f.file, f.read, f.head, f.marker, f.note = log, fi, offset+used, head, nil, ""
	return changed, err
}

// readLog reads every event through OpenReader when the store has no
// published file, unless its marker is unchanged since the last read.
func (f *Follower) readLog() (bool, error) {
	mark, err := os.Stat(filepath.Join(f.dir, markerName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if f.log != nil && f.file == nil && sameStamp(mark, f.marker) {
		return false, nil
	}
	s, err := OpenReader(f.dir)
	if err != nil {
		return false, err
	}
	defer s.Close()
	evs, err := s.Events.All()
	if err != nil {
		return false, err
	}
	log := NewMemory()
	for _, ev := range evs {
		log.add(ev)
	}
	f.log, f.file, f.read, f.marker, f.note = log, nil, 0, mark, s.Note
	return true, nil
}

// sameStamp reports whether two looks at a file saw the same version (or
// both saw none).
func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// Seq is the sequence number of the last event read (0 for none).
func (f *Follower) Seq() uint64 {
	if f.log == nil {
		return 0
	}
	return uint64(len(f.log.evs))
}

// Dir returns the store over the events read so far and its own blobs,
// holding nothing; Beside names a writer that holds the store now. Call
// Refresh first.
func (f *Follower) Dir() *Dir {
	s := &Dir{Path: f.dir, Events: f.log, Local: artifacts.ExistingLocal(filepath.Join(f.dir, "blobs")), Note: f.note}
	if f.log == nil {
		s.Events = NewMemory()
	}
	if held(f.dir) {
		pid, what := Holder(f.dir)
		s.Beside = pidCommand(pid, what)
	}
	return s
}

// held reports whether a process holds the store in dir for writing.
func held(dir string) bool {
	lock, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil {
		return false
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		return true
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return false
}
