package durable

import (
	"fmt"
	"os"
	"path/filepath"
)

// FS is what WriteFile needs of a file system.
type FS interface {
	// CreateTemp creates a new file in dir, readable by all (0644), named
	// by pattern as os.CreateTemp names it.
	CreateTemp(dir, pattern string) (File, error)
	Rename(from, to string) error
	Remove(name string) error
	// SyncDir makes dir's entries (creations, renames, removals) durable.
	SyncDir(dir string) error
}

// File is an open file being written.
type File interface {
	Name() string
	Write(p []byte) (int, error)
	// Sync makes the file's contents durable.
	Sync() error
	Close() error
}

// OS is the operating system's file system.
var OS FS = osFS{}

// TempPrefix starts the names of WriteFile's temporary files: a writer
// killed mid-write leaves one, which the next holder of the store may
// delete.
const TempPrefix = ".tmp-"

// WriteFile replaces path with data, whole: once it returns, a crash or
// a power loss leaves path with data; before, with its old content or
// none. A failed write removes its temporary file.
func WriteFile(fsys FS, path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := fsys.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(f.Name(), path)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		fsys.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil { // not CreateTemp's 0600
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func (osFS) Rename(from, to string) error { return os.Rename(from, to) }
func (osFS) Remove(name string) error     { return os.Remove(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
