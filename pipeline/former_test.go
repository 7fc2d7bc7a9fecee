package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
)

// formerKeyed is a stage as an earlier ump keyed it: by its former params
// (stages.FormerlyKeyed), with nothing before them.
type formerKeyed struct{ stages.Stage }

func (f formerKeyed) Params(cfg *manifests.Manifest) json.RawMessage {
	if former := f.Stage.FormerParams(cfg); former != nil {
		return former
	}
	return f.Stage.Params(cfg)
}

func (formerKeyed) FormerParams(*manifests.Manifest) json.RawMessage { return nil }

// earlierStages are cellStages as an earlier ump keyed them.
func earlierStages(stgs []stages.Stage) []stages.Stage {
	out := make([]stages.Stage, len(stgs))
	for i, st := range stgs {
		out[i] = formerKeyed{st}
	}
	return out
}

// TestFormerKeysServe: results an earlier ump recorded under the stages'
// former keys (the same bits) are verified, serve a run without computing
// anything, which records them under today's keys, and pass the checks a
// pull makes; an interrupted earlier run resumes from its checkpoint.
func TestFormerKeysServe(t *testing.T) {
	plan := parse(t, smallManifest)
	ctx := context.Background()
	clean := openTestStore(t)
	if _, err := (&Runner{Log: clean.Log, Blobs: clean.Blobs, Dir: clean.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(ctx, plan); err != nil {
		t.Fatal(err)
	}

	s := openTestStore(t)
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: earlierStages(cellStages(nil)),
		Engines: engines.Set{}}).Run(ctx, plan); err != nil {
		t.Fatal(err)
	}
	reg, err := s.Source().FindManifest(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Stages: cellStages(nil), Engines: engines.Set{},
		Data: datasets.NewLibrary(t.TempDir())}).Verify(
		ctx,
		reg,
		nil,
		false,
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Err != nil || len(c.Checks) == 0 {
			t.Fatalf(
				"verify of cell %d recorded under the former keys: %v (%d outputs)",
				c.Index+1,
				c.Err,
				len(c.Checks),
			)
		}
		for _, oc := range c.Checks {
			if !oc.OK() {
				t.Errorf(
					"verify of cell %d: %s/%s recomputed %s, recorded %s",
					c.Index+1,
					oc.Stage,
					oc.Output,
					oc.Got,
					oc.Recorded,
				)
			}
		}
	}
	started := countKind(t, s, eventlog.StageStarted)
	var said strings.Builder
	out, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{},
		Progress: &said}).Run(
		ctx,
		plan,
	)
	if err != nil || out.Completed != 2 {
		t.Fatalf("today's run over results under the former keys: %+v %v; want 2 completed cells", out, err)
	}
	if n := strings.Count(said.String(), "cached (recorded by an earlier ump under the stage's former key"); n != 4 {
		t.Errorf(
			"today's run said %d times that a stage's result was recorded under its former key; want 4 (train and "+
				"evaluate of 2 cells):\n%s",
			n,
			said.String(),
		)
	}
	if n := countKind(t, s, eventlog.StageStarted) - started; n != 0 {
		t.Errorf("today's run started %d stages; the former keys' results should serve", n)
	}
	sameTables(t, exportTable(t, clean, plan.Hash, "rounds"), exportTable(t, s, plan.Hash, "rounds"))
	for _, key := range reg.CellKeys {
		evs, err := s.Log.ByCell(key)
		if err != nil {
			t.Fatal(err)
		}
		rekeyed := 0
		for _, ev := range evs {
			if ev.Kind == eventlog.StageCompleted && (ev.Stage == stages.Train || ev.Stage == stages.Evaluate) {
				rekeyed++
			}
		}
		if rekeyed != 4 { // train and evaluate, each under its former key and today's
			t.Errorf(
				"cell %.12s: %d completions of train and evaluate; want 4 (former keys, then today's)",
				key,
				rekeyed,
			)
		}
		cell := &reg.Plan.Cells[0]
		for i, k := range reg.CellKeys {
			if k == key {
				cell = &reg.Plan.Cells[i]
			}
		}
		if err := CheckCell(key, cell, evs, cellStages(nil), datasets.NewLibrary(t.TempDir())); err != nil {
			t.Errorf("a pull would refuse cell %.12s: %v", key, err)
		}
	}

	// An earlier ump's run, interrupted, resumes from its checkpoint.
	resumed := openTestStore(t)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stgs := cellStages(nil)
	stgs[2] = stages.Of(
		interruptAt{
			Stage:     train.Stage{Engines: engines.Set{}},
			algorithm: "gt-dsum",
			round:     24,
			cancel:    cancel,
		},
	)
	if _, err := (&Runner{Log: resumed.Log, Blobs: resumed.Blobs, Dir: resumed.Path, Stages: earlierStages(stgs),
		Engines: engines.Set{}}).Run(cctx, plan); !errors.Is(
		err,
		ErrInterrupted,
	) {
		t.Fatalf("earlier run: %v, want ErrInterrupted", err)
	}
	var progress strings.Builder
	if out, err := (&Runner{Log: resumed.Log, Blobs: resumed.Blobs, Dir: resumed.Path, Stages: cellStages(nil),
		Engines: engines.Set{}, Progress: &progress}).Run(ctx, plan); err != nil ||
		out.Completed != 2 {
		t.Fatalf("today's run after an interrupted earlier one: %+v %v", out, err)
	}
	if !strings.Contains(progress.String(), "resuming from the checkpoint after round 25") {
		t.Errorf("did not resume from the earlier run's checkpoint:\n%s", progress.String())
	}
	sameTables(t, exportTable(t, clean, plan.Hash, "rounds"), exportTable(t, resumed, plan.Hash, "rounds"))
}
