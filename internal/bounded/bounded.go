package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular marks a path ReadFile refuses: it is not a regular file
// (after links are followed).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a file larger than the limit ReadFile was given.
var ErrTooLarge = errors.New("larger than ump reads")

// ReadFile reads the regular file at path whole, if it holds at most
// limit bytes. A missing file wraps fs.ErrNotExist.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf(
			"%s is %s; ump reads it only as a plain file (%w)",
			path,
			Kind(info.Mode()),
			ErrNotRegular,
		)
	case info.Size() > limit:
		return nil, fmt.Errorf(
			"%w: %s is %d bytes, more than the %d such a file holds",
			ErrTooLarge,
			path,
			info.Size(),
			limit,
		)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew while read
		return nil, fmt.Errorf("%w: %s holds more than the %d bytes such a file holds", ErrTooLarge, path, limit)
	}
	return data, nil
}

// Kind names the kind of file a mode that is not a regular file's is,
// for a message: a symbolic link, a directory, a FIFO, a device.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
