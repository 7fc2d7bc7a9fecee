package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// publishedName is the file, in the store directory, where the process
// holding the store publishes every committed event as one JSON line, in
// sequence order, for readers that cannot take the lock.
const publishedName = "events.jsonl"

// publisher appends committed events to the published file. It is a copy
// for readers, never the record: the holder rewrites it from the log when
// it opens the store, so a crash between a commit and its line costs
// nothing.
type publisher struct {
	path string
	f    *os.File // nil once a write failed: readers then find no file
}

// publish rewrites the published file from the log's events (through a
// temporary file and a rename, so readers see the old or the new whole)
// and opens it for appending.
func publish(dir string, evs []Event) (*publisher, error) {
	path := filepath.Join(dir, publishedName)
	tmp, err := os.CreateTemp(dir, publishedName+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("publishing events: %w", err)
	}
	tmp.Chmod(0o644) // readable like the store's other files, not CreateTemp's 0600
	w := bufio.NewWriter(tmp)
	for i := range evs {
		line, _ := json.Marshal(&evs[i])
		w.Write(append(line, '\n'))
	}
	err = w.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("publishing events to %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("publishing events: %w", err)
	}
	return &publisher{path: path, f: f}, nil
}

// append writes committed events in one write, so a reader sees whole
// lines or none of a batch's last. A failed write removes the file: a
// reader beside the writer is then told the store is busy instead of
// reading a copy that stopped short.
func (p *publisher) append(evs []*Event) {
	if p == nil || p.f == nil {
		return
	}
	var buf bytes.Buffer
	for _, ev := range evs {
		line, _ := json.Marshal(ev)
		buf.Write(append(line, '\n'))
	}
	if _, err := p.f.Write(buf.Bytes()); err != nil {
		p.f.Close()
		p.f = nil
		os.Remove(p.path)
	}
}

func (p *publisher) close() {
	if p != nil && p.f != nil {
		p.f.Close()
	}
}

// readPublished reads the events the store's holder has published so far;
// a last line still being written is left for the next read.
func readPublished(dir string) (*Memory, error) {
	path := filepath.Join(dir, publishedName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := NewMemory()
	if _, err := p.read(path, data); err != nil {
		return nil, err
	}
	return p, nil
}

// read appends the whole lines of data, which continue the published
// file at path after the events already read, and returns how many bytes
// they took: a last line still being written is left for the next read.
func (p *Memory) read(path string, data []byte) (int, error) {
	used := 0
	for {
		end := bytes.IndexByte(data[used:], '\n')
		if end < 0 {
			return used, nil
		}
		line := data[used : used+end+1]
		n := len(p.evs) + 1
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return used, fmt.Errorf("%w: %s:%d: %w", ErrDamaged, path, n, err)
		}
		if ev.Seq != uint64(n) {
			return used, fmt.Errorf("%w: %s:%d: event %d out of sequence; the store's holder rewrites the file when it opens the store", ErrDamaged, path, n, ev.Seq)
		}
		p.add(ev)
		used += end + 1
	}
}
