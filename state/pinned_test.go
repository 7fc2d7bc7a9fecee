package state

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/record"
)

// TestReusedCountsOnlyCellsWithResultsOfOtherManifests: a cell is reused
// when it has events and none is this manifest's; a cell with no events
// (not run) is not.
func TestReusedCountsOnlyCellsWithResultsOfOtherManifests(t *testing.T) {
	r := &Report{Registration: Registration{Plan: manifests.Plan{Hash: "h"}}, Cells: []*CellView{
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
		ev := (&Registration{Plan: manifests.Plan{Hash: "h"}, CellKeys: []string{key}}).Event()
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

// TestSecondsAreTheCurrentKeys: a stage's per-round seconds are those
// reported under its current key: a report of another key (a stale
// attempt) is not taken, and a restart under a new key drops the old
// key's rounds; a resumed run's repeat of a round keeps the latest.
func TestSecondsAreTheCurrentKeys(t *testing.T) {
	var evs []eventlog.Event
	at := func(kind, key string, round int, seconds float64) {
		var ev *eventlog.Event
		if kind == eventlog.RoundCompleted {
			ev = eventlog.New(kind, record.RoundReport{Round: round, Rounds: 3, Seconds: seconds})
			ev.Round = round
		} else {
			ev = eventlog.New[any](kind, nil)
		}
		ev.Cell, ev.Stage, ev.StageKey, ev.Seq = "c1", "train", key, uint64(len(evs)+1)
		evs = append(evs, *ev)
	}
	at(eventlog.StageStarted, "t1", 0, 0)
	at(eventlog.RoundCompleted, "t1", 1, 0.5)
	at(eventlog.RoundCompleted, "t1", 2, 0.6)
	at(eventlog.StageStarted, "t2", 0, 0)
	at(eventlog.RoundCompleted, "t1", 3, 9)
	at(eventlog.RoundCompleted, "t2", 1, 0.7)
	at(eventlog.RoundCompleted, "t2", 1, 0.8)
	v, err := FoldCell("c1", evs)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Stages[0].Seconds; !maps.Equal(got, map[int]float64{1: 0.8}) {
		t.Errorf("seconds %v, want only t2's round 1, its latest report (0.8)", got)
	}
}

// TestSpanCountsOnlyTheManifestsOwnEvents: when a manifest ran is the
// span of its own events; a shared cell's events of another manifest,
// earlier or later, are not its, nor is the store's record of a pull that
// imported the cell days later.
func TestSpanCountsOnlyTheManifestsOwnEvents(t *testing.T) {
	at := func(manifest string, hour int) eventlog.Event {
		return eventlog.Event{
			Kind:     eventlog.RoundCompleted,
			Manifest: manifest,
			Time:     time.Date(2026, 11, 28, hour, 0, 0, 0, time.UTC),
		}
	}
	pulled := at("h", 3)
	pulled.Kind, pulled.Time = eventlog.CellImported, pulled.Time.AddDate(0, 0, 5)
	r := &Report{Registration: Registration{Plan: manifests.Plan{Hash: "h"}}, Cells: []*CellView{
		{Events: []eventlog.Event{at("other", 1), at("h", 3), at("h", 5), at("other", 9), pulled}},
	}}
	if first, last := r.Span(); first.Hour() != 3 || last.Hour() != 5 || last.Day() != 28 {
		t.Errorf("span %v to %v, want 03:00 to 05:00 on the 28th (its own run's events)", first, last)
	}
}

// TestForgetThenRegisterAgain: a manifest forgotten is listed again once
// it is registered after the forget; one forgotten after its latest
// registration is not.
func TestForgetThenRegisterAgain(t *testing.T) {
	log := eventlog.NewMemory()
	add := func(ev *eventlog.Event, manifest string) {
		t.Helper()
		ev.Manifest = manifest
		if err := log.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	register := func(hash string) {
		add((&Registration{Plan: manifests.Plan{Hash: hash}}).Event(), hash)
	}
	forget := func(hash string) { add(eventlog.New[any](eventlog.ManifestForgotten, nil), hash) }
	register("a")
	register("b")
	forget("a")
	forget("b")
	register("a")
	_, forgotten, err := Source{Events: log}.RegistrationEvents()
	if err != nil {
		t.Fatal(err)
	}
	if forgotten["a"] || !forgotten["b"] {
		t.Errorf("forgotten %v; want b alone (a was registered again after its forget)", forgotten)
	}
}
