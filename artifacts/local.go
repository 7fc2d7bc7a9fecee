package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ump-lab/ump/internal/durable"
)

// Local stores blobs as files under a directory: sha256/<2 hex>/<64 hex>.
type Local struct {
	dir string
	fs  durable.FS // how blobs are written: durable.OS, or a test's
}

var _ Store = (*Local)(nil)

// NewLocal returns a store rooted at dir, creating it if needed.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Local{dir: dir, fs: durable.OS}, nil
}

// ExistingLocal returns the store rooted at dir without creating
// anything: for readers, which must not write.
func ExistingLocal(dir string) *Local { return &Local{dir: dir, fs: durable.OS} }

func (s *Local) path(ref Ref) (string, error) {
	h, err := ref.hex()
	if err != nil {
		return "", err
	}
	return filepath.Join(s.dir, "sha256", h[:2], h), nil
}

// Put writes data durably (durable.WriteFile), leaving the disk at least
// Reserve bytes free (CheckFreeSpace).
func (s *Local) Put(ctx context.Context, data []byte) (Ref, error) {
	ref := RefOf(data)
	p, _ := s.path(ref)
	if old, err := os.ReadFile(p); err == nil && verify(ref, old, p) == nil {
		return ref, nil
	}
	if err := CheckFreeSpace(s.dir, int64(len(data))); err != nil {
		return Ref{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	if err := durable.WriteFile(s.fs, p, data); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	return ref, nil
}

// Reserve is the free space a store keeps on its disk: its event log
// (Badger) writes through memory-mapped files, and a page it cannot
// allocate on a full disk kills the process (SIGBUS) instead of failing a
// write; this much covers a memory table and the table it flushes to
// (the store's spare-space file covers the last flush, pipeline.holdSpare).
const Reserve = 48 << 20

// CheckFreeSpace returns an error wrapping syscall.ENOSPC when writing n more bytes
// on dir's disk would leave less than Reserve free.
func CheckFreeSpace(dir string, n int64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // the write itself will say what is wrong
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free-n < Reserve {
		return fmt.Errorf("%w: %s has %d MiB free; the store keeps %d MiB free for its event log and needs %d KiB more",
			syscall.ENOSPC, dir, free>>20, Reserve>>20, (n+1023)>>10)
	}
	return nil
}

// Get reads and verifies a blob.
func (s *Local) Get(ctx context.Context, ref Ref) ([]byte, error) {
	p, err := s.path(ref)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (expected at %s)", ErrNotFound, ref.Digest, p)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	if err := verify(ref, data, p); err != nil {
		return nil, err
	}
	return data, nil
}

// RemoveTemp deletes temporary files left by writers that were killed.
// Call it only while holding the store's exclusive lock.
func (s *Local) RemoveTemp() error {
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), durable.TempPrefix) {
			return os.Remove(p)
		}
		return nil
	})
}

// List returns every stored blob (digests from the file names, sizes from
// the files).
func (s *Local) List() ([]Ref, error) {
	var refs []Ref
	err := filepath.WalkDir(filepath.Join(s.dir, "sha256"), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), durable.TempPrefix) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		refs = append(refs, Ref{Digest: "sha256:" + d.Name(), Size: info.Size()})
		return nil
	})
	return refs, err
}

// Remove deletes a blob; removing an absent blob is not an error.
func (s *Local) Remove(ref Ref) error {
	p, err := s.path(ref)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifact store: %w", err)
	}
	return nil
}
