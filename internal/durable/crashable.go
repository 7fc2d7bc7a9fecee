package durable

import (
	"path/filepath"
	"sync"
)

// Crashable is the operating system's file system (it writes real files)
// that also keeps what a power loss would leave of the files written
// through it: a file's content as of its last Sync, under the names its
// directory had at its last SyncDir. For tests.
type Crashable struct {
	mu      sync.Mutex
	names   map[string]*node            // every name, as it is now
	pending map[string]map[string]*node // per directory: names changed since its last SyncDir (nil: removed)
	durable map[string]*node            // the names a power loss keeps
}

// node is one file: its content now and as last synced.
type node struct{ data, synced []byte }

// NewCrashable returns a Crashable that has seen no writes.
func NewCrashable() *Crashable {
	return &Crashable{names: map[string]*node{}, pending: map[string]map[string]*node{}, durable: map[string]*node{}}
}

// AfterPowerLoss returns what a power loss now would leave at path, and
// whether anything would be there.
func (c *Crashable) AfterPowerLoss(path string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.durable[path]
	if !ok {
		return nil, false
	}
	return n.synced, true
}

func (c *Crashable) setName(path string, n *node) {
	dir := filepath.Dir(path)
	if c.pending[dir] == nil {
		c.pending[dir] = map[string]*node{}
	}
	c.pending[dir][path] = n
	if n == nil {
		delete(c.names, path)
	} else {
		c.names[path] = n
	}
}

func (c *Crashable) CreateTemp(dir, pattern string) (File, error) {
	f, err := OS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := &node{}
	c.setName(f.Name(), n)
	return &crashFile{File: f, c: c, n: n}, nil
}

func (c *Crashable) Rename(from, to string) error {
	if err := OS.Rename(from, to); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.names[from]
	if n == nil { // written by someone else: its content is durable as far as we know
		n = &node{}
	}
	c.setName(from, nil)
	c.setName(to, n)
	return nil
}

func (c *Crashable) Remove(name string) error {
	if err := OS.Remove(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setName(name, nil)
	return nil
}

func (c *Crashable) SyncDir(dir string) error {
	if err := OS.SyncDir(dir); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for path, n := range c.pending[dir] {
		if n == nil {
			delete(c.durable, path)
		} else {
			c.durable[path] = n
		}
	}
	delete(c.pending, dir)
	return nil
}

type crashFile struct {
	File
	c *Crashable
	n *node
}

func (f *crashFile) Write(p []byte) (int, error) {
	k, err := f.File.Write(p)
	f.c.mu.Lock()
	f.n.data = append(f.n.data, p[:k]...)
	f.c.mu.Unlock()
	return k, err
}

func (f *crashFile) Sync() error {
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.c.mu.Lock()
	f.n.synced = append([]byte(nil), f.n.data...)
	f.c.mu.Unlock()
	return nil
}
