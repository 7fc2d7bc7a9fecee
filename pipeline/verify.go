package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/stages"
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

// DamagedBlob is a blob an event of a manifest names that does not read
// back from the store's blobs: missing, or not matching its digest.
type DamagedBlob struct {
	Ref      artifacts.Ref
	Cell     int    // the first cell whose events name it
	What     string // "train/rounds", "train checkpoint of round 30"
	Err      error  // wraps artifacts.ErrNotFound or artifacts.ErrCorrupt
	Repaired bool   // Verify recomputed it and stored it again
}

// CheckBlobs reads back every blob the events of a registered manifest
// name (stage outputs and checkpoints, less the superseded ones), as
// restic's check --read-data, and returns how many it read and the
// damaged ones. A cell imported from a results directory came with its
// tables alone: its other blobs are absent, not damaged.
func CheckBlobs(ctx context.Context, s *Store, reg *state.Registration) (int, []*DamagedBlob, error) {
	seen := map[string]bool{}
	absent := 0 // blobs of imported cells that stayed behind
	var damaged []*DamagedBlob
	for i, key := range reg.CellKeys {
		evs, err := s.Events.ByCell(key)
		if err != nil {
			return 0, nil, err
		}
		old := superseded(evs)
		view, err := state.FoldCell(key, evs)
		if err != nil {
			return 0, nil, err
		}
		tablesOnly := view.DirImport() != nil // its other outputs stayed in the directory's store
		for _, ev := range evs {
			for _, name := range slices.Sorted(maps.Keys(ev.Outputs)) {
				ref := ev.Outputs[name]
				if seen[ref.Digest] || old[ref.Digest] {
					continue
				}
				seen[ref.Digest] = true
				if ctx.Err() != nil {
					return 0, nil, ErrInterrupted
				}
				if _, err := s.Blobs.Get(ctx, ref); err != nil {
					if tablesOnly && errors.Is(err, artifacts.ErrNotFound) {
						absent++
						continue
					}
					what := ev.Stage + "/" + name
					if ev.Kind == eventlog.RoundCompleted {
						what = fmt.Sprintf("%s checkpoint of round %d", ev.Stage, ev.Round)
					}
					damaged = append(damaged, &DamagedBlob{Ref: ref, Cell: i, What: what, Err: err})
				}
			}
		}
	}
	return len(seen) - absent, damaged, nil
}

// Verify recomputes every cell of a registered manifest from scratch, with
// caching off and blobs kept in memory, and compares each stage's output
// digests with the ones the log recorded for the same stage key. Each
// damaged blob (CheckBlobs) the recomputation reproduces is stored again
// when repair is set; otherwise the store is only read. It uses the
// runner's store (Log, Blobs), Stages, Engines, Data and Progress.
func (r *Runner) Verify(
	ctx context.Context,
	reg *state.Registration,
	damaged []*DamagedBlob,
	repair bool,
) ([]CellCheck, error) {
	var out []CellCheck
	for i := range reg.Plan.Cells {
		cell := &reg.Plan.Cells[i]
		check := CellCheck{Index: i, Label: cell.LabelString()}
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "verifying cell %d/%d %s\n", i+1, len(reg.Plan.Cells), check.Label)
		}
		inputs, err := cellInputs(&cell.Config, r.Data, r.Engines)
		if err != nil {
			return out, err
		}
		if cellKey(cell, inputs) != reg.CellKeys[i] {
			// Recorded under other inputs: here its stages have other keys
			// and its numbers may differ in the last bits.
			v, err := r.source().Cell(reg.Plan.Hash, reg.CellKeys[i])
			if err != nil {
				return out, err
			}
			engine, _ := r.Engines.Name(&cell.Config)
			check.Err = fmt.Errorf(
				"%w: it was recorded under engine %q and this machine computes with %q (or its data differ); "+
					"verify it on a machine with that engine",
				ErrOtherEngine,
				v.Engine(),
				engine,
			)
			out = append(out, check)
			continue
		}
		mem := artifacts.NewMemory()
		results := map[string]*stages.Result{}
		for _, st := range r.Stages {
			skey, former := stageKeys(st, &cell.Config, inputs, results)
			recorded, summary, err := r.recorded(skey)
			if err == nil && recorded == nil && former != "" {
				recorded, summary, err = r.recorded(former)
			}
			if err != nil {
				return out, err
			}
			env := &stages.Env{Store: mem, Data: r.Data, Upstream: declared(st, results),
				Report: func(record.RoundReport) error { return ctx.Err() }, Every: stages.EveryOf(&cell.Config)}
			var ran stages.RunSettings
			if json.Unmarshal(summary, &ran) == nil && ran.Cohort > 1 { // as it trained: in a cohort of that size
				env.Seat = r.Engines.NewCohort(ran.Cohort).Reserve(&cell.Config)
			}
			if ran.EvaluateEvery > 0 { // as it trained: evaluated that often
				env.Every.Evaluate = ran.EvaluateEvery
			}
			res, err := st.Run(ctx, &cell.Config, env)
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
		if repair {
			if err := restore(ctx, r.Blobs, mem, damaged); err != nil {
				return out, err
			}
		}
		out = append(out, check)
	}
	return out, nil
}

// restore stores again each damaged blob that a cell's recomputation
// reproduced (held in mem under the same digest).
func restore(ctx context.Context, blobs, mem artifacts.Store, damaged []*DamagedBlob) error {
	for _, d := range damaged {
		if d.Repaired {
			continue
		}
		data, err := mem.Get(ctx, d.Ref)
		if err != nil {
			continue // not reproduced by this cell
		}
		if _, err := blobs.Put(ctx, data); err != nil {
			return fmt.Errorf("repairing %s: %w", d.Ref, err)
		}
		d.Repaired = true
	}
	return nil
}

// recorded returns the outputs and summary of the last StageCompleted
// event of a stage key, or nils.
func (r *Runner) recorded(skey string) (map[string]artifacts.Ref, json.RawMessage, error) {
	evs, err := r.Log.ByStage(skey)
	if err != nil {
		return nil, nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == eventlog.StageCompleted {
			pl, err := eventlog.PayloadOf[eventlog.StageOutcome](&evs[i])
			if err != nil {
				return nil, nil, err
			}
			return evs[i].Outputs, pl.Summary, nil
		}
	}
	return nil, nil, nil
}
