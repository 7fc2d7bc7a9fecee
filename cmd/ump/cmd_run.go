package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run every cell of a manifest (cached stages are skipped, interrupted training resumes)",
		ArgsUsage: "MANIFEST.yaml | EMBEDDED-NAME",
		Description: "Prints `manifest <hash>` as the first line of stdout, progress on stderr, and the\n" +
			"final metrics of every cell at the end (diverged cells show *).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "until", Usage: "run each cell's stages up to and including `STAGE` (partition, topology, train), " +
				"to inspect them with `ump show` before training; a plain rerun continues from there"},
			&cli.StringFlag{Name: "engine", Usage: "train data-set cells on `ENGINE` (cpu or gpu), as if the manifest said engine: ENGINE " +
				"(part of the hash; gpu needs a build with -tags xla, see `ump doctor`)"},
		},
		Action: func(c *cli.Context) error {
			path, err := oneArg(c, "the manifest file")
			if err != nil {
				return err
			}
			return runRun(c.Context, globalsOf(c), path, c.String("until"), c.String("engine"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runRun(ctx context.Context, g globals, path, until, engine string, stdout, stderr io.Writer) error {
	plan, err := manifests.Open(path)
	if err != nil {
		return err
	}
	rerun := path // the arguments of `ump run` that rerun this
	if engine != "" {
		if err := plan.SetEngine(engine); err != nil {
			return badInput{err}
		}
		rerun = "--engine " + engine + " " + path
	}
	stgs := pipeline.DefaultStages()
	if err := pipeline.CheckUntil(stgs, until); err != nil {
		return badInput{err}
	}
	store, err := pipeline.Open(g.store, "ump run "+rerun)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := useArtifacts(ctx, g, store); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "manifest %s\n", plan.Hash)
	runner := &pipeline.Runner{Store: store, Stages: stgs, Data: g.data, Progress: stderr, Until: until}
	out, err := runner.Run(ctx, plan)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "stopped at a safe point; rerun `ump run %s` to resume\n", rerun)
		}
		return err
	}
	if until != "" {
		fmt.Fprintf(stderr, "%d cells ran up to %s (%d failed); `ump show %.12s` shows them, `ump run %s` continues\n",
			out.Cells, until, out.Failed, plan.Hash, rerun)
		if out.Failed > 0 {
			return errCells
		}
		return nil
	}
	fmt.Fprintf(stderr, "%d cells: %d completed, %d diverged, %d failed (%d fully cached)\n",
		out.Cells, out.Completed, out.Diverged, out.Failed, out.Cached)
	reg, err := store.FindManifest(plan.Hash)
	if err != nil {
		return err
	}
	if err := printFinal(ctx, stdout, store, reg); err != nil {
		return err
	}
	if out.Diverged+out.Failed > 0 {
		return errCells
	}
	return nil
}
