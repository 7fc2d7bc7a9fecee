package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
)

// OutputCheck compares one recomputed output with the recorded one.
type OutputCheck struct {
	Stage, Output string
	Recorded, Got string // digests; Recorded is empty when nothing was recorded
}

// OK reports whether the digests match.
func (c OutputCheck) OK() bool { return c.Recorded != "" && c.Recorded == c.Got }

// CellCheck is the verification of one cell.
type CellCheck struct {
	Index  int
	Label  string
	Checks []OutputCheck
	Err    error // the recomputation failed
}

// OK reports whether every output matched.
func (c CellCheck) OK() bool {
	if c.Err != nil || len(c.Checks) == 0 {
		return false
	}
	for _, o := range c.Checks {
		if !o.OK() {
			return false
		}
	}
	return true
}

// Verify recomputes every cell of a registered manifest from scratch, with
// caching off and blobs kept in memory (the store is only read), and
// compares each stage's output digests with the ones the log recorded for
// the same stage key.
func Verify(ctx context.Context, s *Store, reg *Registration, stgs []stages.Stage, data *datasets.Library, device *nn.Device, progress io.Writer) ([]CellCheck, error) {
	var out []CellCheck
	for i := range reg.Plan.Cells {
		cell := &reg.Plan.Cells[i]
		check := CellCheck{Index: i, Label: cell.LabelString()}
		if progress != nil {
			fmt.Fprintf(progress, "verifying cell %d/%d %s\n", i+1, len(reg.Plan.Cells), check.Label)
		}
		inputs, err := cellInputs(&cell.Config, data, device)
		if err != nil {
			return out, err
		}
		mem := artifacts.NewMemory()
		results := map[string]*stages.Result{}
		for _, st := range stgs {
			params := st.Params(&cell.Config)
			skey := stageKey(st, params, inputs, results)
			recorded, summary, err := s.recorded(skey)
			if err != nil {
				return out, err
			}
			env := &stages.Env{Params: params, Store: mem, Data: data, Device: device, Upstream: declared(st, results),
				Report: func(stages.RoundReport) error { return ctx.Err() }}
			var trained train.Summary
			if json.Unmarshal(summary, &trained) == nil && trained.Cohort > 1 { // as it trained: in a cohort of that size
				env.Seat = stages.NewLockstep(trained.Cohort, device).Reserve(&cell.Config)
			}
			res, err := st.Run(ctx, env)
			if err == nil {
				err = checkOutputs(st, res)
			}
			if env.Seat != nil {
				env.Seat.Release()
			}
			if ctx.Err() != nil {
				return out, ErrInterrupted
			}
			if err != nil {
				check.Err = fmt.Errorf("stage %s: %w", st.Name(), err)
				break
			}
			for _, name := range slices.Sorted(maps.Keys(res.Outputs)) {
				check.Checks = append(check.Checks, OutputCheck{Stage: st.Name(), Output: name,
					Recorded: recorded[name].Digest, Got: res.Outputs[name].Digest})
			}
			results[st.Name()] = res
		}
		out = append(out, check)
	}
	return out, nil
}

// recorded returns the outputs and summary of the last StageCompleted
// event of a stage key, or nils.
func (s *Store) recorded(skey string) (map[string]artifacts.Ref, json.RawMessage, error) {
	evs, err := s.Log.ByStage(skey)
	if err != nil {
		return nil, nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == StageCompleted {
			pl, err := payloadOf[StageOutcome](&evs[i])
			if err != nil {
				return nil, nil, err
			}
			return evs[i].Outputs, pl.Summary, nil
		}
	}
	return nil, nil, nil
}
