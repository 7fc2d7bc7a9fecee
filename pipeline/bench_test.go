package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/ump-lab/ump/eventlog"
)

// BenchmarkAppend measures appending a RoundCompleted-sized event to the
// Badger log with synced writes, the per-round cost the runner pays.
func BenchmarkAppend(b *testing.B) {
	s, err := Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	payload, _ := json.Marshal(map[string]float64{"train_loss": 1.5, "objective_gap": 0.01, "consensus_distance": 0.2})
	for b.Loop() {
		ev := &eventlog.Event{
			Kind:     eventlog.RoundCompleted,
			Manifest: "m",
			Cell:     "c",
			Stage:    "train",
			StageKey: "k",
			Round:    1,
			Payload:  payload,
		}
		if err := s.Log.Append(ev); err != nil {
			b.Fatal(err)
		}
	}
}
