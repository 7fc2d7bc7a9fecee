package artifacts

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Memory keeps blobs and named objects in memory: the in-memory twin of
// S3, for unit tests.
type Memory struct {
	mu    sync.Mutex
	blobs map[string][]byte
	named map[string][]byte
}

var _ Named = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{blobs: map[string][]byte{}, named: map[string][]byte{}} }

func (s *Memory) String() string { return "memory" }

// PutNew stores a copy of data under name unless the name is taken.
func (s *Memory) PutNew(ctx context.Context, name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.named[name]; ok {
		return fmt.Errorf("%w: %s (in memory)", ErrExists, name)
	}
	s.named[name] = bytes.Clone(data)
	return nil
}

// GetNamed returns a copy of the object called name.
func (s *Memory) GetNamed(ctx context.Context, name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.named[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s (in memory)", ErrNotFound, name)
	}
	return bytes.Clone(data), nil
}

// List returns the sorted names under dir.
func (s *Memory) List(ctx context.Context, dir string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name := range s.named {
		if strings.HasPrefix(name, dir) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

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
