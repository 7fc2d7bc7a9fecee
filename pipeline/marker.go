package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
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
			"event log is intact, delete it and run `ump gc --dry-run`, which checks the log and writes a new one", ErrDamaged, path, firstLine(data))
	}
	if m.Version > markerVersion {
		return m, false, fmt.Errorf("%w: %s is a version %d store; this ump reads version %d and older: use a newer ump", ErrDamaged, dir, m.Version, markerVersion)
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

// writeMarker replaces the marker atomically and durably.
func writeMarker(dir string, lastSeq uint64) error {
	data, _ := json.Marshal(marker{Format: markerFormat, Version: markerVersion, LastSeq: lastSeq})
	path := filepath.Join(dir, markerName)
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("store %s: writing its marker: %w", dir, err)
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store %s: writing its marker: %w", dir, err)
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
	if len(entries) == 0 && create {
		return nil
	}
	var names []string
	for _, e := range entries[:min(len(entries), 3)] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, "…")
	}
	return fmt.Errorf("%w: %s holds %s and no %s; give --store a new or empty directory (or an existing store)", ErrNotStore, dir, strings.Join(names, ", "), markerName)
}

// checkTables refuses an event log directory whose table files its
// MANIFEST does not account for, before Badger opens it: Badger deletes
// such files on open, and with a lost or truncated MANIFEST they are the
// log.
func checkTables(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event log %s: %w", dir, err)
	}
	var tables []uint64
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".sst"); ok {
			n, err := strconv.ParseUint(id, 10, 64)
			if err == nil {
				tables = append(tables, n)
			}
		}
	}
	if len(tables) == 0 {
		return nil
	}
	path := filepath.Join(dir, badger.ManifestFilename)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is missing while %d table files hold the log; nothing was changed. %s", ErrDamaged, path, len(tables), recovery)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
	}
	defer f.Close()
	opts := badger.DefaultOptions(dir)
	mf, _, err := badger.ReplayManifestFile(f, opts.ExternalMagicVersion, opts)
	if err != nil {
		return fmt.Errorf("%w: %s does not read: %v; nothing was changed. %s", ErrDamaged, path, err, recovery)
	}
	for _, id := range tables {
		if err := openTable(filepath.Join(dir, fmt.Sprintf("%06d.sst", id))); err != nil {
			return fmt.Errorf("%w: table file %s does not read (%v): it was truncated or overwritten; nothing was changed. %s", ErrDamaged, filepath.Join(dir, fmt.Sprintf("%06d.sst", id)), err, recovery)
		}
	}
	var orphans []string
	for _, id := range tables {
		if _, ok := mf.Tables[id]; !ok {
			orphans = append(orphans, fmt.Sprintf("%06d.sst", id))
		}
	}
	if len(orphans) > 0 {
		slices.Sort(orphans)
		return fmt.Errorf("%w: %s does not list %d of the log's %d table files (%s): it was truncated or replaced, and "+
			"opening the log would delete them; nothing was changed. If ump was killed during a compaction they may be "+
			"leftovers: move them out of %s (keep them) and retry; ump then checks the log against %s. %s",
			ErrDamaged, path, len(orphans), len(tables), strings.Join(orphans, ", "), dir, markerName, recovery)
	}
	return nil
}

// openTable opens a table file as Badger would, in this goroutine, where
// the panic Badger raises on a truncated or overwritten table (in its own
// goroutines, which no one can recover) becomes an error.
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
	t, err := table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.NoVerification,
		BlockSize: opts.BlockSize, Compression: opts.Compression, BloomFalsePositive: opts.BloomFalsePositive})
	if err != nil {
		return err
	}
	// Not t.DecrRef, which deletes the file.
	z.Munmap(t.MmapFile.Data)
	return t.MmapFile.Fd.Close()
}

// recovery says how to recover a damaged event log.
const recovery = "To recover: restore the store directory from a backup, or pull the manifests you pushed " +
	"(`ump push`) into a new --store with `ump pull HASH`; see README, \"When a store is damaged\"."
