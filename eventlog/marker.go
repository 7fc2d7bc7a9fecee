package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/ump-lab/ump/internal/durable"
)

// markerName is the file that makes a directory an ump store and says
// how long its event log is at least: written when a writer opens and
// closes the store and after commits (Log.mark), never ahead of the log.
const markerName = "ump-store.json"

// markerFormat is the marker's format line; markerVersion the layout of
// the store it describes.
const (
	markerFormat  = "ump store"
	markerVersion = 1
)

// marker is the content of markerName.
type marker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// LastSeq is the sequence number of a committed event (0 for none):
	// the log holds every event from 1 to it, and may hold more (events
	// committed since the marker's last update).
	LastSeq uint64 `json:"last_seq"`
}

// ErrDamaged is returned (wrapped) when a store's event log is not what
// its marker describes, or its files do not read back; ump then changes
// nothing.
var ErrDamaged = errors.New("store is damaged")

// ErrNotStore is returned (wrapped) for a directory that holds files but
// no ump store.
var ErrNotStore = errors.New("not an ump store")

// IsStore reports whether dir holds a store's marker: a directory ump
// made a store.
func IsStore(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, markerName))
	return err == nil
}

// readMarker returns the store's marker; ok is false for a directory
// without one (new, or a store written before markers).
func readMarker(dir string) (m marker, ok bool, err error) {
	path := filepath.Join(dir, markerName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Format != markerFormat {
		return m, false, fmt.Errorf("%w: %s is not an ump store marker (%q); restore it from a backup, or, if the "+
			"event log is intact, delete it and run `ump gc --dry-run`, which checks the log and writes a new "+
			"one", ErrDamaged, path, firstLine(data))
	}
	if m.Version > markerVersion {
		return m, false, fmt.Errorf(
			"%w: %s is a version %d store; this ump reads version %d and older: use a newer ump",
			ErrDamaged,
			dir,
			m.Version,
			markerVersion,
		)
	}
	return m, true, nil
}

func firstLine(data []byte) string {
	s, _, _ := strings.Cut(string(data), "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// writeMarker replaces the marker, whole and durably.
func writeMarker(fsys durable.FS, dir string, lastSeq uint64) error {
	data, _ := json.Marshal(marker{Format: markerFormat, Version: markerVersion, LastSeq: lastSeq})
	if err := durable.WriteFile(fsys, filepath.Join(dir, markerName), append(data, '\n')); err != nil {
		return fmt.Errorf("store %s: its marker: %w", dir, err)
	}
	return nil
}

// recognise checks that dir is a store before anything opens it: a
// directory with a marker, a store written before markers (it has an
// event log directory), or — only when create is set — a directory that
// does not exist or is empty.
func recognise(dir string, create bool) error {
	if _, ok, err := readMarker(dir); ok || err != nil {
		return err
	}
	if info, err := os.Stat(filepath.Join(dir, "events")); err == nil && info.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) && create {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store %s: %w", dir, err)
	}
	// Empty, or only what a first writer creates before the marker (it
	// was killed at once): a store without events.
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool {
		return e.Name() == "lock" || e.Name() == spareName || strings.HasPrefix(e.Name(), durable.TempPrefix)
	})
	if len(entries) == 0 {
		return nil
	}
	var names []string
	for _, e := range entries[:min(len(entries), 3)] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, "…")
	}
	return fmt.Errorf(
		"%w: %s holds %s and no %s; give --store a new or empty directory (or an existing store)",
		ErrNotStore,
		dir,
		strings.Join(names, ", "),
		markerName,
	)
}

// checkTables checks the table files of an event log directory against
// its MANIFEST before Badger opens it, and returns the ones the MANIFEST
// does not list (Badger deletes those on open). Those are what a flush or
// compaction interrupted by a crash leaves (of any size, often empty) — or,
// with a lost or truncated MANIFEST, the log itself: setAside keeps them
// and the marker tells the two apart. A missing MANIFEST, or a listed table
// that does not read, is damage.
func checkTables(dir string) (orphans []string, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("event log %s: %w", dir, err)
	}
	var tables []uint64
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".sst"); ok && e.Type().IsRegular() {
			n, err := strconv.ParseUint(id, 10, 64)
			if err == nil {
				tables = append(tables, n)
			}
		}
	}
	if len(tables) == 0 {
		return nil, nil
	}
	path := filepath.Join(dir, badger.ManifestFilename)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf(
			"%w: %s is missing while %d table files hold the log; nothing was changed. %s",
			ErrDamaged,
			path,
			len(tables),
			recovery,
		)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
	}
	defer f.Close()
	opts := badger.DefaultOptions(dir)
	mf, _, err := badger.ReplayManifestFile(f, opts.ExternalMagicVersion, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not read: %v; nothing was changed. %s", ErrDamaged, path, err, recovery)
	}
	for _, id := range tables {
		name := fmt.Sprintf("%06d.sst", id)
		if _, listed := mf.Tables[id]; !listed {
			orphans = append(orphans, name)
			continue
		}
		if err := openTable(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf(
				"%w: table file %s does not read (%v): it was truncated, overwritten or has bytes changed; nothing "+
					"was changed. %s",
				ErrDamaged,
				filepath.Join(dir, name),
				err,
				recovery,
			)
		}
	}
	slices.Sort(orphans)
	return orphans, nil
}

// orphanedDir is where setAside keeps, inside the event log directory, the
// table files its MANIFEST does not list.
const orphanedDir = "orphaned"

// errUnlisted is a reader's finding of table files the MANIFEST does not
// list: only a writer may set them aside.
var errUnlisted = errors.New("table files its MANIFEST does not list")

// setAside moves table files of the event log directory dir into
// dir/orphaned (never deleting: a name taken there gets a suffix) and
// returns how to put them back.
func setAside(dir string, names []string) (putBack func() error, err error) {
	into := filepath.Join(dir, orphanedDir)
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("event log %s: %w", dir, err)
	}
	if err := os.MkdirAll(into, 0o755); err != nil {
		return nil, fmt.Errorf("event log %s: %w", dir, err)
	}
	moved := map[string]string{}
	putBack = func() error {
		for from, to := range moved {
			if err := os.Rename(to, from); err != nil {
				return err
			}
		}
		os.Remove(into)                                     // when empty
		return os.Chtimes(dir, time.Time{}, info.ModTime()) // as it was
	}
	for _, name := range names {
		to := filepath.Join(into, name)
		for k := 1; ; k++ {
			if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
				break
			}
			to = filepath.Join(into, fmt.Sprintf("%s.%d", name, k))
		}
		if err := os.Rename(filepath.Join(dir, name), to); err != nil {
			putBack()
			return nil, fmt.Errorf("event log %s: setting %s aside: %w", dir, name, err)
		}
		moved[filepath.Join(dir, name)] = to
	}
	return putBack, nil
}

// openTable opens a table file as Badger would and verifies every block's
// checksum, in this goroutine, where the panic Badger raises on a
// truncated, overwritten or bit-flipped table (in its own goroutines,
// which no one can recover, or while iterating) becomes an error: a table
// that passes cannot make Badger panic later.
func openTable(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s", strings.Join(strings.Fields(fmt.Sprint(r)), " "))
		}
	}()
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return err
	}
	opts := badger.DefaultOptions("")
	t, err := table.OpenTable(
		mf,
		table.Options{ReadOnly: true, ChkMode: options.OnTableRead, // every block's checksum, now
			BlockSize: opts.BlockSize, Compression: opts.Compression, BloomFalsePositive: opts.BloomFalsePositive},
	)
	if err != nil {
		return err
	}
	// Not t.DecrRef, which deletes the file.
	z.Munmap(t.MmapFile.Data)
	return t.MmapFile.Fd.Close()
}

// recovery says how to recover a damaged event log.
const recovery = "To recover: restore the store directory from a backup, or pull the manifests you pushed " +
	"(`ump push`) into a new --store with `ump pull HASH`; see docs/store.md, \"When a store is damaged\"."
