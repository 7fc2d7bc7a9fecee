package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ump-lab/ump/internal/bounded"
)

// ErrNotReplaceable marks a destination WriteOut refuses to replace:
// anything but a regular file (a link, a directory, a device, a FIFO).
var ErrNotReplaceable = errors.New("not a regular file")

// WriteOut writes data as path, a file a user named (--out): into a new
// file beside it that has no name until it is whole (on Linux; elsewhere,
// as WriteFile does, one created under a name no one can plant: O_EXCL,
// random), renamed over path; path must be absent or a regular file. A
// link at path is refused, never followed, and a write that fails or is
// killed leaves nothing beside it (elsewhere than Linux, a kill -9 leaves
// a .tmp- file).
func WriteOut(path string, data []byte) error {
	if err := CheckOut(path); err != nil {
		return err
	}
	if done, err := writeUnnamed(path, data); done {
		return err
	}
	return WriteFile(OS, path, data)
}

// CheckOut refuses path as a destination of WriteOut (ErrNotReplaceable)
// where it is there and not a regular file, so that a command can refuse
// it before it does its work.
func CheckOut(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf(
			"%s is %s, which ump does not replace (%w); give the name of a new or a regular file",
			path,
			bounded.Kind(fi.Mode()),
			ErrNotReplaceable,
		)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}
