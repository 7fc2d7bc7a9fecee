package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/figures"
	"github.com/urfave/cli/v2"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw a manifest's curves (a line per table row, a band over seeds) and partition heat maps",
		ArgsUsage: "HASH",
		Description: "Writes into --out: curves.png/.svg, the figure against rounds or, with --x bits, against bits\n" +
			"sent per worker: a line per table row, and for a table with columns one panel per column with one\n" +
			"y axis range (--per-column: a file per column, curves-<N>-<column>.png, instead); with --against PATH,\n" +
			"against-<PATH>.png/.svg, the final figure of each row against a swept parameter, e.g. --against\n" +
			"algorithm.beta; and partition-cell<N>.png/.svg, a worker x class heat map of each distinct partition.\n" +
			"File names hold letters, digits, '-' and '_' only, as shells and LaTeX take them.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name: "y",
				Usage: "the rounds-table column to plot (default: the table block's value, else test_acc_mean, " +
					"objective_gap for the quadratic task)",
			},
			&cli.StringFlag{Name: "x", Value: "round", Usage: "round, or bits (bits_sent_per_worker)"},
			&cli.StringFlag{
				Name:  "out",
				Value: "plots",
				Usage: "the output `DIR` (not a repository's root or a directory of source code)",
			},
			&cli.StringFlag{
				Name:  "format",
				Value: "png,svg",
				Usage: "a comma-separated list of png (300 dpi), svg and pdf",
			},
			&cli.BoolFlag{Name: "per-column", Usage: "a file per table column instead of one figure of panels"},
			&cli.StringFlag{
				Name: "against",
				Usage: "also draw the final figure against this swept `PATH` (e.g. " +
					"algorithm.beta), a line per other setting",
			},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runPlot(c.Context, globalsOf(c), hash, plotOptions{y: c.String("y"), x: c.String("x"),
				out: c.String("out"), formats: strings.Split(c.String("format"), ","), perColumn: c.Bool("per-column"),
				against: c.String("against")}, c.App.Writer)
		},
	}
}

type plotOptions struct {
	x, y, out, against string
	formats            []string
	perColumn          bool
}

func runPlot(ctx context.Context, g globals, hash string, o plotOptions, w io.Writer) error {
	for _, f := range o.formats {
		if f != "png" && f != "svg" && f != "pdf" {
			return badInput{
				fmt.Errorf("--format %q: use png, svg, pdf or a comma-separated list of them, e.g. png,pdf", f),
			}
		}
	}
	switch o.x {
	case "round":
	case "bits":
		o.x = "bits_sent_per_worker"
	default:
		return badInput{fmt.Errorf("--x %q: use round or bits", o.x)}
	}
	if err := checkOutDir(o.out); err != nil {
		return err
	}
	store, rep, err := openReport(ctx, g, hash, "ump plot")
	if err != nil {
		return err
	}
	defer store.Close()
	spec := report.Layout(&rep.Plan)
	if o.y == "" {
		o.y = spec.Value
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	figs, err := report.Curves(ctx, store.Source(), rep, spec, report.CurveOptions{X: o.x, Y: o.y})
	if err != nil {
		return err
	}
	save := figures.Saver(func(name string, draw func(path string) error) error {
		for _, f := range o.formats {
			path := filepath.Join(o.out, name+"."+f)
			if err := draw(path); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			fmt.Fprintln(w, path)
		}
		return nil
	})
	if o.against != "" {
		if err := figures.Against(ctx, store.Source(), rep, spec, o.against, save); err != nil {
			return err
		}
	}
	if err := figures.Curves(figs, spec, report.FigureTitle(&rep.Plan), o.perColumn, save, w); err != nil {
		return err
	}
	return figures.Partitions(ctx, store.Source(), rep, save)
}
