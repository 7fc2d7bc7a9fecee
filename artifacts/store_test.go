package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ump-lab/ump/internal/durable"
)

// storeUnderTest is one implementation plus a way to damage a stored blob.
type storeUnderTest struct {
	store   Store
	corrupt func(t *testing.T, ref Ref)
}

// runConformance checks the Store contract; every implementation runs it.
func runConformance(t *testing.T, open func(t *testing.T) storeUnderTest) {
	ctx := context.Background()
	t.Run("put get", func(t *testing.T) {
		s := open(t).store
		data := []byte("hello, blobs")
		ref, err := s.Put(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		if ref != RefOf(data) {
			t.Fatalf("Put returned %v, want %v", ref, RefOf(data))
		}
		got, err := s.Get(ctx, ref)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get = %q, %v; want %q", got, err, data)
		}
		again, err := s.Put(ctx, data)
		if err != nil || again != ref {
			t.Fatalf("second Put = %v, %v; want %v", again, err, ref)
		}
	})
	t.Run("empty blob", func(t *testing.T) {
		s := open(t).store
		ref, err := s.Put(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, ref)
		if err != nil || len(got) != 0 {
			t.Fatalf("Get(empty) = %q, %v", got, err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		s := open(t).store
		_, err := s.Get(ctx, RefOf([]byte("never stored")))
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a missing blob: %v, want ErrNotFound", err)
		}
	})
	t.Run("corrupt detected and replaced", func(t *testing.T) {
		u := open(t)
		data := bytes.Repeat([]byte("checkpoint "), 1000)
		ref, err := u.store.Put(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		u.corrupt(t, ref)
		if _, err := u.store.Get(ctx, ref); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get of a corrupt blob: %v, want ErrCorrupt", err)
		}
		if _, err := u.store.Put(ctx, data); err != nil {
			t.Fatal(err)
		}
		if got, err := u.store.Get(ctx, ref); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get after re-Put: %v", err)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		s := open(t).store
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				data := []byte(fmt.Sprintf("blob %d", i%8))
				ref, err := s.Put(ctx, data)
				if err == nil {
					var got []byte
					got, err = s.Get(ctx, ref)
					if err == nil && !bytes.Equal(got, data) {
						err = fmt.Errorf("got %q want %q", got, data)
					}
				}
				errs <- err
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("malformed digest", func(t *testing.T) {
		s := open(t).store
		if _, err := s.Get(ctx, Ref{Digest: "md5:abc"}); err == nil {
			t.Fatal("Get accepted a malformed digest")
		}
	})
}

func TestLocalConformance(t *testing.T) {
	runConformance(t, func(t *testing.T) storeUnderTest {
		s, err := NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return storeUnderTest{store: s, corrupt: func(t *testing.T, ref Ref) {
			p, _ := s.path(ref)
			if err := os.WriteFile(p, []byte("garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
		}}
	})
}

func TestMemoryConformance(t *testing.T) {
	runConformance(t, func(t *testing.T) storeUnderTest {
		s := NewMemory()
		return storeUnderTest{store: s, corrupt: func(t *testing.T, ref Ref) {
			s.mu.Lock()
			s.blobs[ref.Digest][0] ^= 0xff
			s.mu.Unlock()
		}}
	})
}

func TestLocalRemoveTemp(t *testing.T) {
	dir := t.TempDir()
	s, _ := NewLocal(dir)
	ref, _ := s.Put(context.Background(), []byte("kept"))
	leftover := filepath.Join(dir, "sha256", "ab", durable.TempPrefix+"123")
	os.MkdirAll(filepath.Dir(leftover), 0o755)
	os.WriteFile(leftover, []byte("half"), 0o644)
	if err := s.RemoveTemp(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Error("temporary file survived RemoveTemp")
	}
	if _, err := s.Get(context.Background(), ref); err != nil {
		t.Errorf("RemoveTemp damaged a blob: %v", err)
	}
}

// TestLocalPutSurvivesAPowerLoss writes blobs through a file system that
// keeps what a power loss would (durable.Crashable): every blob Put has
// returned must be there, whole, afterwards — which takes syncing the
// file and its directory.
func TestLocalPutSurvivesAPowerLoss(t *testing.T) {
	crash := durable.NewCrashable()
	s := &Local{dir: t.TempDir(), fs: crash}
	for k := range 3 {
		data := []byte(fmt.Sprintf("blob %d", k))
		ref, err := s.Put(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := s.path(ref)
		if got, ok := crash.AfterPowerLoss(p); !ok || !bytes.Equal(got, data) {
			t.Errorf("blob %d after a power loss: present %v, %q; want %q", k, ok, got, data)
		}
	}
}

// runNamedConformance checks the Named contract's named objects; S3 and
// its in-memory twin run it.
func runNamedConformance(t *testing.T, open func(t *testing.T) Named) {
	ctx := context.Background()
	t.Run("create only", func(t *testing.T) {
		s := open(t)
		if _, err := s.GetNamed(ctx, "cells/00001/commit.json"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetNamed of a missing name: %v, want ErrNotFound", err)
		}
		if err := s.PutNew(ctx, "cells/00001/commit.json", []byte("first")); err != nil {
			t.Fatal(err)
		}
		if err := s.PutNew(ctx, "cells/00001/commit.json", []byte("second")); !errors.Is(err, ErrExists) {
			t.Errorf("second PutNew: %v, want ErrExists", err)
		}
		if got, err := s.GetNamed(ctx, "cells/00001/commit.json"); err != nil || string(got) != "first" {
			t.Errorf("after a refused PutNew: %q %v; want the first object", got, err)
		}
	})
	t.Run("racing creators", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.PutNew(ctx, "race", []byte(fmt.Sprintf("writer %d", i)))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Errorf("writers %d and %d both created the name", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, ErrExists):
				t.Errorf("writer %d: %v", i, err)
			}
		}
		if got, _ := s.GetNamed(ctx, "race"); won < 0 || string(got) != fmt.Sprintf("writer %d", won) {
			t.Errorf("the object holds %q; the winner was writer %d", got, won)
		}
	})
	t.Run("list", func(t *testing.T) {
		s := open(t)
		for _, name := range []string{"m/h/cells/00002/commit.json", "m/h/cells/00001/attempts/a/000001.jsonl",
			"m/h/registration.json", "m/other"} {
			if err := s.PutNew(ctx, name, []byte(name)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.List(ctx, "m/h/cells/")
		want := []string{"m/h/cells/00001/attempts/a/000001.jsonl", "m/h/cells/00002/commit.json"}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("List = %v, %v; want %v", got, err, want)
		}
	})
}

func TestMemoryNamedConformance(t *testing.T) {
	runNamedConformance(t, func(t *testing.T) Named { return NewMemory() })
}
