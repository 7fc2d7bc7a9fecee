package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "copy a manifest's artifacts and events from the store to the S3 store of --artifacts",
		ArgsUsage: "HASH",
		Description: "Blobs already in S3 are skipped. A collaborator with the full hash and the bucket\n" +
			"runs `ump pull HASH` to get every table, plot and checkpoint.",
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runPush(c.Context, globalsOf(c), hash, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func pullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "copy a pushed manifest's artifacts and events from the S3 store of --artifacts into the store",
		ArgsUsage: "HASH",
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "the full 64-digit manifest hash")
			if err != nil {
				return err
			}
			return runPull(c.Context, globalsOf(c), hash, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runPush(ctx context.Context, g globals, hash string, stdout, stderr io.Writer) error {
	s3, err := g.s3(ctx)
	if err != nil {
		return err
	}
	store, err := openQuiet(ctx, globals{store: g.store, notes: g.notes}, "ump push")
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := findManifest(store, hash)
	if err != nil {
		return err
	}
	st, err := store.Push(ctx, reg.Plan.Hash, s3, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed manifest %s to %s: %d blobs uploaded (%d of them replacing a damaged copy), %d already there, %d events\n",
		reg.Plan.Hash, s3, st.Blobs, st.Replaced, st.Present, st.Events)
	return nil
}

func runPull(ctx context.Context, g globals, hash string, stdout, stderr io.Writer) error {
	if len(hash) != 64 {
		return badInput{fmt.Errorf("pull needs the full 64-digit manifest hash (got %q)", hash)}
	}
	s3, err := g.s3(ctx)
	if err != nil {
		return err
	}
	store, err := pipeline.Open(g.store, "ump pull")
	if err != nil {
		return storeError{err}
	}
	defer store.Close()
	st, err := store.Pull(ctx, hash, s3, g.data, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pulled manifest %s from %s: %d blobs downloaded, %d already here, %d new events\n",
		hash, s3, st.Blobs, st.Present, st.Events)
	return nil
}
