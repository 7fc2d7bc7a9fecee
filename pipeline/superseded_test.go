package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
)

// TestSupersededKeepsTheTwoFurthestDistinctRounds: of a stage key's
// checkpoints, those before its two furthest distinct rounds are
// superseded, a round recorded twice (a resumed run repeating it) counting
// once, and runs that evaluate at other intervals each keeping their own;
// a superseded checkpoint whose blob a live event also names (here
// the stage's output) is kept.
func TestSupersededKeepsTheTwoFurthestDistinctRounds(t *testing.T) {
	checkpoint := func(key string, round int, digest string) eventlog.Event {
		return eventlog.Event{Kind: eventlog.RoundCompleted, StageKey: key, Round: round,
			Outputs: map[string]artifacts.Ref{eventlog.RoundCheckpoint: {Digest: digest}}}
	}
	twice := []eventlog.Event{
		checkpoint("t", 10, "c10"),
		checkpoint("t", 20, "c20"),
		checkpoint("t", 30, "c30"),
		checkpoint("t", 30, "c30"),
		checkpoint("u", 10, "u10"),
	}
	if got := slices.Sorted(maps.Keys(superseded(twice))); !slices.Equal(got, []string{"c10"}) {
		t.Errorf("round 30 recorded twice: superseded %v, want [c10] (rounds 20 and 30 kept)", got)
	}
	of := func(ev eventlog.Event, evaluate int) eventlog.Event {
		ev.Payload = []byte(fmt.Sprintf(`{"round":%d,"evaluate_every":%d}`, ev.Round, evaluate))
		return ev
	}
	again := []eventlog.Event{
		of(checkpoint("t", 90, "c90"), 5),
		of(checkpoint("t", 100, "c100"), 5),
		of(checkpoint("t", 10, "d10"), 1),
		of(checkpoint("t", 20, "d20"), 1),
	}
	if got := superseded(again); len(got) != 0 {
		t.Errorf(
			"a training computed again for more evaluations: superseded %v, want none (each run keeps its own two)",
			slices.Sorted(maps.Keys(got)),
		)
	}
	shared := []eventlog.Event{checkpoint("t", 10, "c10"), checkpoint("t", 20, "c20"), checkpoint("t", 30, "c30"),
		{Kind: eventlog.StageCompleted, StageKey: "t", Outputs: map[string]artifacts.Ref{"final": {Digest: "c10"}}}}
	if got := superseded(shared); len(got) != 0 {
		t.Errorf(
			"a superseded checkpoint whose blob a stage output names: superseded %v, want none",
			slices.Sorted(maps.Keys(got)),
		)
	}
}
