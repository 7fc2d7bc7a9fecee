package pipeline

import (
	"maps"
	"slices"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
)

// TestSupersededKeepsTheTwoFurthestDistinctRounds: of a stage key's
// checkpoints, those before its two furthest distinct rounds are
// superseded, a round recorded twice (a resumed run repeating it) counting
// once; a superseded checkpoint whose blob a live event also names (here
// the stage's output) is kept.
func TestSupersededKeepsTheTwoFurthestDistinctRounds(t *testing.T) {
	checkpoint := func(key string, round int, digest string) eventlog.Event {
		return eventlog.Event{Kind: eventlog.RoundCompleted, StageKey: key, Round: round,
			Outputs: map[string]artifacts.Ref{eventlog.RoundCheckpoint: {Digest: digest}}}
	}
	twice := []eventlog.Event{checkpoint("t", 10, "c10"), checkpoint("t", 20, "c20"), checkpoint("t", 30, "c30"), checkpoint("t", 30, "c30"),
		checkpoint("u", 10, "u10")}
	if got := slices.Sorted(maps.Keys(superseded(twice))); !slices.Equal(got, []string{"c10"}) {
		t.Errorf("round 30 recorded twice: superseded %v, want [c10] (rounds 20 and 30 kept)", got)
	}
	shared := []eventlog.Event{checkpoint("t", 10, "c10"), checkpoint("t", 20, "c20"), checkpoint("t", 30, "c30"),
		{Kind: eventlog.StageCompleted, StageKey: "t", Outputs: map[string]artifacts.Ref{"final": {Digest: "c10"}}}}
	if got := superseded(shared); len(got) != 0 {
		t.Errorf("a superseded checkpoint whose blob a stage output names: superseded %v, want none", slices.Sorted(maps.Keys(got)))
	}
}
