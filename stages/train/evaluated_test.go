package train

import "testing"

// TestACheckpointResumesOnlyWhereItsRowsCover: a checkpoint after round 10
// of a run that evaluated every 5 rounds holds rows 5 and 10: it resumes a
// run evaluating every 5 or 10, not one evaluating every round (an ump that
// did not record the interval leaves only its rows to tell).
func TestACheckpointResumesOnlyWhereItsRowsCover(t *testing.T) {
	saved := &TrainState{Round: 10, Rows: [][]float64{{5, 0.3}, {10, 0.2}}}
	for every, want := range map[int]bool{5: true, 10: true, 1: false, 2: false} {
		if got := evaluated(saved, every); got != want {
			t.Errorf("rows of rounds 5 and 10, a run evaluating every %d: resumes %v, want %v", every, got, want)
		}
	}
}
