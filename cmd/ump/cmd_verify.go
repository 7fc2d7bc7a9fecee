package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "recompute a stored manifest with caching off and check every output digest against the record",
		ArgsUsage: "HASH",
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runVerify(c.Context, globalsOf(c), hash, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runVerify(ctx context.Context, g globals, hash string, stdout, stderr io.Writer) error {
	store, err := openStore(ctx, g, "ump verify", false)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := findManifest(store, hash)
	if err != nil {
		return err
	}
	checks, err := pipeline.Verify(ctx, store, reg, pipeline.DefaultStages(), g.data, g.device, stderr)
	if err != nil {
		return err
	}
	bad := 0
	for _, c := range checks {
		if c.OK() {
			fmt.Fprintf(stdout, "cell %d %s: ok, %d outputs match\n", c.Index+1, c.Label, len(c.Checks))
			continue
		}
		bad++
		fmt.Fprintf(stdout, "cell %d %s: MISMATCH\n", c.Index+1, c.Label)
		if c.Err != nil {
			fmt.Fprintf(stdout, "  recomputation failed: %v\n", c.Err)
		}
		for _, o := range c.Checks {
			switch {
			case o.Recorded == "":
				fmt.Fprintf(stdout, "  %s/%s: no recorded output to compare (run the manifest first); got %s\n", o.Stage, o.Output, o.Got)
			case !o.OK():
				fmt.Fprintf(stdout, "  %s/%s: recorded %s, got %s\n", o.Stage, o.Output, o.Recorded, o.Got)
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d of %d cells did not reproduce", errCells, bad, len(checks))
	}
	return nil
}
