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
		Action: func(c *cli.Context) error {
			path, err := oneArg(c, "the manifest file")
			if err != nil {
				return err
			}
			return runRun(c.Context, globalsOf(c), path, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runRun(ctx context.Context, g globals, path string, stdout, stderr io.Writer) error {
	plan, err := manifests.Open(path)
	if err != nil {
		return err
	}
	store, err := pipeline.Open(g.store, "ump run "+path)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "manifest %s\n", plan.Hash)
	runner := &pipeline.Runner{Store: store, Stages: pipeline.DefaultStages(), Progress: stderr}
	out, err := runner.Run(ctx, plan)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "stopped at a safe point; rerun `ump run %s` to resume\n", path)
		}
		return err
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
