package durable

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteOutNamesNothingWhileItWrites: on Linux, while WriteOut writes
// 64 MiB (and syncs them), the directory names no part-written file, so a
// process killed meanwhile leaves nothing there: the one temporary name a
// look may see is the whole file's, between its link and its rename.
// (Counting looks instead would measure the scheduler: on a loaded
// machine the writer may pause between link and rename.)
func TestWriteOutNamesNothingWhileItWrites(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	data := bytes.Repeat([]byte("ump"), 64<<20/3)
	done := make(chan error, 1)
	go func() { done <- WriteOut(target, data) }()
	polls, partial := 0, 0
	temporary := map[string]bool{}
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
				if e.Name() == "out.bin" {
					continue
				}
				temporary[e.Name()] = true
				if info, err := e.Info(); err == nil && info.Size() != int64(len(data)) {
					partial++ // renamed away meanwhile: err, and nothing to count
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
	if partial > 0 || len(temporary) > 1 {
		t.Errorf(
			"while WriteOut wrote, %d of %d looks saw a part-written file, under %d temporary names",
			partial,
			polls,
			len(temporary),
		)
	}
	t.Logf("%d looks, %d temporary name(s) seen, none part-written", polls, len(temporary))
}
