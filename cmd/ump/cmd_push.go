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
		Usage:     "copy a manifest's artifacts to the S3 store of --artifacts and commit its finished cells there",
		ArgsUsage: "HASH",
		Description: "Blobs already in S3 are skipped. Each finished cell is committed once (a cell that another\n" +
			"machine committed with other outputs is an error, exit 4); unfinished cells leave their events for a\n" +
			"machine to resume from. A collaborator with the full hash and the bucket runs `ump pull HASH` to get\n" +
			"every table, plot and checkpoint of the finished cells.",
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
		Name: "pull",
		Usage: "copy a manifest's committed cells (artifacts and events) from the S3 store of " +
			"--artifacts into the store, in plan order",
		ArgsUsage: "HASH",
		Description: "Every commit must be signed by a key the store trusts (yours, or one `ump trust add`\n" +
			"listed) and agree with its events; otherwise the pull is refused (exit 3) naming the cell and\n" +
			"the key, and nothing is imported. `ump show HASH` says, for each pulled cell, where " +
			"it came\nfrom and who signed it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{
				Name: "trust-unsigned",
				Usage: "also import commits that carry no signature (pushed by an ump from before signing); " +
					"their results then count for this manifest alone, not as cache hits for other manifests",
			},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "the full 64-digit manifest hash")
			if err != nil {
				return err
			}
			return runPull(c.Context, globalsOf(c), hash, c.Bool("trust-unsigned"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runPush(ctx context.Context, g globals, hash string, stdout, stderr io.Writer) error {
	remote, err := g.remote(ctx, stderr)
	if err != nil {
		return err
	}
	store, err := openQuiet(ctx, globals{store: g.store, notes: g.notes}, "ump push")
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := store.Source().FindManifest(hash)
	if err != nil {
		return err
	}
	st, err := remote.Push(ctx, store, reg.Plan.Hash, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(
		stdout,
		"pushed manifest %s to %s: %d blobs uploaded (%d of them replacing a damaged copy), %d already there, "+
			"%d cells committed, %d already committed with the same outputs, %d events\n",
		reg.Plan.Hash,
		remote.Bucket,
		st.Blobs,
		st.Replaced,
		st.Present,
		st.Committed,
		st.Already,
		st.Events,
	)
	return nil
}

func runPull(ctx context.Context, g globals, hash string, unsigned bool, stdout, stderr io.Writer) error {
	if len(hash) != 64 {
		return badInput{fmt.Errorf("pull needs the full 64-digit manifest hash (got %q)", hash)}
	}
	remote, err := g.reader(ctx, unsigned)
	if err != nil {
		return err
	}
	store, err := pipeline.Open(g.store, "ump pull")
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := remote.Pull(ctx, store, hash, g.cellStages(), g.data, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pulled manifest %s from %s: %d blobs downloaded, %d already here, %d new events\n",
		hash, remote.Bucket, st.Blobs, st.Present, st.Events)
	return nil
}
