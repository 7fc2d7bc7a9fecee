package durable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data as path through a file that has no name until
// it is whole (O_TMPFILE): written and synced, it is linked into dir under
// a fresh random name and renamed over path at once, so a process killed
// while it writes leaves nothing behind. done is false, having written
// nothing, where the file system or the system cannot (no O_TMPFILE, no
// /proc): then WriteFile's named temporary file does the same.
func writeUnnamed(path string, data []byte) (done bool, err error) {
	dir := filepath.Dir(path)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("writing %s: %w", path, &os.PathError{Op: "open", Path: dir, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	err = f.Chmod(0o644) // not the umask's
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return true, fmt.Errorf("writing %s: %w", path, err)
	}
	var name string
	for {
		suffix := make([]byte, 8)
		rand.Read(suffix)
		name = filepath.Join(dir, TempPrefix+hex.EncodeToString(suffix))
		err = unix.Linkat(
			unix.AT_FDCWD,
			fmt.Sprintf("/proc/self/fd/%d", fd),
			unix.AT_FDCWD,
			name,
			unix.AT_SYMLINK_FOLLOW,
		)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if errors.Is(err, unix.ENOENT) { // no /proc to link through
		return false, nil
	}
	if err == nil {
		if err = os.Rename(name, path); err != nil {
			os.Remove(name)
		}
	}
	if err == nil {
		err = OS.SyncDir(dir)
	}
	if err != nil {
		return true, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
