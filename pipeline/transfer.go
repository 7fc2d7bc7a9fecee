package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
)

// indexName is where `ump push` puts a manifest's events in S3: JSON lines
// in sequence order.
func indexName(hash string) string { return "manifests/" + hash + ".events.jsonl" }

// TransferStats counts what a push or pull moved.
type TransferStats struct {
	Blobs, Present, Events int
}

// referenced lists, sorted and once each, every blob an event refers to.
func referenced(evs []Event) []artifacts.Ref {
	seen := map[string]artifacts.Ref{}
	for _, ev := range evs {
		for _, ref := range ev.Outputs {
			seen[ref.Digest] = ref
		}
	}
	refs := make([]artifacts.Ref, 0, len(seen))
	for _, ref := range seen {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b artifacts.Ref) int { return strings.Compare(a.Digest, b.Digest) })
	return refs
}

// Push copies a manifest's blobs from the store's blobs to S3 (skipping
// those already there), then its events, so that Pull with the hash alone
// reproduces the store's view of the manifest.
func (s *Store) Push(ctx context.Context, hash string, dst *artifacts.S3, progress io.Writer) (TransferStats, error) {
	var st TransferStats
	evs, err := s.Log.ByManifest(hash)
	if err != nil {
		return st, err
	}
	refs := referenced(evs)
	for i, ref := range refs {
		if ctx.Err() != nil {
			return st, ErrInterrupted
		}
		if ok, err := dst.Has(ctx, ref); err != nil {
			return st, err
		} else if ok {
			st.Present++
			continue
		}
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return st, fmt.Errorf("blob %d of %d: %w", i+1, len(refs), err)
		}
		if _, err := dst.Put(ctx, data); err != nil {
			return st, err
		}
		st.Blobs++
		fmt.Fprintf(progress, "pushed %d/%d %s\n", i+1, len(refs), ref)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range evs {
		enc.Encode(&evs[i])
	}
	st.Events = len(evs)
	return st, dst.PutNamed(ctx, indexName(hash), buf.Bytes())
}

// Pull copies a pushed manifest into the store: its blobs into the
// store's blobs first, then the events it lacks (kept with their original
// times), in one transaction. A pull interrupted anywhere leaves the store
// consistent and can be repeated.
func (s *Store) Pull(ctx context.Context, hash string, src *artifacts.S3, progress io.Writer) (TransferStats, error) {
	var st TransferStats
	data, err := src.GetNamed(ctx, indexName(hash))
	if errors.Is(err, artifacts.ErrNotFound) {
		return st, fmt.Errorf("manifest %s was not pushed to %s (give the full 64-digit hash; `ump push HASH` uploads it): %w", hash, src, err)
	}
	if err != nil {
		return st, err
	}
	var evs []Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<30)
	for line := 1; sc.Scan(); line++ {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return st, fmt.Errorf("%s line %d: %w", indexName(hash), line, err)
		}
		evs = append(evs, ev)
	}
	refs := referenced(evs)
	for i, ref := range refs {
		if ctx.Err() != nil {
			return st, ErrInterrupted
		}
		if _, err := s.Blobs.Get(ctx, ref); err == nil {
			st.Present++
			continue
		}
		blob, err := src.Get(ctx, ref)
		if err != nil {
			return st, fmt.Errorf("blob %d of %d: %w", i+1, len(refs), err)
		}
		if _, err := s.Blobs.Put(ctx, blob); err != nil {
			return st, err
		}
		st.Blobs++
		fmt.Fprintf(progress, "pulled %d/%d %s\n", i+1, len(refs), ref)
	}
	have, err := s.Log.ByManifest(hash)
	if err != nil {
		return st, err
	}
	known := map[string]bool{}
	for _, ev := range have {
		known[identity(ev)] = true
	}
	var missing []Event
	for _, ev := range evs {
		if !known[identity(ev)] {
			missing = append(missing, ev)
		}
	}
	st.Events = len(missing)
	return st, s.Log.Import(missing)
}

// identity tells events apart across stores (sequence numbers differ).
func identity(ev Event) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%d", ev.Time.Format("2006-01-02T15:04:05.000000000"), ev.Kind, ev.Manifest, ev.Cell, ev.StageKey, ev.Round)
}
