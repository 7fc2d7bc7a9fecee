package pipeline

import (
	"slices"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
)

// GCStats says what a collection found.
type GCStats struct {
	Kept, Removed           int
	KeptBytes, RemovedBytes int64
}

// GC removes the store's local blobs that no event of a listed manifest
// refers to: those no event names (a checkpoint superseded by a crash
// before its event, the outputs of a stage whose event was never
// written), and those only forgotten manifests (ump forget) use. Every
// blob an event of a manifest the store lists names, or an event of a
// cell such a manifest has (a cell it shares with a forgotten one) — the
// outputs of every completed stage and every recorded checkpoint — is
// kept. With dryRun nothing is removed. It first proves the log complete
// (Log.Check) and refuses a damaged one: a blob no readable event names
// may be named by an event it cannot read. The caller holds the store
// (Open), so no run is writing meanwhile.
func (s *Store) GC(dryRun bool) (GCStats, error) {
	var st GCStats
	if _, err := s.Log.Check(); err != nil {
		return st, err
	}
	evs, err := s.Log.All()
	if err != nil {
		return st, err
	}
	regs, forgotten, err := s.Source().RegistrationEvents()
	if err != nil {
		return st, err
	}
	listedCells := map[string]bool{} // every cell key any registration of a listed manifest gave
	for i := range regs {
		if forgotten[regs[i].Manifest] {
			continue
		}
		reg, err := state.RegistrationOf(&regs[i])
		if err != nil {
			return st, err
		}
		for _, key := range reg.CellKeys {
			listedCells[key] = true
		}
	}
	live := slices.DeleteFunc(
		evs,
		func(ev eventlog.Event) bool { return forgotten[ev.Manifest] && !listedCells[ev.Cell] },
	)
	keep := map[string]bool{}
	for _, ref := range Referenced(live) {
		keep[ref.Digest] = true
	}
	blobs, err := s.Local.List()
	if err != nil {
		return st, err
	}
	var drop []artifacts.Ref
	for _, ref := range blobs {
		if keep[ref.Digest] {
			st.Kept++
			st.KeptBytes += ref.Size
			continue
		}
		drop = append(drop, ref)
		st.Removed++
		st.RemovedBytes += ref.Size
	}
	if dryRun {
		return st, nil
	}
	for _, ref := range drop {
		if err := s.Local.Remove(ref); err != nil {
			return st, err
		}
	}
	return st, nil
}
