package eventlog

import (
	"sync"
	"time"
)

// Reader is the queries every reader of the log uses, each answering in
// sequence order. The Badger log answers them for the process that holds
// the store; Memory answers them beside a running writer (the published
// events) and in tests.
type Reader interface {
	All() ([]Event, error)
	ByKind(kind string) ([]Event, error)
	ByManifest(hash string) ([]Event, error)
	ByCell(key string) ([]Event, error)
	ByStage(key string) ([]Event, error)
}

// Log is what a run writes to: the queries, and appends.
//
// Contract: Append gives the event the next sequence number and the time;
// Import appends events from another store keeping their times, all of
// them or none; both are safe for concurrent use, and an event is durable
// when they return (for Badger: synced); events are never rewritten or
// deleted, so a reader's answer is a prefix of every later answer.
type Log interface {
	Reader
	Append(ev *Event) error
	Import(evs []Event) error
}

var (
	_ Log = (*Badger)(nil)
	_ Log = (*Memory)(nil)
)

// Memory is a log held in memory, indexed as the Badger log is (by kind,
// manifest, cell and stage key): the published events as read so far, and
// the Badger log's twin in tests. Nothing is durable.
type Memory struct {
	mu    sync.Mutex
	evs   []Event
	index map[string][]int // index prefix (indexes) -> positions in evs
}

// NewMemory is an empty log.
func NewMemory() *Memory { return &Memory{index: map[string][]int{}} }

// Append gives the event the next sequence number and the time.
func (m *Memory) Append(ev *Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ev.Time = time.Now().UTC()
	ev.Seq = uint64(len(m.evs)) + 1
	m.add(*ev)
	return nil
}

// Import appends events from another store, keeping their times.
func (m *Memory) Import(evs []Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range evs {
		ev.Seq = uint64(len(m.evs)) + 1
		m.add(ev)
	}
	return nil
}

// add appends an event and indexes it.
func (m *Memory) add(ev Event) {
	for _, ix := range indexes(&ev) {
		m.index[ix] = append(m.index[ix], len(m.evs))
	}
	m.evs = append(m.evs, ev)
}

func (m *Memory) filter(index string) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := m.index[index]
	out := make([]Event, len(at))
	for i, k := range at {
		out[i] = m.evs[k]
	}
	return out, nil
}

func (m *Memory) All() ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.evs[:len(m.evs):len(m.evs)], nil
}
func (m *Memory) ByKind(kind string) ([]Event, error) { return m.filter("ix/k/" + kind + "/") }
func (m *Memory) ByManifest(h string) ([]Event, error) {
	return m.filter("ix/m/" + h + "/")
}
func (m *Memory) ByCell(key string) ([]Event, error)  { return m.filter("ix/c/" + key + "/") }
func (m *Memory) ByStage(key string) ([]Event, error) { return m.filter("ix/s/" + key + "/") }
