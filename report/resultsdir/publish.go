package resultsdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ump-lab/ump/internal/durable"
)

// A report is regenerated in place (`ump report DIR --out DIR`) without
// a moment at which a reader finds a directory half written: each manifest
// directory is written whole beside its destination (Staging) and swapped
// in (Publish), each top-level file is written beside and renamed over
// (WriteFileAtomic). A kill at any moment leaves each directory and file
// old or new, and the next report in that directory removes what the kill
// left (ClearStaging).

// stagingPrefix begins the names of what a report writes beside its
// destinations before it swaps them in.
const stagingPrefix = ".ump-staging-"

// Staging makes a new, empty directory in out to write dir's next version
// into, for Publish.
func Staging(out, dir string) (string, error) {
	return os.MkdirTemp(out, stagingPrefix+dir+"-")
}

// Publish puts the directory staged in place of dest (a directory of
// ump's own, CheckOwn, or nothing) in one step where the system can swap
// two directories, and removes the old one.
func Publish(staged, dest string) error {
	if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(staged, dest)
	}
	if err := swap(staged, dest); err != nil {
		return fmt.Errorf("putting %s in place of %s: %w", staged, dest, err)
	}
	return os.RemoveAll(staged) // now the old version
}

// WriteFileAtomic writes data as dir/name: into a new file beside it,
// renamed over it (durable.WriteFile), so that a reader finds the old
// file or the new one. name must be a file inside dir that is not a link
// (PathInside).
func WriteFileAtomic(dir, name string, data []byte) error {
	path, err := PathInside(dir, name)
	if err != nil {
		return err
	}
	return durable.WriteFile(durable.OS, path, data)
}

// ClearStaging removes from out what an interrupted report left there
// (directories and files whose names begin with stagingPrefix or
// durable.TempPrefix).
func ClearStaging(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) || strings.HasPrefix(e.Name(), durable.TempPrefix) {
			if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
