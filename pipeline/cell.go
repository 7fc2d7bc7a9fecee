package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
)

// cellRun is one cell of a run, and what its stages share.
type cellRun struct {
	r     *Runner
	plan  *manifests.Plan
	cell  *manifests.Cell
	key   string
	p     *progress
	seat  stages.Seat // its place in a GPU cohort; nil when it trains alone
	procs int         // its CPU engine's goroutines (0: all cores)

	hooks    CellHooks
	view     *state.CellView
	inputs   string // the inputs its stage keys hash (cellInputs, or foreign's)
	foreign  string // the inputs of a result recorded under another engine, kept (OtherEngine "use"); "" for none
	appended bool   // whether it recorded an event (its CellStarted first)
}

// run runs the cell's stages; err is only for interruption or a broken
// store, a failing stage gives status Failed.
func (c *cellRun) run(ctx context.Context) (status string, cached bool, err error) {
	c.p.cellStart(c.cell)
	if err := c.start(ctx); err != nil {
		return "", false, err
	}
	if imported := c.view.DirImport(); imported != nil && !c.r.RecomputeImported &&
		(c.view.Status == eventlog.Completed || c.view.Status == eventlog.Diverged) {
		// Its checkpoints stayed behind: no stage is cached whole, and
		// none needs to run. Nothing of it goes to a fleet's bucket.
		c.p.importedCell(c.cell, imported)
		return c.view.Status, true, nil
	}
	status, diverged, failure, err := c.stages(ctx)
	if err != nil {
		return "", false, err
	}
	if status == eventlog.Incomplete {
		return status, !c.appended, nil
	}
	if status == eventlog.Completed && diverged {
		status = eventlog.Diverged
	}
	if c.appended || c.view.Status != status {
		if err := c.append(ctx, eventlog.New(eventlog.CellCompleted, eventlog.CellOutcome{Status: status,
			Error: failure})); err != nil {
			return "", false, err
		}
	}
	if err := c.hooks.Finish(ctx, status); err != nil {
		return "", false, fmt.Errorf("cell %d (%s): %w", c.cell.Index+1, c.cell.LabelString(), err)
	}
	return status, !c.appended, nil
}

// start runs the cell's Start hook and finds what it holds and the inputs
// its stages run under. A result recorded under another engine (OtherEngine
// "use"): its stages are cache hits under the inputs it recorded, and
// none may run here under its key.
func (c *cellRun) start(ctx context.Context) error {
	c.hooks = c.r.hooks(c.plan, c.cell, c.key, c.p)
	if err := c.hooks.Start(ctx); err != nil {
		return fmt.Errorf("cell %d (%s): %w", c.cell.Index+1, c.cell.LabelString(), err)
	}
	view, err := c.r.source().Cell(c.plan.Hash, c.key)
	if err != nil {
		return err
	}
	c.view = view
	if c.inputs, err = cellInputs(&c.cell.Config, c.r.Data, c.r.Engines); err != nil {
		return err
	}
	if cellKey(c.cell, c.inputs) != c.key {
		if c.foreign = view.Fingerprint()["inputs"]; c.foreign == "" {
			return fmt.Errorf(
				"cell %d (%s): its key %.12s does not follow from this machine's inputs and its events do not record "+
					"theirs",
				c.cell.Index+1,
				c.cell.LabelString(),
				c.key,
			)
		}
		c.inputs = c.foreign
	}
	return nil
}

// append records an event of the cell (its CellStarted first), then runs
// the Recorded hook.
func (c *cellRun) append(ctx context.Context, ev *eventlog.Event) error {
	if !c.appended {
		c.appended = true
		start := eventlog.New(eventlog.CellStarted, Fingerprint(&c.cell.Config, c.r.Engines, c.inputs))
		start.Manifest, start.Cell = c.plan.Hash, c.key
		if err := c.r.Log.Append(start); err != nil {
			return err
		}
	}
	ev.Manifest, ev.Cell = c.plan.Hash, c.key
	if err := c.r.Log.Append(ev); err != nil {
		return err
	}
	return c.hooks.Recorded(ctx, ev)
}

// stages runs or reuses each stage in order, up to the runner's Until:
// status is Completed, Failed (with failure) or Incomplete (stopped at
// Until); err is only for interruption or a broken store.
func (c *cellRun) stages(ctx context.Context) (status string, diverged bool, failure string, err error) {
	results := map[string]*stages.Result{}
	for _, st := range c.r.Stages {
		res, err := c.stage(ctx, st, results)
		var failed *stageFailure
		if errors.As(err, &failed) {
			return eventlog.Failed, diverged, failed.Error(), nil
		}
		if err != nil {
			return "", false, "", err
		}
		results[st.Name()] = res
		diverged = diverged || res.Diverged
		if st.Name() == c.r.Until {
			return eventlog.Incomplete, diverged, "", nil
		}
	}
	return eventlog.Completed, diverged, "", nil
}

// stageFailure is a stage that failed on its own (recorded as
// StageFailed): the cell fails, the run goes on.
type stageFailure struct {
	stage string
	err   error
}

func (f *stageFailure) Error() string { return fmt.Sprintf("stage %s: %v", f.stage, f.err) }

// stage reuses a cached result of the stage or runs it. A stage that
// fails on its own is recorded and returned as a *stageFailure.
func (c *cellRun) stage(
	ctx context.Context,
	st stages.Stage,
	results map[string]*stages.Result,
) (*stages.Result, error) {
	skey, former := stageKeys(st, &c.cell.Config, c.inputs, results)
	res, own, err := c.cached(ctx, skey, st.Name())
	viaFormer := false
	if res == nil && err == nil && former != "" { // recorded by an earlier ump under the former key: the same bits
		res, _, err = c.cached(ctx, former, st.Name())
		own, viaFormer = false, res != nil // recorded again under today's key
	}
	switch {
	case err != nil:
		return nil, err
	case res != nil:
		if !own {
			if err := c.append(ctx, completedEvent(st.Name(), skey, res, true)); err != nil {
				return nil, err
			}
		}
		c.p.stageCached(c.cell, st.Name(), viaFormer)
		return res, nil
	case c.foreign != "":
		return nil, fmt.Errorf(
			"%w: cell %d (%s) was recorded under other inputs (%q) and its stage %s is not in the store whole: "+
				"rerun with --other-engine recompute to compute it on this engine",
			ErrOtherEngine,
			c.cell.Index+1,
			c.cell.LabelString(),
			c.foreign,
			st.Name(),
		)
	}
	res, err = c.runStage(ctx, st, skey, former, results)
	switch {
	case errors.Is(err, stages.ErrInterrupted) || (err != nil && ctx.Err() != nil):
		return nil, &interruptedCell{cell: c.cell.Index + 1, label: c.cell.LabelString(), stage: st.Name()}
	case errors.Is(err, stages.ErrBadInput) || storeFailure(err):
		// The manifest or the store failed, not the cell: stop; the
		// manifest must change, or the rerun resumes.
		return nil, fmt.Errorf("cell %d (%s), stage %s: %w", c.cell.Index+1, c.cell.LabelString(), st.Name(), err)
	case err != nil:
		failed := eventlog.New(eventlog.StageFailed, err.Error())
		failed.Stage, failed.StageKey = st.Name(), skey
		if aerr := c.append(ctx, failed); aerr != nil {
			return nil, aerr
		}
		c.p.stageFailed(c.cell, st.Name(), err)
		return nil, &stageFailure{stage: st.Name(), err: err}
	}
	return res, nil
}

// storeFailure reports whether a stage failed because the store could not
// take its outputs (a full disk, an unreachable S3 store): a failure of
// the machine, not of the cell, which a rerun resumes.
func storeFailure(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, artifacts.ErrUnavailable)
}

// cached returns the result of a completed run of stage key skey whose
// outputs all verify, or nil. own reports whether the cell already
// recorded it. Only results that count for the manifest (countFor) serve,
// and only those that evaluated every round the cell asks for
// (stages.EvaluatedRoundsInclude): every 1 serves every 5, every 5 does not serve every 1.
func (c *cellRun) cached(ctx context.Context, skey, name string) (res *stages.Result, own bool, err error) {
	evs, err := c.r.source().StageEvents(c.plan.Hash, skey)
	if err != nil {
		return nil, false, err
	}
	want := stages.EveryOf(&c.cell.Config).Evaluate
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Kind != eventlog.StageCompleted {
			continue
		}
		pl, err := eventlog.PayloadOf[eventlog.StageOutcome](&ev)
		if err != nil {
			return nil, false, err
		}
		var ran stages.RunSettings
		if json.Unmarshal(pl.Summary, &ran) == nil && !stages.EvaluatedRoundsInclude(ran.EvaluateEvery, want) {
			c.p.cellf(
				c.cell,
				"%s: the cached result evaluated every %d rounds, and this manifest asks for every %d: computing it "+
					"again (the same model bits)\n",
				name,
				ran.EvaluateEvery,
				want,
			)
			continue
		}
		if err := c.r.verifyOutputs(ctx, ev.Outputs); err != nil {
			c.p.cellf(c.cell, "%s: cached output unusable (%v); recomputing\n", name, err)
			return nil, false, nil
		}
		for _, e := range evs {
			own = own || (e.Kind == eventlog.StageCompleted && e.Cell == c.key)
		}
		return &stages.Result{Outputs: ev.Outputs, Summary: pl.Summary, Diverged: pl.Diverged}, own, nil
	}
	return nil, false, nil
}

func (r *Runner) verifyOutputs(ctx context.Context, outs map[string]artifacts.Ref) error {
	for name, ref := range outs {
		if _, err := r.Blobs.Get(ctx, ref); err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
	}
	return nil
}

func completedEvent(stage, skey string, res *stages.Result, cached bool) *eventlog.Event {
	ev := eventlog.New(
		eventlog.StageCompleted,
		eventlog.StageOutcome{Summary: res.Summary, Diverged: res.Diverged, Cached: cached},
	)
	ev.Stage, ev.StageKey, ev.Outputs = stage, skey, res.Outputs
	return ev
}

// runStage executes a stage of the cell under stage key skey, resuming
// from its last verified checkpoint (under skey or its former key).
func (c *cellRun) runStage(
	ctx context.Context,
	st stages.Stage,
	skey, former string,
	upstream map[string]*stages.Result,
) (*stages.Result, error) {
	resume, err := c.r.lastCheckpoint(ctx, c.plan.Hash, skey, former, stages.EveryOf(&c.cell.Config).Evaluate)
	if err != nil {
		return nil, err
	}
	started := eventlog.New(eventlog.StageStarted, struct{}{})
	started.Stage, started.StageKey, started.Inputs = st.Name(), skey, inputs(upstream)
	if err := c.append(ctx, started); err != nil {
		return nil, err
	}
	c.p.stageStart(c.cell, st.Name(), resume)
	env := &stages.Env{
		Store:    c.r.Blobs,
		Data:     c.r.Data,
		Upstream: declared(st, upstream),
		Resume:   resume,
		Seat:     c.seat,
		Procs:    c.procs,
		Every:    stages.EveryOf(&c.cell.Config),
		Tick:     func(round, rounds int) { c.p.tick(c.cell, round, rounds) },
		Step:     func(round, step, steps int) { c.p.step(c.cell, round, step, steps) },
		Report:   func(rep record.RoundReport) error { return c.report(ctx, st, skey, rep) },
	}
	res, err := st.Run(ctx, &c.cell.Config, env)
	if err == nil {
		err = checkOutputs(st, res)
	}
	if err != nil {
		return nil, err
	}
	if err := c.append(ctx, completedEvent(st.Name(), skey, res, false)); err != nil {
		return nil, err
	}
	c.p.stageDone(c.cell, st.Name(), res)
	return res, nil
}

// report records a finished round of a rounded stage, and drops the
// checkpoints its checkpoint supersedes.
func (c *cellRun) report(ctx context.Context, st stages.Stage, skey string, rep record.RoundReport) error {
	ev := eventlog.New(eventlog.RoundCompleted, rep)
	ev.Stage, ev.StageKey, ev.Round = st.Name(), skey, rep.Round
	if rep.Checkpoint != nil {
		ev.Outputs = map[string]artifacts.Ref{eventlog.RoundCheckpoint: *rep.Checkpoint}
	}
	if err := c.append(ctx, ev); err != nil {
		return err
	}
	if rep.Checkpoint != nil {
		if err := c.r.dropSuperseded(c.plan.Hash, skey); err != nil {
			return err
		}
	}
	c.p.round(c.cell, rep)
	return nil
}
