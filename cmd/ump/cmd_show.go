package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ump-lab/ump/report"
	"github.com/urfave/cli/v2"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a manifest's cells: stages, their cache keys, inputs, outputs and events",
		ArgsUsage: "HASH",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "events", Usage: "also print every event of every cell as JSON lines"},
			&cli.BoolFlag{Name: "manifest", Usage: "print only the normalised manifest (JSON)"},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runShow(c.Context, globalsOf(c), hash, c.Bool("events"), c.Bool("manifest"), c.App.Writer)
		},
	}
}

func runShow(ctx context.Context, g globals, hash string, events, manifestOnly bool, w io.Writer) error {
	store, rep, err := openReport(ctx, g, hash, "ump show")
	if err != nil {
		return err
	}
	defer store.Close()
	if manifestOnly {
		data, _ := json.MarshalIndent(rep.Plan.Manifest, "", "  ")
		fmt.Fprintln(w, string(data))
		return nil
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", rep.Plan.Hash, rep.Plan.Manifest.Name, report.CountLine(rep))
	if err := report.WriteAbout(w, "  ", store.Source(), rep); err != nil {
		return err
	}
	show := &report.Show{
		W:      w,
		Src:    store.Source(),
		Export: fmt.Sprintf("%s export --manifest %.12s", g.ump, rep.Plan.Hash),
	}
	for i := range rep.Cells {
		if err := show.Cell(ctx, rep, i, events); err != nil {
			return err
		}
	}
	return nil
}
