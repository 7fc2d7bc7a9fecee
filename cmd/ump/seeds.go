package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/paper"
)

// seeding is `ump run --until-decided N`: after the run, it adds seeds
// where the table's choice of table.select, or a claim of the paper, is
// within the noise, one seed per round of additions to each choice in
// question (targets), as the manifest's add block, until each is decided
// or has N seeds.
// The same results give the same additions, so a rerun is all cache hits.
type seeding struct {
	ump    string // ump as it was run, for the line that reruns the last plan
	opts   runOptions
	runner *pipeline.Runner
	store  *pipeline.Store
	log    io.Writer
}

// run adds seeds to the plan, which has run with outcome out, and runs
// them, round after round; it returns the last plan and its run's
// outcome, and names the arguments that run that plan alone (rerun: the
// first plan's).
func (s *seeding) run(
	ctx context.Context,
	plan *manifests.Plan,
	out pipeline.Outcome,
	rerun string,
) (*manifests.Plan, pipeline.Outcome, error) {
	if _, ok := plan.Manifest.Sweep["seed"]; !ok {
		return plan, out, badInput{fmt.Errorf("--until-decided adds seeds: the manifest must sweep seed")}
	}
	for added := false; ; added = true {
		adds, open, err := s.wanted(ctx, plan)
		if err != nil {
			return plan, out, err
		}
		if len(adds) == 0 {
			if open > 0 {
				fmt.Fprintf(
					s.log,
					"%d entries stay within the noise at %d seeds (--until-decided %d)\n",
					open,
					s.opts.untilDecided,
					s.opts.untilDecided,
				)
			} else {
				fmt.Fprintf(s.log, "every choice and claim is decided\n")
			}
			if added {
				fmt.Fprintf(
					s.log,
					"the table's manifest, %.12s, with its added cells: `%s run %s`\n",
					plan.Hash,
					s.ump,
					rerun,
				)
			}
			return plan, out, nil
		}
		opts := s.opts
		opts.overrides = withAdd(opts.overrides, append(slices.Clone(plan.Manifest.Add), adds...))
		if plan, rerun, err = openPlan(opts); err != nil {
			return plan, out, err
		}
		rerun = opts.howToRun() + rerun
		fmt.Fprintf(
			s.log,
			"adding %d cells, seeds where a choice or a claim is within the noise: manifest %s\n",
			len(adds),
			plan.Hash,
		)
		s.runner.Overrides = opts.changes()
		if out, err = s.runner.Run(ctx, plan); err != nil {
			return plan, out, err
		}
	}
}

// wanted are the cells to add to the plan's finished table
// (paper.MoreSeeds); open counts the entries with a choice at the cap.
func (s *seeding) wanted(
	ctx context.Context,
	plan *manifests.Plan,
) (adds []map[string]json.RawMessage, open int, err error) {
	rep, err := s.store.Source().FindReport(plan.Hash)
	if err != nil {
		return nil, 0, err
	}
	grid, err := report.ReadGrid(ctx, s.store.Source(), rep, report.Layout(&rep.Plan))
	if err != nil {
		return nil, 0, err
	}
	return paper.MoreSeeds(plan, grid, s.opts.untilDecided)
}

// withAdd is the overrides with the add block given as one override (in
// place of any the overrides had).
func withAdd(overrides []string, add []map[string]json.RawMessage) []string {
	out := slices.DeleteFunc(slices.Clone(overrides), func(ov string) bool { return strings.HasPrefix(ov, "add=") })
	return append(out, "add="+string(manifests.CanonicalJSON(add)))
}
