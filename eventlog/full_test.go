package eventlog

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpeningTheLogOnAFullDiskIsAFullDisk: the event log opened on a disk
// with no space left fails as a full disk (ENOSPC, which ump answers with
// "free space and rerun"), not as a damaged store. Badger writes its key
// registry while it opens and reports a failure in words only; a run
// whose disk filled at that moment was told its store was damaged.
func TestOpeningTheLogOnAFullDiskIsAFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	l, err := openBadger(filepath.Join(dir, "store"), false)
	if err == nil {
		l.close()
		t.Fatal("the event log opened on a full disk")
	}
	if !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrDamaged) {
		t.Errorf("opening on a full disk: %v (want a full disk, not a damaged store)", err)
	}
}
