package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

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
	p.mu.Lock()
	defer p.mu.Unlock()
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
