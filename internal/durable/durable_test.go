package durable

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileSurvivesAPowerLoss(t *testing.T) {
	crash := NewCrashable()
	path := filepath.Join(t.TempDir(), "f")
	for _, data := range []string{"first", "second"} {
		if err := WriteFile(crash, path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, ok := crash.AfterPowerLoss(path); !ok || string(got) != data {
			t.Errorf("after a power loss: present %v, %q; want %q", ok, got, data)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Errorf("on disk: %q; want %q", got, data)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("WriteFile left %d files; want only its target", len(entries))
	}
}

// TestCrashableLosesWhatWasNotSynced checks the test file system itself:
// a file not synced comes back empty, a rename whose directory was not
// synced does not come back.
func TestCrashableLosesWhatWasNotSynced(t *testing.T) {
	dir := t.TempDir()
	write := func(c *Crashable, name string, syncFile, syncDir bool) {
		f, err := c.CreateTemp(dir, TempPrefix+"*")
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("data"))
		if syncFile {
			f.Sync()
		}
		f.Close()
		if err := c.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if syncDir {
			c.SyncDir(dir)
		}
	}
	c := NewCrashable()
	write(c, "unsynced", false, true)
	if got, ok := c.AfterPowerLoss(filepath.Join(dir, "unsynced")); !ok || len(got) != 0 {
		t.Errorf("a file never synced: present %v with %q; want present and empty", ok, got)
	}
	c = NewCrashable()
	write(c, "unlisted", true, false)
	if _, ok := c.AfterPowerLoss(filepath.Join(dir, "unlisted")); ok {
		t.Error("a rename whose directory was never synced survived the power loss")
	}
	c = NewCrashable()
	write(c, "kept", true, true)
	if got, ok := c.AfterPowerLoss(filepath.Join(dir, "kept")); !ok || !bytes.Equal(got, []byte("data")) {
		t.Errorf("a synced file in a synced directory: present %v, %q", ok, got)
	}
}
