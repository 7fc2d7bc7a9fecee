package eventlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxLine is the longest line of the published file a reader takes: far
// beyond any event ump writes (a registration of thousands of cells is a
// few MB; results directories take registrations up to this size too).
// A longer line is damage, refused where it starts, never read whole.
const maxLine = 64 << 20

// readPublished reads the events the store's holder has published so far;
// a last line still being written is left for the next read.
func readPublished(dir string) (*Memory, error) {
	path := filepath.Join(dir, publishedName)
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	p := NewMemory()
	if _, err := p.read(path, file, 0); err != nil {
		return nil, err
	}
	return p, nil
}

// read appends the whole lines of r, which continue the published file at
// path from byte offset after the events already read, and returns how
// many bytes they took: a last line still being written is left for the
// next read. It stops at a line that is not the next event, or longer
// than maxLine.
func (p *Memory) read(path string, r io.Reader, offset int64) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	br := bufio.NewReaderSize(r, 64<<10)
	var used int64
	for {
		n := len(p.evs) + 1
		line, err := readLine(br)
		switch {
		case errors.Is(err, errLongLine):
			return used, fmt.Errorf(
				"%w: %s:%d (from byte %d): a line of more than %d bytes, which no event of ump's is; nothing after "+
					"it is read",
				ErrDamaged,
				path,
				n,
				offset+used,
				maxLine,
			)
		case err != nil: // the end, maybe within a line still being written
			return used, nil
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return used, fmt.Errorf("%w: %s:%d: %w", ErrDamaged, path, n, err)
		}
		if ev.Seq != uint64(n) {
			return used, fmt.Errorf(
				"%w: %s:%d: event %d out of sequence; the store's holder rewrites the file when it opens the store",
				ErrDamaged,
				path,
				n,
				ev.Seq,
			)
		}
		p.add(ev)
		used += int64(len(line))
	}
}

var errLongLine = errors.New("line too long")

// readLine reads a line ending in a newline, of up to maxLine bytes;
// io.EOF (with what it read) where the reader ends first.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > maxLine {
			return nil, errLongLine
		}
		line = append(line, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
