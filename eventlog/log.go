package eventlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/durable"
)

// Badger is the store's event log on disk (Log): a Badger database in
// STORE/events, synced on every commit.
type Badger struct {
	db        *badger.DB
	mu        sync.Mutex // serialises Append, which owns next
	next      uint64
	dir       string     // the store's: where the marker is
	marked    time.Time  // when the marker was last rewritten
	published *publisher // copies committed events for readers beside the holder
	note      string     // what opening it did, for the user ("" for nothing)
	fs        durable.FS // how the marker is written: durable.OS, or a test's
	spare     string     // the spare-space file a writer holds (holdSpare), "" for readers
}

// openLog opens the Badger event log of the store in dir read-only and
// checks it: its MANIFEST accounts for its table files (Badger deletes the
// others on open, and with a lost or truncated MANIFEST they are the log)
// and it is not shorter than the store's marker says. A damaged log is
// refused before anything is written. Unless readOnly, it then reopens
// the log for writing, republishes its events (publishedName) and brings
// the marker up to it. The caller holds the store lock (exclusive, or
// shared when readOnly), so no other process writes.
func openLog(dir string, readOnly bool) (*Badger, error) {
	path := filepath.Join(dir, "events")
	mark, marked, err := readMarker(dir)
	if err != nil {
		return nil, err
	}
	orphans, err := checkTables(path)
	if err != nil {
		return nil, err
	}
	if len(orphans) > 0 {
		if readOnly {
			return nil, fmt.Errorf(
				"%w: event log %s holds %d %w (%s)",
				ErrDamaged,
				path,
				len(orphans),
				errUnlisted,
				strings.Join(orphans, ", "),
			)
		}
		putBack, err := setAside(path, orphans)
		if err != nil {
			return nil, err
		}
		l, err := openLog(dir, false)
		if err != nil { // the log without them is damaged: they may be it
			if perr := putBack(); perr != nil {
				return nil, fmt.Errorf(
					"%w (and putting the table files %s back from %s failed: %v)",
					err,
					strings.Join(orphans, ", "),
					orphanedDir,
					perr,
				)
			}
			return nil, fmt.Errorf(
				"%w (%s does not list the table files %s either; they are back in place)",
				err,
				badger.ManifestFilename,
				strings.Join(orphans, ", "),
			)
		}
		l.note = fmt.Sprintf(
			"event log %s: moved %d table files its MANIFEST does not list (%s), what a flush or compaction "+
				"interrupted by a crash leaves, to %s; the log holds every event %s records",
			path,
			len(orphans),
			strings.Join(orphans, ", "),
			filepath.Join(path, orphanedDir),
			markerName,
		)
		return l, nil
	}
	if _, err := os.Stat(filepath.Join(path, badger.ManifestFilename)); errors.Is(err, os.ErrNotExist) {
		if marked && mark.LastSeq > 0 {
			return nil, fmt.Errorf("%w: %s has no MANIFEST while %s records %d events; nothing was changed. %s",
				ErrDamaged, path, markerName, mark.LastSeq, recovery)
		}
		if readOnly {
			return nil, fmt.Errorf("store %s: %w", dir, errNoLog)
		}
	} else if mem := memTables(path); len(mem) > 0 {
		// A log its last writer did not close (killed) has memory tables
		// to replay, which only a writer may do; the check then follows
		// the replay (openChecked below).
		if readOnly {
			return nil, fmt.Errorf("store %s: %w", dir, errUnclosed)
		}
		vlogs, _ := filepath.Glob(filepath.Join(path, "*.vlog"))
		if err := setAsideEmpty(path, append(mem, vlogs...)); err != nil {
			return nil, err
		}
	} else {
		l, err := openChecked(dir, true, mark)
		if readOnly || err != nil {
			return l, err
		}
		l.db.Close()
	}
	spare, err := holdSpare(dir)
	if err != nil {
		return nil, err
	}
	l, err := openChecked(dir, false, mark)
	if err != nil {
		return nil, err
	}
	l.spare = spare
	var evs []Event
	if evs, err = l.All(); err == nil {
		l.published, err = publish(dir, evs)
	}
	if err == nil {
		err = l.mark()
	}
	if err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// errNoLog is a reader's finding of a store whose first writer stopped
// before its event log had a MANIFEST: a store without events.
var errNoLog = errors.New("no event log yet (a new directory, or the run that created it stopped at once)")

// errUnclosed is a reader's finding of a log whose last writer did not
// close it: its memory tables need a replay only a writer may do.
var errUnclosed = errors.New("was not closed by its last writer (killed?)")

// memTables lists the event log directory's memory tables (.mem files):
// Badger deletes them when it closes, having flushed them, so a log with
// any was not closed.
func memTables(dir string) []string {
	mem, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	return mem
}

// setAsideEmpty moves the empty ones of the files (memory tables and value
// log files) of the event log directory dir into dir/orphaned: a writer
// killed while Badger created one leaves it at size 0, holding nothing,
// and Badger refuses to open a log with one.
func setAsideEmpty(dir string, files []string) error {
	var empty []string
	for _, p := range files {
		if info, err := os.Stat(p); err == nil && info.Size() == 0 {
			empty = append(empty, filepath.Base(p))
		}
	}
	if len(empty) == 0 {
		return nil
	}
	_, err := setAside(dir, empty)
	return err
}

// openChecked opens the Badger database (openBadger) and refuses, closing
// it, a log shorter than the marker records.
func openChecked(dir string, readOnly bool, mark marker) (*Badger, error) {
	l, err := openBadger(dir, readOnly)
	if err != nil || l.next-1 >= mark.LastSeq {
		return l, err
	}
	l.db.Close()
	return nil, fmt.Errorf(
		"%w: its event log %s ends at event %d, but %s records %d committed events: events were lost "+
			"(a MANIFEST or table file replaced or truncated); nothing was deleted. %s",
		ErrDamaged,
		filepath.Join(dir, "events"),
		l.next-1,
		markerName,
		mark.LastSeq,
		recovery,
	)
}

// memTableBytes is the size of the event log's memory table. The crash
// tests build ump with a small one (go build -ldflags
// "-X github.com/ump-lab/ump/eventlog.memTableBytes=N") so that flushes
// and compactions happen in the middle of a run.
var memTableBytes = "8388608"

// openBadger opens the store's Badger database and finds the next
// sequence number.
func openBadger(dir string, readOnly bool) (*Badger, error) {
	path := filepath.Join(dir, "events")
	memTable, err := strconv.ParseInt(memTableBytes, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("ump was built with memTableBytes %q: %w", memTableBytes, err)
	}
	opts := badger.DefaultOptions(path).
		WithLogger(nil).
		WithSyncWrites(true).
		WithMemTableSize(memTable).
		WithValueThreshold(min(1<<20, memTable/8)). // Badger's default, or under a batch (15% of the memory table)
		WithValueLogFileSize(32 << 20).
		WithNumVersionsToKeep(1).
		WithReadOnly(readOnly)
	db, err := badger.Open(opts)
	if err != nil && strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		// Badger formats its cause into its message (errors.Is cannot
		// find it): a disk that filled while it wrote its lock file or key
		// registry is a full disk, not a damaged store.
		return nil, fmt.Errorf("opening event log %s: %w (%v)", path, syscall.ENOSPC, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: opening event log %s: %w", ErrDamaged, path, err)
	}
	l := &Badger{db: db, next: 1, dir: dir, fs: durable.OS}
	err = l.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte("ev/")})
		defer it.Close()
		it.Seek([]byte("ev/\xff"))
		if it.Valid() {
			l.next = binary.BigEndian.Uint64(it.Item().Key()[3:]) + 1
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: reading event log %s: %v", ErrDamaged, path, err)
	}
	return l, nil
}

// view runs fn in a read transaction, where a panic of Badger's on a
// damaged table (a bad block offset, a nil block) becomes ErrDamaged.
func (l *Badger) view(fn func(*badger.Txn) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: event log %s: a table file does not read (%s). %s", ErrDamaged,
				filepath.Join(l.dir, "events"), strings.Join(strings.Fields(fmt.Sprint(r)), " "), recovery)
		}
	}()
	return l.db.View(fn)
}

func (l *Badger) close() error {
	var err error
	if l.published != nil { // opened for writing
		l.published.close()
		err = l.mark()
	}
	if l.spare != "" { // for Badger's last flush, whoever filled the disk
		os.Remove(l.spare)
	}
	if cerr := l.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// markerEvery is how often, at most, a commit rewrites the store's marker
// (an fsync'd file: once per commit would double the cost of a commit);
// opening and closing the log rewrite it too. The marker never runs ahead
// of the log, so it bounds what a damaged log must still hold.
const markerEvery = time.Second

// mark brings the store's marker up to the log.
func (l *Badger) mark() error {
	l.marked = time.Now()
	return writeMarker(l.fs, l.dir, l.next-1)
}

func seqKey(prefix string, seq uint64) []byte {
	k := make([]byte, len(prefix)+8)
	copy(k, prefix)
	binary.BigEndian.PutUint64(k[len(prefix):], seq)
	return k
}

// Append assigns the next sequence number and the time, and writes the
// event with its index keys in one transaction.
func (l *Badger) Append(ev *Event) error {
	ev.Time = time.Now().UTC()
	return l.write([]*Event{ev})
}

// Import appends events from another store, keeping their times, in one
// transaction: all of them or none.
func (l *Badger) Import(evs []Event) error {
	ptrs := make([]*Event, len(evs))
	for i := range evs {
		ptrs[i] = &evs[i]
	}
	return l.write(ptrs)
}

// write gives the events the next sequence numbers and writes them with
// their index keys in one transaction.
func (l *Badger) write(evs []*Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := artifacts.CheckFreeSpace(l.dir, 0); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	err := l.db.Update(func(txn *badger.Txn) error {
		for k, ev := range evs {
			ev.Seq = l.next + uint64(k)
			val, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			if len(val) > maxEventBytes {
				return fmt.Errorf(
					"event log: a %s event of %d MiB is over the log's limit of %d MiB",
					ev.Kind,
					len(val)>>20,
					maxEventBytes>>20,
				)
			}
			if err := txn.Set(seqKey("ev/", ev.Seq), val); err != nil {
				return err
			}
			for _, ix := range indexes(ev) {
				if err := txn.Set(seqKey(ix, ev.Seq), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		l.next += uint64(len(evs))
		l.published.append(evs)
		if time.Since(l.marked) >= markerEvery {
			err = l.mark()
		}
	}
	return err
}

func indexes(ev *Event) []string {
	ix := []string{"ix/k/" + ev.Kind + "/"}
	if ev.Manifest != "" {
		ix = append(ix, "ix/m/"+ev.Manifest+"/")
	}
	if ev.Cell != "" {
		ix = append(ix, "ix/c/"+ev.Cell+"/")
	}
	if ev.StageKey != "" {
		ix = append(ix, "ix/s/"+ev.StageKey+"/")
	}
	return ix
}

// ByKind, ByManifest, ByCell and ByStage return events in sequence order.
func (l *Badger) ByKind(kind string) ([]Event, error)  { return l.scan("ix/k/" + kind + "/") }
func (l *Badger) ByManifest(h string) ([]Event, error) { return l.scan("ix/m/" + h + "/") }
func (l *Badger) ByCell(key string) ([]Event, error)   { return l.scan("ix/c/" + key + "/") }
func (l *Badger) ByStage(key string) ([]Event, error)  { return l.scan("ix/s/" + key + "/") }

// All returns every event in sequence order.
func (l *Badger) All() ([]Event, error) { return l.scan("ev/") }

func (l *Badger) scan(prefix string) ([]Event, error) {
	var out []Event
	err := l.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			key := it.Item().Key()
			item, err := txn.Get(seqKey("ev/", binary.BigEndian.Uint64(key[len(key)-8:])))
			if err != nil {
				return fmt.Errorf(
					"%w: event log index %q points at a missing event (%v). %s",
					ErrDamaged,
					key,
					err,
					recovery,
				)
			}
			var ev Event
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &ev) }); err != nil {
				return fmt.Errorf("%w: an event of the log does not read (%v). %s", ErrDamaged, err, recovery)
			}
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}

// Check proves the log complete before anything deletes what it names:
// every table's checksums verify, the events are numbered densely from 1,
// each decodes, the last is not before the one the store's marker
// records, and every index entry points at an event. Badger's iterators
// stop silently at an unreadable block; this does not. It returns the
// number of events.
func (l *Badger) Check() (uint64, error) {
	damaged := func(format string, args ...any) (uint64, error) {
		return 0, fmt.Errorf("%w: event log %s: %s; nothing was changed. %s", ErrDamaged,
			filepath.Join(l.dir, "events"), fmt.Sprintf(format, args...), recovery)
	}
	if err := l.view(func(*badger.Txn) error { return l.db.VerifyChecksum() }); err != nil {
		return damaged("a table file fails its checksum: %v", err)
	}
	var n uint64
	err := l.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("ev/")})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			seq := binary.BigEndian.Uint64(it.Item().Key()[3:])
			if seq != n+1 {
				return fmt.Errorf("events %d to %d are missing", n+1, seq-1)
			}
			var ev Event
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &ev) }); err != nil ||
				ev.Seq != seq {
				return fmt.Errorf("event %d does not read (%v)", seq, err)
			}
			n = seq
		}
		return nil
	})
	if err != nil {
		return damaged("%v", err)
	}
	if n != l.next-1 {
		return damaged("the events stop at %d before the last one, %d", n, l.next-1)
	}
	if mark, _, err := readMarker(l.dir); err != nil {
		return 0, err
	} else if n < mark.LastSeq {
		return damaged("it holds %d events, but %s records %d", n, markerName, mark.LastSeq)
	}
	err = l.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("ix/")})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			key := it.Item().Key()
			if seq := binary.BigEndian.Uint64(key[len(key)-8:]); seq == 0 || seq > n {
				return fmt.Errorf("index entry %q points at event %d, which it does not hold", key[:len(key)-8], seq)
			}
		}
		return nil
	})
	if err != nil {
		return damaged("%v", err)
	}
	return n, nil
}

// spareName is the file, in the store directory, that holds disk space
// for closing the event log: Badger flushes its memory table to a new
// table file through a memory map when it closes, and a page it cannot
// allocate then kills the process (SIGBUS) instead of failing a write. A
// writer holds the file while it has the log open and deletes it just
// before closing the log; a writer killed leaves it for the next.
const spareName = "spare-space"

// spareBytes covers a memory table's flush (at most the 8 MiB memory
// table) with room for the MANIFEST and the marker.
const spareBytes = 24 << 20

// holdSpare allocates spareBytes in the store directory's spare-space file
// (kept when a killed writer left it whole) and returns its path. On a
// disk without that much free it returns an error wrapping ENOSPC.
func holdSpare(dir string) (string, error) {
	path := filepath.Join(dir, spareName)
	if info, err := os.Stat(path); err == nil && info.Size() == spareBytes {
		return path, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("store %s: %w", dir, err)
	}
	defer f.Close()
	err = allocate(f, spareBytes)
	if errors.Is(
		err,
		errors.ErrUnsupported,
	) { // a file system or system without fallocate (EOPNOTSUPP is one): write it
		zeros := make([]byte, 1<<20)
		err = nil
		for off := int64(0); off < spareBytes && err == nil; off += int64(len(zeros)) {
			_, err = f.WriteAt(zeros, off)
		}
	}
	if err == nil {
		err = f.Truncate(spareBytes)
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf(
			"store %s: holding %d MiB of disk space for closing its event log: %w",
			dir,
			spareBytes>>20,
			err,
		)
	}
	return path, nil
}

// publishedName is the file, in the store directory, where the process
// holding the store publishes every committed event as one JSON line, in
// sequence order, for readers that cannot take the lock.
const publishedName = "events.jsonl"

// publisher appends committed events to the published file. It is a copy
// for readers, never the record: the holder rewrites it from the log when
// it opens the store, so a crash between a commit and its line costs
// nothing.
type publisher struct {
	path string
	f    *os.File // nil once a write failed: readers then find no file
}

// publish rewrites the published file from the log's events (through a
// temporary file and a rename, so readers see the old or the new whole)
// and opens it for appending.
func publish(dir string, evs []Event) (*publisher, error) {
	path := filepath.Join(dir, publishedName)
	tmp, err := os.CreateTemp(dir, publishedName+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("publishing events: %w", err)
	}
	tmp.Chmod(0o644) // readable like the store's other files, not CreateTemp's 0600
	w := bufio.NewWriter(tmp)
	for i := range evs {
		line, _ := json.Marshal(&evs[i])
		w.Write(append(line, '\n'))
	}
	err = w.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("publishing events to %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("publishing events: %w", err)
	}
	return &publisher{path: path, f: f}, nil
}

// append writes committed events in one write, so a reader sees whole
// lines or none of a batch's last. A failed write removes the file: a
// reader beside the writer is then told the store is busy instead of
// reading a copy that stopped short.
func (p *publisher) append(evs []*Event) {
	if p == nil || p.f == nil {
		return
	}
	var buf bytes.Buffer
	for _, ev := range evs {
		line, _ := json.Marshal(ev)
		buf.Write(append(line, '\n'))
	}
	if _, err := p.f.Write(buf.Bytes()); err != nil {
		p.f.Close()
		p.f = nil
		os.Remove(p.path)
	}
}

func (p *publisher) close() {
	if p != nil && p.f != nil {
		p.f.Close()
	}
}
