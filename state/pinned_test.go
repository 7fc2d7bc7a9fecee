package state

import (
	"slices"
	"testing"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// TestReusedCountsOnlyCellsWithResultsOfOtherManifests: a cell is reused
// when it has events and none is this manifest's; a cell with no events
// (not run) is not.
func TestReusedCountsOnlyCellsWithResultsOfOtherManifests(t *testing.T) {
	r := &Report{Registration: eventlog.Registration{Plan: manifests.Plan{Hash: "h"}}, Cells: []*CellView{
		{},
		{Events: []eventlog.Event{{Manifest: "other"}}},
		{Events: []eventlog.Event{{Manifest: "other"}, {Manifest: "h"}}},
	}}
	if got := r.Reused(); got != 1 {
		t.Errorf("Reused() = %d, want 1 (only the cell another manifest computed)", got)
	}
}

// TestOtherResultsTakesTheNewestRegistration: of two earlier
// registrations of a manifest whose keys for a cell both have results,
// the newer one's key is the one OtherResults gives, with its engine.
func TestOtherResultsTakesTheNewestRegistration(t *testing.T) {
	log := eventlog.NewMemory()
	add := func(ev *eventlog.Event) {
		t.Helper()
		if err := log.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	register := func(key string) {
		ev := eventlog.New(eventlog.ManifestRegistered, eventlog.Registration{Plan: manifests.Plan{Hash: "h"}, CellKeys: []string{key}})
		ev.Manifest = "h"
		add(ev)
	}
	finish := func(key, engine string) {
		started := eventlog.New(eventlog.CellStarted, map[string]string{"engine": engine})
		done := eventlog.New(eventlog.CellCompleted, eventlog.CellOutcome{Status: eventlog.Completed})
		for _, ev := range []*eventlog.Event{started, done} {
			ev.Manifest, ev.Cell = "h", key
			add(ev)
		}
	}
	register("old")
	finish("old", "v1")
	register("newer")
	finish("newer", "v2")
	register("now")
	other, engines, err := Source{Events: log}.OtherResults("h", []string{"now"})
	if err != nil {
		t.Fatal(err)
	}
	if other[0] != "newer" || !slices.Equal(engines, []string{"v2"}) {
		t.Errorf("OtherResults: %v, engines %v; want the newer registration's key and engine v2", other, engines)
	}
}
