package artifacts

import (
	"context"
	"fmt"
	"sync"
)

// Memory keeps blobs in memory; for unit tests.
type Memory struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{blobs: map[string][]byte{}} }

// Put stores a copy of data.
func (s *Memory) Put(ctx context.Context, data []byte) (Ref, error) {
	ref := RefOf(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[ref.Digest] = append([]byte(nil), data...)
	return ref, nil
}

// Get returns a verified copy of a blob.
func (s *Memory) Get(ctx context.Context, ref Ref) ([]byte, error) {
	s.mu.Lock()
	data, ok := s.blobs[ref.Digest]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s (in memory)", ErrNotFound, ref.Digest)
	}
	if err := verify(ref, data, "memory"); err != nil {
		return nil, err
	}
	return append([]byte(nil), data...), nil
}
