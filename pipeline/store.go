package pipeline

import (
	"path/filepath"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"
)

// Store is an opened store directory (eventlog.Dir) and where its blobs
// go: the directory's Local blobs unless the caller points Blobs
// elsewhere (an S3 store) right after Open.
type Store struct {
	*eventlog.Dir
	Blobs artifacts.Store
}

// Open locks the store directory (creating it) and opens its event log
// and blobs (eventlog.Open).
func Open(dir, command string) (*Store, error) {
	d, err := eventlog.Open(dir, command)
	if err != nil {
		return nil, err
	}
	return &Store{Dir: d, Blobs: d.Local}, nil
}

// OpenReader opens the store for reading and writes nothing to it
// (eventlog.OpenReader).
func OpenReader(dir string) (*Store, error) {
	d, err := eventlog.OpenReader(dir)
	if err != nil {
		return nil, err
	}
	return &Store{Dir: d, Blobs: d.Local}, nil
}

// Source is what reports read of the store: its events and blobs.
func (s *Store) Source() state.Source {
	return state.Source{Dir: s.Path, Events: s.Events, Blobs: s.Blobs}
}

// TrustedKeysPath is the store's list of the public keys, besides its
// user's own, whose signed commits it imports (ump trust).
func TrustedKeysPath(dir string) string { return filepath.Join(dir, "trusted-keys") }

// AddNote records a note on a registered manifest.
func (s *Store) AddNote(hash, text string) error {
	ev := eventlog.New(eventlog.ManifestNoted, text)
	ev.Manifest = hash
	return s.Log.Append(ev)
}

// Forget hides a registered manifest from the listings (status, the
// dashboard) until it is registered again; its events and results stay.
func (s *Store) Forget(hash string) error {
	ev := eventlog.New(eventlog.ManifestForgotten, struct{}{})
	ev.Manifest = hash
	return s.Log.Append(ev)
}
