package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove the store's local blobs that no event refers to",
		Description: "Every blob an event names (stage outputs, checkpoints) is kept, so every completed cell\n" +
			"stays complete and every interrupted run resumable. Only --store's own blobs are\n" +
			"collected, never an S3 bucket (other stores may share it).",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "dry-run", Usage: "only report what would be removed"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return badInput{fmt.Errorf("gc takes no arguments")}
			}
			return runGC(c.Context, globalsOf(c), c.Bool("dry-run"), c.App.Writer)
		},
	}
}

func runGC(ctx context.Context, g globals, dryRun bool, w io.Writer) error {
	g.artifacts = "" // the store's own blobs
	store, err := openStore(ctx, g, "ump gc", false)
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := store.GC(dryRun)
	if err != nil {
		return err
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(w, "%s %d unreferenced blobs (%d bytes); kept %d referenced blobs (%d bytes)\n",
		verb, st.Removed, st.RemovedBytes, st.Kept, st.KeptBytes)
	return nil
}
