package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/urfave/cli/v2"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name: "verify",
		Usage: "read back every stored blob of a manifest, recompute it with caching off and check every output " +
			"digest against the record; or recompute cells of a results directory and check every figure",
		ArgsUsage: "HASH|DIR",
		Description: "HASH: first every blob the manifest's events name (outputs, checkpoints) is read back\n" +
			"and checked against its digest; then every cell is recomputed in memory. With --repair, each\n" +
			"missing or corrupt blob that the recomputation reproduces is stored again.\n" +
			"DIR (a directory ump report wrote): each finished cell (or those --cells names) is computed again\n" +
			"in a scratch store, and its status and every figure of every round both evaluated must be the\n" +
			"committed ones bit for bit (exit 4 where they are not).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "repair", Usage: "store again the damaged blobs that the recomputation reproduces"},
			&cli.StringFlag{
				Name: "cells",
				Usage: "with DIR, the cells to compute again, as `N,M,...` (from 1, as ump show numbers them); all " +
					"finished cells by default",
			},
		},
		Action: func(c *cli.Context) error {
			arg, err := oneArg(c, "a manifest hash or unique prefix, or a results directory")
			if err != nil {
				return err
			}
			if resultsdir.IsExported(arg) {
				if c.Bool("repair") {
					return badInput{fmt.Errorf("--repair repairs a store; %s is a results directory", arg)}
				}
				return runVerifyDir(c.Context, globalsOf(c), arg, c.String("cells"), c.App.Writer, c.App.ErrWriter)
			}
			if c.IsSet("cells") {
				return badInput{fmt.Errorf("--cells takes a results directory, not a manifest hash (%s)", arg)}
			}
			return runVerify(c.Context, globalsOf(c), arg, c.Bool("repair"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runVerifyDir computes cells of a results directory again, each alone in
// a scratch store, and compares their figures with the committed ones.
func runVerifyDir(ctx context.Context, g globals, dir, cells string, stdout, stderr io.Writer) error {
	x, err := resultsdir.ReadExportedFinals(dir)
	if err != nil {
		return err
	}
	plan := &x.Registration.Plan
	picked, err := x.FinishedCells(cells)
	if err != nil {
		return err
	}
	if err := g.gpuBuilt(plan); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "ump-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	store, err := pipeline.Open(scratch, "ump verify")
	if err != nil {
		return err
	}
	defer store.Close()
	runner := g.runner(store, stderr)
	fmt.Fprintf(stdout, "%s (%s, %.12s): computing %d of its %d cells again in a scratch store, on kernels %s\n",
		dir, display.Terminal(plan.Manifest.Name), plan.Hash, len(picked), len(plan.Cells), runner.Engines.Kernels())
	keys, err := runner.Keys(ctx, plan)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, i := range picked {
		if keys[i] != x.Registration.CellKeys[i] {
			return badInput{
				fmt.Errorf(
					"cell %d %s (key %.12s): its key here is %.12s: this machine computes it under other inputs "+
						"(engine %s, or other data), so its figures are not comparable",
					i+1,
					plan.Cells[i].LabelString(),
					x.Registration.CellKeys[i],
					keys[i],
					display.Terminal(x.Engines()),
				),
			}
		}
	}
	runner.Cells, runner.Overrides = picked, x.Registration.Overrides
	if _, err := runner.Run(ctx, plan); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	rep, err := store.Source().FindReport(plan.Hash)
	if err != nil {
		return err
	}
	y, err := resultsdir.ExportOf(ctx, store.Source(), rep)
	if err != nil {
		return err
	}
	bad := 0
	for _, i := range picked {
		name := fmt.Sprintf("cell %d %s (key %.12s)", i+1, plan.Cells[i].LabelString(), x.Registration.CellKeys[i])
		rounds, err := x.SameCell(i, y)
		if err != nil {
			bad++
			fmt.Fprintf(stdout, "%s: DIFFERS: %v\n", name, err)
			continue
		}
		fmt.Fprintf(
			stdout,
			"%s: ok, its status and every figure of the final row and of %d rounds identical\n",
			name,
			rounds,
		)
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d of %d cells of %s differ from their committed figures, computed again on kernels %s",
			fleet.ErrNondeterministic, bad, len(picked), dir, runner.Engines.Kernels())
	}
	return nil
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
	if err := g.gpuBuilt(&reg.Plan); err != nil {
		return err
	}
	read, damaged, err := pipeline.CheckBlobs(ctx, store, reg)
	if err != nil {
		return err
	}
	fmt.Fprintf(
		stdout,
		"blobs: %d named by the manifest's events, %d read back whole, %d missing or corrupt\n",
		read,
		read-len(damaged),
		len(damaged),
	)
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
			status = "not reproduced by the recomputation, so not repaired (restore the store from a " +
				"backup, or `ump pull` the manifest)"
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
				fmt.Fprintf(
					stdout,
					"  %s/%s: no recorded output to compare (run the manifest first); got %s\n",
					o.Stage,
					o.Output,
					o.Got,
				)
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
