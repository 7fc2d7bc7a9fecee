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
)

// seeding is `ump run --until-decided N`: after the run, it adds seeds
// where the table's choice of table.select is within the noise, one seed
// per round of additions to each choice in question (the chosen one and
// the runner-up, in every entry that shares the choice), as the
// manifest's add block, until every choice is decided or has N seeds.
// The same results give the same additions, so a rerun is all cache hits.
type seeding struct {
	ump    string // ump as it was run, for the line that reruns the last plan
	opts   runOptions
	runner *pipeline.Runner
	store  *pipeline.Store
	log    io.Writer
}

// run adds seeds to the plan, which has run with outcome out, and runs
// them, round after round; it returns the last plan, its run's outcome and
// the arguments that run it again.
func (s *seeding) run(ctx context.Context, plan *manifests.Plan, out pipeline.Outcome, rerun string) (*manifests.Plan, pipeline.Outcome, string, error) {
	if _, ok := plan.Manifest.Sweep["seed"]; !ok || report.Layout(plan).Select == "" {
		return plan, out, rerun, badInput{fmt.Errorf("--until-decided adds seeds to decide table.select: the manifest must sweep seed and its table choose a path (select)")}
	}
	for added := false; ; added = true {
		adds, open, err := s.wanted(ctx, plan)
		if err != nil {
			return plan, out, rerun, err
		}
		if len(adds) == 0 {
			if open > 0 {
				fmt.Fprintf(s.log, "%d entries' choices stay within the noise at %d seeds (--until-decided %d)\n", open, s.opts.untilDecided, s.opts.untilDecided)
			} else {
				fmt.Fprintf(s.log, "every choice of %s is decided\n", report.Layout(plan).Select)
			}
			if added {
				fmt.Fprintf(s.log, "the table's manifest, %.12s, with its added cells: `%s run %s`\n", plan.Hash, s.ump, rerun)
			}
			return plan, out, rerun, nil
		}
		opts := s.opts
		opts.overrides = withAdd(opts.overrides, append(slices.Clone(plan.Manifest.Add), adds...))
		if plan, rerun, err = openPlan(opts); err != nil {
			return plan, out, rerun, err
		}
		rerun = opts.howToRun() + rerun
		fmt.Fprintf(s.log, "adding %d cells, seeds to the choices within the noise: manifest %s\n", len(adds), plan.Hash)
		s.runner.Overrides = opts.changes()
		if out, err = s.runner.Run(ctx, plan); err != nil {
			return plan, out, rerun, err
		}
	}
}

// wanted are the cells to add to the plan's finished table: for each
// entry whose choice is within the noise, a cell of the chosen and of the
// runner-up choice with the next seed, where that choice has fewer than
// the cap; open counts the entries with a choice at the cap.
func (s *seeding) wanted(ctx context.Context, plan *manifests.Plan) (adds []map[string]json.RawMessage, open int, err error) {
	rep, err := s.store.Source().FindReport(plan.Hash)
	if err != nil {
		return nil, 0, err
	}
	grid, err := report.ReadGrid(ctx, s.store.Source(), rep, report.Layout(&rep.Plan))
	if err != nil {
		return nil, 0, err
	}
	seen := map[string]bool{}
	for r, row := range grid.Entries {
		for c, e := range row {
			if e.Missing || e.Selection == nil || e.Selection.Stable() {
				continue
			}
			capped := false
			for _, choice := range []string{e.Select, e.Selection.RunnerUp} {
				cells := slices.DeleteFunc(slices.Clone(grid.Cells[r][c]), func(i int) bool { return grid.Choices[i] != choice })
				if len(cells) >= s.opts.untilDecided {
					capped = true
					continue
				}
				last := 0
				for _, i := range cells {
					last = max(last, plan.Cells[i].Config.Seed)
				}
				add := plan.WithSeed(&plan.Cells[cells[0]], last+1)
				if key := string(manifests.CanonicalJSON(add)); !seen[key] {
					seen[key] = true
					adds = append(adds, add)
				}
			}
			if capped {
				open++
			}
		}
	}
	return adds, open, nil
}

// withAdd is the overrides with the add block given as one override (in
// place of any the overrides had).
func withAdd(overrides []string, add []map[string]json.RawMessage) []string {
	out := slices.DeleteFunc(slices.Clone(overrides), func(ov string) bool { return strings.HasPrefix(ov, "add=") })
	return append(out, "add="+string(manifests.CanonicalJSON(add)))
}
