package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name: "compare",
		Usage: "set two computations of one manifest side by side (two engines, two machines): per cell the " +
			"status and the difference of the table's figure; per table the entries, choices of lr and verdicts on " +
			"the paper's claims that differ",
		ArgsUsage: "A B",
		Description: "A and B are each a manifest in the store (a hash or unique prefix) or a directory of results\n" +
			"`ump report` wrote. Cells are matched by their settings, the engine aside; only cells both\n" +
			"finished are compared. A directory needs only " + resultsdir.RegistrationFile + ", " +
			resultsdir.FinalFile + " and " + resultsdir.RoundsFile + ":\n" +
			"files its record lists that are absent (the CSV copies, the manifest) are named, not refused.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return badInput{
					fmt.Errorf(
						"ump compare needs two computations of one manifest, A and B (hashes or directories of "+
							"results; got %d)",
						c.NArg(),
					),
				}
			}
			return runCompare(c.Context, globalsOf(c), c.Args().Get(0), c.Args().Get(1), c.App.Writer)
		},
	}
}

func runCompare(ctx context.Context, g globals, a, b string, w io.Writer) error {
	var store *pipeline.Store
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	load := func(arg string) (*resultsdir.Exported, error) {
		if resultsdir.IsExported(arg) {
			return resultsdir.ReadExportedFinals(arg)
		}
		if store == nil {
			var err error
			if store, err = openStore(ctx, g, "ump compare", true); err != nil {
				return nil, err
			}
		}
		rep, err := store.Source().FindReport(arg)
		if err != nil {
			return nil, err
		}
		return resultsdir.ExportOf(ctx, store.Source(), rep)
	}
	xa, err := load(a)
	if err != nil {
		return err
	}
	xb, err := load(b)
	if err != nil {
		return err
	}
	cmp, err := resultsdir.Compare(a, b, xa, xb)
	if err != nil {
		return badInput{err}
	}
	_, err = io.WriteString(w, cmp.Markdown())
	return err
}
