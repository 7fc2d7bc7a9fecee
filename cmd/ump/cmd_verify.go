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
		Usage:     "read back every stored blob of a manifest, recompute it with caching off and check every output digest against the record",
		ArgsUsage: "HASH",
		Description: "First every blob the manifest's events name (outputs, checkpoints) is read back and checked\n" +
			"against its digest; then every cell is recomputed in memory. With --repair, each missing or\n" +
			"corrupt blob that the recomputation reproduces is stored again.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "repair", Usage: "store again the damaged blobs that the recomputation reproduces"}},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runVerify(c.Context, globalsOf(c), hash, c.Bool("repair"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runVerify(ctx context.Context, g globals, hash string, repair bool, stdout, stderr io.Writer) error {
	var store *pipeline.Store
	var err error
	if repair {
		store, err = openStore(ctx, g, "ump verify --repair", false)
	} else {
		store, err = openQuiet(ctx, g, "ump verify") // it only reads the store
	}
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := store.Source().FindManifest(hash)
	if err != nil {
		return err
	}
	read, damaged, err := pipeline.CheckBlobs(ctx, store, reg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "blobs: %d named by the manifest's events, %d read back whole, %d missing or corrupt\n", read, read-len(damaged), len(damaged))
	checks, err := g.runner(store, stderr).Verify(ctx, reg, damaged, repair)
	if err != nil {
		return err
	}
	unrepaired := 0
	for _, d := range damaged {
		status := "not repaired: `ump verify --repair` stores it again if the recomputation reproduces it"
		switch {
		case d.Repaired:
			status = "repaired from the recomputation"
		case repair:
			status = "not reproduced by the recomputation, so not repaired (restore the store from a backup, or `ump pull` the manifest)"
		}
		if !d.Repaired {
			unrepaired++
		}
		fmt.Fprintf(stdout, "  cell %d %s: %v; %s\n", d.Cell+1, d.What, d.Err, status)
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
	if unrepaired > 0 {
		fmt.Fprintf(stderr, "%d stored blobs are missing or corrupt\n", unrepaired)
		return errCells
	}
	return nil
}
