package eventlog

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPublishedEventsFollowTheLog checks what a reader beside the holder
// sees: every committed event in order, a half-written last line left
// out, and a copy that fell behind (a crash between a commit and its
// line) rewritten when the store is next opened.
func TestPublishedEventsFollowTheLog(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{CellStarted, StageStarted, StageCompleted} {
		if err := s.Log.Append(&Event{Kind: kind, Cell: "c1", Stage: "train", StageKey: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Log.Import([]Event{{Kind: CellCompleted, Cell: "c1"}, {Kind: CellStarted, Cell: "c2"}}); err != nil {
		t.Fatal(err)
	}
	reader, err := OpenReader(dir)
	if err != nil {
		t.Fatalf("OpenReader beside the holder: %v", err)
	}
	if reader.Log != nil || reader.Beside == "" {
		t.Fatalf("OpenReader beside the holder opened the log itself (beside %q)", reader.Beside)
	}
	same := func(what string, got, want []Event) {
		t.Helper()
		seqs := func(evs []Event) (out []uint64) {
			for _, ev := range evs {
				out = append(out, ev.Seq)
			}
			return out
		}
		if !slices.Equal(seqs(got), seqs(want)) {
			t.Errorf("%s: published %v, log %v", what, seqs(got), seqs(want))
		}
	}
	for _, q := range []struct {
		name string
		of   func(Reader) ([]Event, error)
	}{
		{"all", Reader.All},
		{"cell c1", func(e Reader) ([]Event, error) { return e.ByCell("c1") }},
		{"kind CellStarted", func(e Reader) ([]Event, error) { return e.ByKind(CellStarted) }},
		{"stage k", func(e Reader) ([]Event, error) { return e.ByStage("k") }},
	} {
		got, err1 := q.of(reader.Events)
		want, err2 := q.of(s.Log)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		same(q.name, got, want)
	}
	path := filepath.Join(dir, publishedName)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":6,"kind":"Cell`)
	f.Close()
	if pub, err := readPublished(dir); err != nil || len(pub.evs) != 5 {
		t.Errorf("with a half-written last line: %v, %v; want the 5 whole events", pub, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A copy that stopped short is rewritten by the next holder.
	os.WriteFile(path, []byte("not json\n"), 0o644)
	if _, err := readPublished(dir); err == nil {
		t.Fatal("a corrupt published line read without error")
	}
	s, err = Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pub, err := readPublished(dir)
	all, _ := s.Log.All()
	if err != nil {
		t.Fatal(err)
	}
	same("after reopening", pub.evs, all)

	// Without a published copy a reader is refused, naming the holder.
	os.Remove(path)
	if _, err := OpenReader(dir); !errors.Is(err, ErrBusy) {
		t.Errorf("OpenReader with nothing published: %v; want ErrBusy", err)
	}
}

// TestWriterWaitsForAReader: a run that starts while a reading command
// holds the store (no run did, so it opened the log itself) waits for it
// instead of being refused; a second writer is refused at once.
func TestWriterWaitsForAReader(t *testing.T) {
	dir := t.TempDir()
	if s, err := Open(dir, "ump run"); err != nil {
		t.Fatal(err)
	} else {
		s.Close()
	}
	reader, err := OpenReader(dir)
	if err != nil || reader.Log == nil {
		t.Fatalf("OpenReader of a free store: %v (store %v)", err, reader)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- time.Now()
		reader.Close()
	}()
	writer, err := Open(dir, "ump run")
	if err != nil {
		t.Fatalf("a writer beside a reader: %v; want it to wait for the reader", err)
	}
	defer writer.Close()
	if at := <-released; time.Now().Before(at) {
		t.Error("the writer opened the store before the reader released it")
	}
	start := time.Now()
	if _, err := Open(dir, "ump run"); !errors.Is(err, ErrBusy) || time.Since(start) > time.Second {
		t.Errorf("a second writer: %v after %s; want ErrBusy at once", err, time.Since(start))
	}
}
