package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/reproduction"
	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/floats"
)

func reproduceCommand() *cli.Command {
	return &cli.Command{
		Name: "reproduce",
		Usage: "compute every manifest of a tree of results directories again in the store (resumable), then " +
			"compare each cell with its committed figures bit for bit",
		ArgsUsage: "[DIR ...]",
		Description: "Finds every results directory (one `ump report` wrote) under each DIR (default: results),\n" +
			"runs its manifest in the store as `ump run` would, cached cells skipped and interrupted training\n" +
			"resumed, with one progress line and an ETA over all of them; then compares each finished cell\n" +
			"with the directory's: its status, final row and every evaluated round, bit for bit. A directory\n" +
			"whose cells have other keys on this machine (computed under another engine, or other data) is\n" +
			"named and left out. Exit 4 where a cell differs; rerun the same command to resume.",
		Flags: []cli.Flag{
			&cli.IntFlag{
				Name:    "jobs",
				Aliases: []string{"j"},
				Value:   1,
				Usage:   "run `N` cells at once, as ump run -j does; results are bit-identical to one at a time",
			},
		},
		Action: func(c *cli.Context) error {
			if c.Int("jobs") < 1 {
				return badInput{fmt.Errorf("--jobs %d: use a number of cells >= 1", c.Int("jobs"))}
			}
			roots := c.Args().Slice()
			if len(roots) == 0 {
				roots = []string{"results"}
			}
			return runReproduce(c.Context, globalsOf(c), roots, c.Int("jobs"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runReproduce(ctx context.Context, g globals, roots []string, jobs int, stdout, stderr io.Writer) error {
	dirs, err := reproduction.Find(roots)
	if err != nil {
		return err
	}
	// The rerun hint names the roots absolute, so that it runs from any directory.
	rerun := fmt.Sprintf(
		"%s reproduce -j %d %s",
		g.ump,
		jobs,
		strings.Join(display.ShellWords(display.AbsolutePaths(roots)), " "),
	)
	store, err := pipeline.Open(g.store, "ump reproduce")
	if err != nil {
		return err
	}
	defer store.Close()
	if store.Note != "" {
		fmt.Fprintln(stderr, g.hinted(store.Note))
	}
	runner := g.runner(store, nil)                     // the one line below instead of every cell's
	runner.Jobs, runner.RecomputeImported = jobs, true // what ump import brought in is computed again too
	all, err := reproduction.Plan(ctx, runner, dirs, func(plan *manifests.Plan) string {
		if g.gpuBuilt(plan) != nil {
			return "its cells train on the GPU engine, which this build lacks"
		}
		return ""
	})
	if err != nil {
		return err
	}
	var todo []*reproduction.Dir
	recorded := map[string]float64{} // by cell key: a cell shared by directories is computed once
	for _, r := range all {
		if r.Other == "" {
			todo = append(todo, r)
			seconds, err := r.X.ComputeSeconds()
			if err != nil {
				return err
			}
			maps.Copy(recorded, seconds)
		}
	}
	if len(todo) == 0 {
		reproduction.Compare(ctx, g.ump, store.Source(), all, stdout) // says why each is left out
		return badInput{
			fmt.Errorf(
				"no results directory under %s can be computed again on this machine (%d left out, named above)",
				strings.Join(roots, ", "),
				len(all),
			),
		}
	}
	line := reproduction.NewLine(stderr, todo)
	seconds := floats.Sum(slices.Collect(maps.Values(recorded)))
	fmt.Fprintf(stderr, "reproduce: directories to compute again in %s: %d (%d distinct cells, "+
		"whose rounds record %.1f hours of compute where they ran: about %s at -j %d on a machine as fast); "+
		"left out: %d\n", g.store, len(todo), line.Cells, seconds/3600, hours(line.Estimate(seconds, jobs)), jobs,
		len(all)-len(todo))
	for _, r := range all {
		if r.Other != "" { // named now: an interrupted run never reaches the end
			fmt.Fprintf(stderr, "reproduce: leaves out %s: %s\n", r.Path, r.Other)
		}
	}
	if done, total := doneHere(store, todo); done > 0 {
		fmt.Fprintf(stderr, "reproduce: resuming: %d of the %d cells to compute are done in %s\n", done, total, g.store)
	}
	for _, r := range todo {
		if len(r.Missing) > 0 {
			fmt.Fprintf(stderr, "reproduce: %s is partial: it holds %d of its manifest's %d cells; "+
				"cells %s are not computed (nothing to compare them with)\n",
				r.Path, len(r.Finished), len(r.Plan.Cells), resultsdir.CellRanges(r.Missing))
		}
	}
	for k, r := range todo {
		runner.Overrides, runner.Counted, runner.Cells = r.X.Registration.Overrides, line.Count, r.Finished
		line.Directory(k, r)
		if len(r.Finished) == 0 {
			continue
		}
		out, err := runner.Run(ctx, r.Plan)
		r.Cached = out.Cached
		if err != nil {
			line.End()
			if errors.Is(err, pipeline.ErrInterrupted) {
				fmt.Fprintf(stderr, "stopped at a safe point; rerun `%s` to resume\n", rerun)
			}
			return fmt.Errorf("%s: %w", r.Path, err)
		}
	}
	line.End()
	return reproduction.Compare(ctx, g.ump, store.Source(), all, stdout)
}

// doneHere counts the cells of the directories to compute that the store
// already holds finished, computed here (not imported, which reproduce
// computes again), and all of them.
func doneHere(store *pipeline.Store, todo []*reproduction.Dir) (done, total int) {
	for _, r := range todo {
		total += len(r.Finished)
		rep, err := store.Source().FindReport(r.Plan.Hash)
		if err != nil {
			continue // not run in this store yet
		}
		for _, i := range r.Finished {
			c := rep.Cells[i]
			if (c.Status == eventlog.Completed || c.Status == eventlog.Diverged) && len(c.Imported) == 0 {
				done++
			}
		}
	}
	return done, total
}

// hours says a long time to the tenth of an hour, a short one in minutes.
func hours(d time.Duration) string {
	if d < time.Hour {
		return fmt.Sprintf("%.0f min", math.Ceil(d.Minutes()))
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}
