package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/pipeline"
)

// indexName is where `ump push` put a manifest's events before cells
// were committed one by one (Remote): JSON lines in sequence order. Pull
// still reads it.
func indexName(hash string) string { return "manifests/" + hash + ".events.jsonl" }

// TransferStats counts what a push or pull moved.
type TransferStats struct {
	Blobs, Present, Events int
	Replaced               int // damaged remote copies a push uploaded again
	Committed, Already     int // cells a push committed, and found committed with the same outputs
}

// Push copies a manifest from the store to S3 as the runs of other
// machines share it (Remote): its blobs (skipping those already there
// whole, replacing damaged copies), its registration, a commit of every
// finished cell and the events of the unfinished ones, from which another
// machine resumes. Pull with the hash alone then reproduces the store's
// view of the manifest's finished cells.
func (remote *Remote) Push(
	ctx context.Context,
	s *pipeline.Store,
	hash string,
	progress io.Writer,
) (TransferStats, error) {
	var st TransferStats
	evs, err := s.Events.ByManifest(hash)
	if err != nil {
		return st, err
	}
	evs = leaveImported(evs, progress)
	if err := remote.pushBlobs(ctx, s, pipeline.Referenced(evs), &st, progress); err != nil {
		return st, err
	}
	var regEv *eventlog.Event
	byCell := map[string][]eventlog.Event{}
	for i := range evs {
		if evs[i].Kind == eventlog.ManifestRegistered {
			regEv = &evs[i]
		} else {
			byCell[evs[i].Cell] = append(byCell[evs[i].Cell], evs[i])
		}
	}
	if regEv == nil {
		return st, fmt.Errorf("manifest %s has no registration in store %s", hash, s.Path)
	}
	reg, err := state.RegistrationOf(regEv)
	if err != nil {
		return st, err
	}
	inputs := make([]string, len(reg.CellKeys))
	for i, key := range reg.CellKeys {
		if inputs[i] = (&state.CellView{Events: byCell[key]}).Fingerprint()["inputs"]; inputs[i] == "" {
			inputs[i] = "(not run on the pushing machine)"
		}
	}
	if err := remote.Pin(ctx, regEv, &reg, inputs); err != nil {
		return st, err
	}
	for i, key := range reg.CellKeys {
		if ctx.Err() != nil {
			return st, pipeline.ErrInterrupted
		}
		if err := remote.pushCell(ctx, hash, i, key, byCell[key], &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// leaveImported leaves out the events of the cells imported from results
// directories (ump import), saying so: their checkpoints stayed behind,
// and a commit would sign with this machine's key what another computed.
func leaveImported(evs []eventlog.Event, progress io.Writer) []eventlog.Event {
	imported := map[string]bool{}
	for i := range evs {
		if evs[i].Kind != eventlog.CellImported {
			continue
		}
		p, err := eventlog.PayloadOf[eventlog.Provenance](&evs[i])
		if err == nil && p.TablesOnly && !imported[evs[i].Cell] {
			imported[evs[i].Cell] = true
			fmt.Fprintf(progress, "cell %.12s: imported from %s, not pushed "+
				"(push it from the store that computed it)\n",
				evs[i].Cell, display.Terminal(p.From))
		}
	}
	return slices.DeleteFunc(evs, func(ev eventlog.Event) bool { return imported[ev.Cell] })
}

// pushBlobs copies the blobs the store's events name to the bucket. What
// is there is read back: a copy of the right size with the wrong bytes is
// replaced, not trusted.
func (remote *Remote) pushBlobs(
	ctx context.Context,
	s *pipeline.Store,
	refs []artifacts.Ref,
	st *TransferStats,
	progress io.Writer,
) error {
	dst := remote.Bucket
	for i, ref := range refs {
		if ctx.Err() != nil {
			return pipeline.ErrInterrupted
		}
		if _, err := dst.Get(ctx, ref); err == nil {
			st.Present++
			continue
		} else if !errors.Is(err, artifacts.ErrNotFound) && !errors.Is(err, artifacts.ErrCorrupt) {
			return err
		} else if errors.Is(err, artifacts.ErrCorrupt) {
			st.Replaced++
		}
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return fmt.Errorf("blob %d of %d: %w", i+1, len(refs), err)
		}
		if _, err := dst.Put(ctx, data); err != nil {
			return err
		}
		st.Blobs++
		fmt.Fprintf(progress, "pushed %d/%d %s\n", i+1, len(refs), ref)
	}
	return nil
}

// pushCell puts cell i's events (key) on S3: a commit of a finished cell,
// else its progress.
func (remote *Remote) pushCell(
	ctx context.Context,
	hash string,
	i int,
	key string,
	cellEvs []eventlog.Event,
	st *TransferStats,
) error {
	if len(cellEvs) == 0 {
		return nil
	}
	view, err := state.FoldCell(key, cellEvs)
	if err != nil {
		return err
	}
	st.Events += len(cellEvs)
	if view.Status != eventlog.Completed && view.Status != eventlog.Diverged {
		return remote.Progress(ctx, hash, i, cellEvs)
	}
	c, err := remote.Commit(ctx, hash, i, key, view.Status, cellEvs)
	if err != nil {
		return err
	}
	if c.Attempt == remote.Attempt {
		st.Committed++
	} else {
		st.Already++
	}
	return nil
}

// Pull copies a manifest's committed cells from S3 into the store: it
// reads the pinned registration and the committed cells' events in plan
// order (or the events an older ump pushed as one file), keeps them only
// if they are the manifest's own (pipeline.CheckPulled), copies their blobs into
// the store's blobs, then appends the events the store lacks (kept with
// their original times) in chunks, the registration last: a pull
// interrupted anywhere leaves the store consistent, shows the manifest
// only once it is whole, can be repeated, and gives the same store
// whichever machine finished first. stgs are the stages whose keys the
// cells' events must follow; data is where the data sets are, for cells
// whose events do not record their inputs.
func (remote *Remote) Pull(
	ctx context.Context,
	s *pipeline.Store,
	hash string,
	stgs []stages.Stage,
	data *datasets.Library,
	progress io.Writer,
) (TransferStats, error) {
	var st TransferStats
	src := remote.Bucket
	name := "manifests/" + hash + "/"
	evs, commits, ok, err := remote.remoteEvents(
		ctx,
		hash,
		func(format string, a ...any) { fmt.Fprintf(progress, format, a...) },
	)
	if err != nil {
		return st, err
	}
	if !ok {
		name = indexName(hash)
		raw, err := src.GetNamed(ctx, name)
		if errors.Is(err, artifacts.ErrNotFound) {
			return st, fmt.Errorf(
				"manifest %s is not on %s (give the full 64-digit hash; `ump push HASH`, `ump run --artifacts` or "+
					"`ump worker` put it there): %w",
				hash,
				src,
				err,
			)
		}
		if err != nil {
			return st, err
		}
		if err := remote.Trust.Verify(name+" (pushed by an ump from before signing)", "", nil, ""); err != nil {
			return st, fmt.Errorf("%w: %w", ErrRejected, err)
		}
		if evs, err = decodeEvents(raw, name); err != nil {
			return st, err
		}
		for _, key := range slices.Sorted(maps.Keys(pipeline.CellsOf(evs))) {
			commits = append(commits, &Commit{Key: key, Attempt: "(pushed as one file)"})
		}
	}
	if err := pipeline.CheckPulled(hash, evs, stgs, data); err != nil {
		return st, fmt.Errorf("%w: %s: %v; nothing was imported", ErrRejected, name, err)
	}
	refs := pipeline.Referenced(evs)
	var added []artifacts.Ref
	for i, ref := range refs {
		if _, err := s.Blobs.Get(ctx, ref); err == nil && ctx.Err() == nil {
			st.Present++
			continue
		}
		if err := pullBlob(ctx, s, src, ref); err != nil {
			if ctx.Err() != nil {
				err = pipeline.ErrInterrupted
			} else {
				err = fmt.Errorf("blob %d of %d: %w", i+1, len(refs), err)
			}
			return st, errors.Join(err, removeLocal(s, added)) // nothing imported: the blobs pulled so far go too
		}
		added = append(added, ref)
		st.Blobs++
		fmt.Fprintf(progress, "pulled %d/%d %s\n", i+1, len(refs), ref)
	}
	have, err := s.Log.ByManifest(hash)
	if err != nil {
		return st, err
	}
	var cells, regs []eventlog.Event
	for _, ev := range evs {
		if ev.Kind == eventlog.ManifestRegistered {
			regs = append(regs, ev)
		} else {
			cells = append(cells, ev)
		}
	}
	byCell := pipeline.CellsOf(cells)
	for _, c := range commits {
		cells = append(cells, remote.imported(hash, c, have, byCell[c.Key])...)
	}
	st.Events, err = pipeline.ImportAbsent(ctx, s.Log, have, append(cells, regs...))
	return st, err
}

// pullBlob copies one blob from src into the store.
func pullBlob(ctx context.Context, s *pipeline.Store, src artifacts.Store, ref artifacts.Ref) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	blob, err := src.Get(ctx, ref)
	if err != nil {
		return err
	}
	_, err = s.Blobs.Put(ctx, blob)
	return err
}

// removeLocal removes blobs from the local store (what a failed pull
// added, which no event refers to).
func removeLocal(s *pipeline.Store, refs []artifacts.Ref) error {
	local, ok := s.Blobs.(*artifacts.Local)
	if !ok {
		return nil
	}
	for _, ref := range refs {
		if err := local.Remove(ref); err != nil {
			return err
		}
	}
	return nil
}
