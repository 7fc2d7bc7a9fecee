package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/pipeline"
)

func TestGCRemovesOnlyUnreferencedBlobs(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 20").Replace(longManifest),
	)
	hash := hashOf(t, ump(t, store, "run", m))
	before := exportCSV(t, store, hash, "rounds")

	s, err := pipeline.Open(store, "test")
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := s.Local.Put(context.Background(), []byte("a checkpoint whose event was never written"))
	s.Close()
	if err != nil {
		t.Fatal(err)
	}

	dry := ump(t, store, "gc", "--dry-run")
	if dry.code != 0 || !strings.HasPrefix(dry.stdout, "would remove 1 unreferenced blobs") {
		t.Fatalf("gc --dry-run: %d %q", dry.code, dry.stdout)
	}
	s, err = pipeline.Open(store, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Local.Get(context.Background(), orphan); err != nil {
		t.Errorf("--dry-run removed the blob: %v", err)
	}
	s.Close()
	gc := ump(t, store, "gc")
	if gc.code != 0 || !strings.HasPrefix(gc.stdout, "removed 1 unreferenced blobs") {
		t.Fatalf("gc: %d %q", gc.code, gc.stdout)
	}
	if s, err = pipeline.Open(store, "test"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Local.Get(context.Background(), orphan)
	s.Close()
	if err == nil || !strings.Contains(err.Error(), artifacts.ErrNotFound.Error()) {
		t.Errorf("the orphan survived gc: %v", err)
	}
	// Everything the cells need is still there: a rerun is all cache hits
	// and the tables are unchanged.
	if r := ump(t, store, "run", m); !strings.Contains(r.stderr, "(2 fully cached)") {
		t.Errorf("rerun after gc recomputed:\n%s", r.stderr)
	}
	if after := exportCSV(t, store, hash, "rounds"); after != before {
		t.Error("the rounds export changed after gc")
	}
	if again := ump(t, store, "gc"); !strings.HasPrefix(again.stdout, "removed 0 unreferenced blobs") {
		t.Errorf("second gc: %q", again.stdout)
	}
}

// TestGCReclaimsWhatOnlyForgottenManifestsUse: after `ump forget`, gc
// removes the blobs only the forgotten manifest's cells name, and keeps
// those of a cell it shares with a listed manifest (which recorded no
// events of its own for it).
func TestGCReclaimsWhatOnlyForgottenManifestsUse(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	other := writeFile(t, "other.yaml", strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1))
	copied := writeFile(t, "copy.yaml", strings.Replace(smallManifest, "name: long", "name: copy", 1))
	first := hashOf(t, ump(t, store, "run", m))
	second := hashOf(t, ump(t, store, "run", other))
	same := hashOf(t, ump(t, store, "run", copied)) // every cell first's: no events of its own
	table := ump(t, store, "table", same).stdout
	for _, h := range []string{first, second} {
		if r := ump(t, store, "forget", h); r.code != 0 {
			t.Fatalf("forget: %d %s", r.code, r.stderr)
		}
	}
	gc := ump(t, store, "gc")
	if gc.code != 0 || strings.HasPrefix(gc.stdout, "removed 0 ") {
		t.Fatalf("gc after forgetting a manifest removed nothing: %d %q", gc.code, gc.stdout)
	}
	if r := ump(t, store, "table", same); r.code != 0 || r.stdout != table {
		t.Errorf(
			"the table of a manifest sharing the forgotten one's cells changed after gc: exit %d\n%s\nwas\n%s",
			r.code,
			r.stdout,
			table,
		)
	}
	if r := ump(t, store, "verify", same); r.code != 0 {
		t.Errorf("verify of the manifest sharing the forgotten one's cells after gc: exit %d\n%s", r.code, r.stdout)
	}
	if r := ump(t, store, "run", other); r.code != 0 ||
		strings.Contains(r.stderr, "fully cached)") && !strings.Contains(r.stderr, "(0 fully cached)") {
		t.Errorf(
			"the forgotten manifest's cells, run again after gc, were not recomputed: exit %d\n%s",
			r.code,
			r.stderr,
		)
	}
}
