package durable

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteOutNamesNothingWhileItWrites: on Linux, while WriteOut writes
// 64 MiB (and syncs them), the directory holds no name but the target's,
// so a process killed meanwhile leaves nothing there; a temporary name
// shows for a moment at most, between its link and its rename.
func TestWriteOutNamesNothingWhileItWrites(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	data := bytes.Repeat([]byte("ump"), 64<<20/3)
	done := make(chan error, 1)
	go func() { done <- WriteOut(target, data) }()
	polls, named := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			polls++
			for _, e := range entries {
				if e.Name() != "out.bin" {
					named++
				}
			}
		}
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the target after WriteOut: %d bytes, %v; want the 64 MiB written", len(got), err)
	}
	if polls < 20 {
		t.Fatalf("only %d looks at the directory while WriteOut wrote: too few to tell", polls)
	}
	if named > 2 {
		t.Errorf("a temporary name was there in %d of %d looks while WriteOut wrote", named, polls)
	}
	t.Logf("%d looks, %d saw a temporary name", polls, named)
}
