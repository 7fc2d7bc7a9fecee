package bounded

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileReadsOnlySmallPlainFiles: a plain file within the limit is
// read whole, through a link too; one byte over it, a device behind a
// link, a directory and a FIFO (at once, with no writer) are refused by
// identity, and a missing file is fs.ErrNotExist.
func TestReadFileReadsOnlySmallPlainFiles(t *testing.T) {
	dir := t.TempDir()
	plain, link := filepath.Join(dir, "plain"), filepath.Join(dir, "link")
	os.WriteFile(plain, []byte("12345"), 0o644)
	os.Symlink(plain, link)
	for _, path := range []string{plain, link} {
		if data, err := ReadFile(path, 5); err != nil || string(data) != "12345" {
			t.Errorf("%s within the limit: %q %v", path, data, err)
		}
	}
	if _, err := ReadFile(plain, 4); !errors.Is(err, ErrTooLarge) ||
		!strings.Contains(err.Error(), "5 bytes, more than the 4") {
		t.Errorf("one byte over the limit: %v; want ErrTooLarge", err)
	}
	zero, fifo := filepath.Join(dir, "zero"), filepath.Join(dir, "fifo")
	os.Symlink("/dev/zero", zero)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a FIFO") {
			t.Errorf("a FIFO: %v; want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile of a FIFO with no writer hangs")
	}
	for path, kind := range map[string]string{zero: "a device", dir: "a directory"} {
		if _, err := ReadFile(path, 1<<20); !errors.Is(err, ErrNotRegular) ||
			!strings.Contains(err.Error(), "is "+kind) {
			t.Errorf("%s: %v; want ErrNotRegular, %s", path, err, kind)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v; want fs.ErrNotExist", err)
	}
}
