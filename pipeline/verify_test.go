package pipeline

import (
	"context"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/stages"
)

// versionBumped is a stage whose code changed: same name and
// parameters, the next version.
type versionBumped struct{ stages.Stage }

func (v versionBumped) Version() int { return v.Stage.Version() + 1 }

// TestAStageVersionIsInItsCacheKey: after a stage's version changes, a
// rerun recomputes it (what follows is keyed by its outputs' digests: the
// same bytes again here, so cached).
func TestAStageVersionIsInItsCacheKey(t *testing.T) {
	plan := parse(t, smallManifest)
	s := openTestStore(t)
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	before := countKind(t, s, eventlog.StageStarted)
	stgs := cellStages(nil)
	stgs[2] = versionBumped{stgs[2]} // train
	out, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: stgs, Engines: engines.Set{}}).Run(
		context.Background(),
		plan,
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := countKind(t, s, eventlog.StageStarted) - before; out.Cached != 0 || n != len(plan.Cells) {
		t.Errorf(
			"rerun after train's version changed: %d cells fully cached, %d stages started; want none cached, train "+
				"of every cell (%d)",
			out.Cached,
			n,
			len(plan.Cells),
		)
	}
}

// otherOutputs is a stage that computes something other than what was
// recorded, under the same key: its first output's bytes differ.
type otherOutputs struct{ stages.Stage }

func (o otherOutputs) Run(ctx context.Context, cfg *manifests.Manifest, env *stages.Env) (*stages.Result, error) {
	res, err := o.Stage.Run(ctx, cfg, env)
	if err != nil {
		return nil, err
	}
	for name, ref := range res.Outputs {
		data, err := env.Store.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		if res.Outputs[name], err = env.Store.Put(ctx, append(data, 0)); err != nil {
			return nil, err
		}
		break
	}
	return res, nil
}

// TestVerifyComparesDigests: verify passes the stages that recorded the
// outputs and fails one whose recomputed output differs.
func TestVerifyComparesDigests(t *testing.T) {
	plan := parse(t, smallManifest)
	s := openTestStore(t)
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	reg, err := s.Source().FindManifest(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(stgs []stages.Stage) (ok, mismatched int) {
		checks, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Stages: stgs, Engines: engines.Set{},
			Data: datasets.NewLibrary(t.TempDir())}).Verify(
			context.Background(),
			reg,
			nil,
			false,
		)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			if c.Err != nil {
				t.Fatalf("cell %d: %v", c.Index+1, c.Err)
			}
			for _, oc := range c.Checks {
				if oc.OK() {
					ok++
				} else {
					mismatched++
				}
			}
		}
		return ok, mismatched
	}
	if ok, bad := verify(cellStages(nil)); ok == 0 || bad != 0 {
		t.Errorf("verify with the recording stages: %d outputs match, %d differ; want all to match", ok, bad)
	}
	stgs := cellStages(nil)
	stgs[3] = otherOutputs{stgs[3]} // evaluate
	if _, bad := verify(stgs); bad != len(plan.Cells) {
		t.Errorf(
			"verify with an evaluate stage computing other bytes: %d outputs differ; want one per cell (%d)",
			bad,
			len(plan.Cells),
		)
	}
}
