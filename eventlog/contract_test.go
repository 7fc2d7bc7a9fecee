package eventlog

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLogContract runs the Log contract against the Badger log on disk
// and its in-memory twin: Append numbers events densely from 1 and stamps
// the time; Import keeps the times it is given; every query answers in
// sequence order with exactly the events of its index; concurrent appends
// lose none and number them densely.
func TestLogContract(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) Log{
		"badger": func(t *testing.T) Log { return openTestStore(t).Log },
		"memory": func(*testing.T) Log { return NewMemory() },
	} {
		t.Run(name, func(t *testing.T) {
			log := open(t)
			before := time.Now().UTC().Add(-time.Second)
			appended := []Event{
				{Kind: ManifestRegistered, Manifest: "m1"},
				{Kind: CellStarted, Manifest: "m1", Cell: "c1"},
				{Kind: StageStarted, Manifest: "m1", Cell: "c1", Stage: "train", StageKey: "s1"},
				{Kind: CellStarted, Manifest: "m2", Cell: "c2"},
			}
			for i := range appended {
				if err := log.Append(&appended[i]); err != nil {
					t.Fatal(err)
				}
				if appended[i].Seq != uint64(i+1) || appended[i].Time.Before(before) {
					t.Fatalf(
						"appended event %d: seq %d, time %v; want seq %d and the time of the append",
						i,
						appended[i].Seq,
						appended[i].Time,
						i+1,
					)
				}
			}
			then := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
			if err := log.Import([]Event{
				{Kind: StageCompleted, Manifest: "m1", Cell: "c1", Stage: "train", StageKey: "s1", Time: then},
				{Kind: CellCompleted, Manifest: "m1", Cell: "c1", Time: then},
			}); err != nil {
				t.Fatal(err)
			}
			all, err := log.All()
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 6 || all[4].Seq != 5 || all[5].Seq != 6 || !all[5].Time.Equal(then) {
				t.Fatalf(
					"after importing 2 events: %d events, the last %+v; want 6, imported as 5 and 6 with their own "+
						"time",
					len(all),
					all[len(all)-1],
				)
			}
			for _, q := range []struct {
				what string
				got  func() ([]Event, error)
				want []uint64
			}{
				{"kind CellStarted", func() ([]Event, error) { return log.ByKind(CellStarted) }, []uint64{2, 4}},
				{"manifest m1", func() ([]Event, error) { return log.ByManifest("m1") }, []uint64{1, 2, 3, 5, 6}},
				{"cell c1", func() ([]Event, error) { return log.ByCell("c1") }, []uint64{2, 3, 5, 6}},
				{"stage s1", func() ([]Event, error) { return log.ByStage("s1") }, []uint64{3, 5}},
				{"cell none", func() ([]Event, error) { return log.ByCell("none") }, nil},
			} {
				evs, err := q.got()
				if err != nil {
					t.Fatal(err)
				}
				var seqs []uint64
				for _, ev := range evs {
					seqs = append(seqs, ev.Seq)
				}
				if !slices.Equal(seqs, q.want) {
					t.Errorf("%s: events %v, want %v", q.what, seqs, q.want)
				}
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for k := range 10 {
						if err := log.Append(&Event{Kind: StageStarted, Cell: fmt.Sprintf("g%d-%d", g,
							k)}); err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			all, _ = log.All()
			for i, ev := range all {
				if ev.Seq != uint64(i+1) {
					t.Fatalf("after 80 concurrent appends: event %d has seq %d; want dense numbers", i+1, ev.Seq)
				}
			}
			if len(all) != 86 {
				t.Errorf("after 80 concurrent appends: %d events, want 86", len(all))
			}
		})
	}
}
