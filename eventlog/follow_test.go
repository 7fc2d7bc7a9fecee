package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFollowerFollowsWritersWithoutHoldingTheStore: a Follower reads what
// a writer appends (only the new lines, leaving a half-written one), sees
// a new writer's rewritten file, reads a store without a published file
// through the log, and never makes a writer wait.
func TestFollowerFollowsWritersWithoutHoldingTheStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	appendKinds := func(s *Dir, kinds ...string) {
		t.Helper()
		for _, kind := range kinds {
			if err := s.Log.Append(&Event{Kind: kind, Cell: "c1", Stage: "train", StageKey: "k"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendKinds(s, CellStarted, StageStarted)
	f := NewFollower(dir)
	if changed, err := f.Refresh(); err != nil || !changed || f.Seq() != 2 {
		t.Fatalf("first refresh: changed %v, %v, seq %d; want 2 events", changed, err, f.Seq())
	}
	if got := f.Dir(); got.Beside == "" || got.Log != nil {
		t.Errorf("beside a writer: Beside %q, Log %v; want the writer named and no log opened", got.Beside, got.Log)
	}
	if changed, err := f.Refresh(); err != nil || changed {
		t.Errorf("refresh with nothing new: changed %v, %v", changed, err)
	}
	appendKinds(s, StageCompleted)
	path := filepath.Join(dir, publishedName)
	half, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	half.WriteString(`{"seq":4,"kind":"Cell`)
	half.Close()
	if changed, err := f.Refresh(); err != nil || !changed || f.Seq() != 3 {
		t.Fatalf("after an append and half a line: changed %v, %v, seq %d; want 3", changed, err, f.Seq())
	}
	evs, _ := f.Dir().Events.ByStage("k")
	if len(evs) != 3 || evs[2].Kind != StageCompleted {
		t.Errorf("ByStage after the append: %v", evs)
	}
	// The half line completed, then a bad line: the event before it is
	// read once, and each look reports the bad line itself.
	half, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	half.WriteString("Started\",\"cell\":\"c1\"}\nnot JSON\n")
	half.Close()
	for range 2 {
		if _, err := f.Refresh(); err == nil || !strings.Contains(err.Error(), ":5: invalid character") ||
			f.Seq() != 4 {
			t.Errorf("after a bad line: %v, seq %d; want the error at line 5 and 4 events", err, f.Seq())
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A new writer rewrites the file (dropping the bad line): read whole.
	s, err = Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	appendKinds(s, CellCompleted)
	if changed, err := f.Refresh(); err != nil || !changed || f.Seq() != 4 {
		t.Fatalf("after a new writer: changed %v, %v, seq %d; want 4", changed, err, f.Seq())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Refresh(); f.Dir().Beside != "" {
		t.Errorf("after the writer closed: Beside %q", f.Dir().Beside)
	}

	// A writer never waits for a follower, which holds nothing.
	start := time.Now()
	s, err = Open(dir, "test")
	if err != nil || time.Since(start) > readerWait/10 {
		t.Fatalf("a writer beside a follower: %v after %s", err, time.Since(start))
	}
	s.Close()

	// Without a published file (an older ump's store): read through the
	// log, again when the marker says it grew.
	os.Remove(path)
	g := NewFollower(dir)
	if changed, err := g.Refresh(); err != nil || !changed || g.Seq() != 4 {
		t.Fatalf("a store without a published file: changed %v, %v, seq %d; want 4", changed, err, g.Seq())
	}
	if changed, err := g.Refresh(); err != nil || changed {
		t.Errorf("again, unchanged: changed %v, %v", changed, err)
	}
	s, err = Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	appendKinds(s, CellStarted)
	s.Close() // rewrites the marker
	os.Remove(path)
	if changed, err := g.Refresh(); err != nil || !changed || g.Seq() != 5 {
		t.Errorf("after another writer: changed %v, %v, seq %d; want 5", changed, err, g.Seq())
	}
}

// TestFollowerRereadsAFileRewrittenInPlace: the published file rewritten
// in place (same file, other first bytes, longer) is read whole again,
// not taken for an append.
func TestFollowerRereadsAFileRewrittenInPlace(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	for k, d := range []string{dir, other} {
		s, err := Open(d, "test")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 + 3*k {
			s.Log.Append(&Event{Kind: CellStarted, Cell: fmt.Sprintf("store %d", k)})
		}
		s.Close()
	}
	f := NewFollower(dir)
	if _, err := f.Refresh(); err != nil || f.Seq() != 2 {
		t.Fatalf("first refresh: %v, seq %d", err, f.Seq())
	}
	replacement, _ := os.ReadFile(filepath.Join(other, publishedName))
	if err := os.WriteFile(filepath.Join(dir, publishedName), replacement, 0o644); err != nil { // same inode
		t.Fatal(err)
	}
	if changed, err := f.Refresh(); err != nil || !changed || f.Seq() != 5 {
		t.Fatalf("after the rewrite: changed %v, %v, seq %d; want the new file's 5 events", changed, err, f.Seq())
	}
	if evs, _ := f.Dir().Events.All(); evs[0].Cell != "store 1" {
		t.Errorf("first event's cell %q; want the new file's", evs[0].Cell)
	}
}

// TestALongLineIsRefusedOnce: a published line longer than maxLine is
// refused where it starts (ErrDamaged, naming the line and its byte
// offset in the file), by OpenReader's read and by a Follower that had
// read the lines before it, which does not read it again while the file
// is the same (an edit inside the line, the file's size and time kept,
// leaves the error as it was), and reads the file again once it changed:
// repaired, the error is gone.
func TestALongLineIsRefusedOnce(t *testing.T) {
	dir, path := oneEvent(t)
	fl := NewFollower(dir)
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 1 {
		t.Fatalf("first look: %v, %d events; want 1", err, fl.Seq())
	}
	good := must(os.ReadFile(path))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := []byte(`{"seq":2,"kind":"` + strings.Repeat("x", maxLine) + "\"}\n")
	f.Write(long)
	f.Close()
	want := fmt.Sprintf(":2 (from byte %d): a line of more than %d bytes", len(good), maxLine)
	if _, err := readPublished(dir); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), want) {
		t.Errorf("readPublished: %v; want ErrDamaged saying %q", err, want)
	}
	if _, err := fl.Refresh(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second look: %v; want ErrDamaged saying %q", err, want)
	}
	// A newline early in the long line, in place, the file's time kept:
	// read again, it would be a line that is not JSON.
	fi := must(os.Stat(path))
	w, _ := os.OpenFile(path, os.O_WRONLY, 0)
	w.WriteAt([]byte("\n"), int64(len(good)+2*headBytes))
	w.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if _, err := fl.Refresh(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), want) {
		t.Errorf("third look: %v; want the same error, the line not read again", err)
	}
	// Repaired: the long line cut off, the next event appended.
	if err := os.Truncate(path, int64(len(good))); err != nil {
		t.Fatal(err)
	}
	next := append(must(json.Marshal(Event{Seq: 2, Kind: CellStarted, Cell: "c2"})), '\n')
	appendTo(t, path, next)
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 2 {
		t.Errorf("the file repaired: %v, %d events; want no error and 2 events", err, fl.Seq())
	}
}

// TestAnUnterminatedLineIsReadOnce: a last line without its newline (a
// writer killed mid-line, or still writing) is not an event yet; the
// follower reads it once and not again while the file is unchanged (an
// edit that would end it, the file's time kept, is not seen), and reads
// it when the file grows.
func TestAnUnterminatedLineIsReadOnce(t *testing.T) {
	dir, path := oneEvent(t)
	// past the head the follower compares, so that an edit of it is not a new file
	line := must(json.Marshal(Event{Seq: 2, Kind: CellStarted, Cell: strings.Repeat("c", 2*headBytes)}))
	appendTo(t, path, append(line, ' ')) // a space where its newline will be
	fl := NewFollower(dir)
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 1 {
		t.Fatalf("first look: %v, %d events; want 1, the unterminated line left", err, fl.Seq())
	}
	fi := must(os.Stat(path))
	w, _ := os.OpenFile(path, os.O_WRONLY, 0)
	w.WriteAt([]byte("\n"), fi.Size()-1)
	w.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 1 {
		t.Errorf("the file unchanged in size and time: %v, %d events; want the line not read again", err, fl.Seq())
	}
	appendTo(t, path, append(must(json.Marshal(Event{Seq: 3, Kind: CellStarted, Cell: "c3"})), '\n'))
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 3 {
		t.Errorf("the file grown: %v, %d events; want 3", err, fl.Seq())
	}
}

// TestADamagedFileRewrittenInPlaceIsReadAgain: a published file with a
// line that does not read, rewritten in place by a writer that opened the
// store (the same inode and size, its time unchanged, as on a file system
// that keeps seconds), is read again because its first bytes changed.
func TestADamagedFileRewrittenInPlaceIsReadAgain(t *testing.T) {
	dir, path := oneEvent(t)
	appendTo(t, path, []byte(strings.Repeat("not an event ", 20)+"\n"))
	fl := NewFollower(dir)
	if _, err := fl.Refresh(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a damaged line: %v; want ErrDamaged", err)
	}
	fi := must(os.Stat(path))
	first := append(must(json.Marshal(Event{Seq: 1, Kind: CellStarted, Cell: "d1"})), '\n')
	second := must(
		json.Marshal(Event{Seq: 2, Kind: CellStarted, Cell: "d"}),
	) // a cell name of 1 byte, then as many as fill the file
	cell := 1 + int(fi.Size()) - len(first) - len(second) - 1
	second = append(must(json.Marshal(Event{Seq: 2, Kind: CellStarted, Cell: strings.Repeat("d", cell)})), '\n')
	w, _ := os.OpenFile(path, os.O_WRONLY, 0)
	w.WriteAt(append(first, second...), 0)
	w.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if now := must(os.Stat(path)); now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatalf(
			"the rewrite changed the file's size or time: %d bytes at %v, was %d at %v",
			now.Size(),
			now.ModTime(),
			fi.Size(),
			fi.ModTime(),
		)
	}
	if _, err := fl.Refresh(); err != nil || fl.Seq() != 2 {
		t.Fatalf("rewritten in place: %v, %d events; want the new file's 2", err, fl.Seq())
	}
	if evs, _ := fl.Dir().Events.All(); evs[0].Cell != "d1" {
		t.Errorf("first event's cell %q; want the rewritten file's d1", evs[0].Cell)
	}
}

// oneEvent is a store holding one event (cell c1 started), and its
// published file.
func oneEvent(t *testing.T) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Log.Append(&Event{Kind: CellStarted, Cell: "c1"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir, filepath.Join(dir, publishedName)
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
