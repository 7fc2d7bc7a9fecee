package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/stages"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/urfave/cli/v2"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw a manifest's curves (a line per table row, a band over seeds) and partition heat maps",
		ArgsUsage: "HASH",
		Description: "Writes into --out: curves.png/.svg (one file per table column, curves-<column>.png),\n" +
			"the figure against rounds or, with --x bits, against bits sent per worker; and\n" +
			"partition-cell<N>.png/.svg, a worker x class heat map of each distinct partition.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "y", Usage: "the rounds-table column to plot (default: the table block's value, else test_acc_mean, objective_gap for the quadratic task)"},
			&cli.StringFlag{Name: "x", Value: "round", Usage: "round, or bits (bits_sent_per_worker)"},
			&cli.StringFlag{Name: "out", Value: "plots", Usage: "the output `DIR` (not a repository's root or a directory of source code)"},
			&cli.StringFlag{Name: "format", Value: "png,svg", Usage: "a comma-separated list of png (300 dpi), svg and pdf"},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runPlot(c.Context, globalsOf(c), hash, plotOptions{y: c.String("y"), x: c.String("x"),
				out: c.String("out"), formats: strings.Split(c.String("format"), ",")}, c.App.Writer)
		},
	}
}

type plotOptions struct {
	x, y, out string
	formats   []string
}

func runPlot(ctx context.Context, g globals, hash string, o plotOptions, w io.Writer) error {
	for _, f := range o.formats {
		if f != "png" && f != "svg" && f != "pdf" {
			return badInput{fmt.Errorf("--format %q: use png, svg, pdf or a comma-separated list of them, e.g. png,pdf", f)}
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
	save := func(name string, draw func(path string) error) error {
		for _, f := range o.formats {
			path := filepath.Join(o.out, name+"."+f)
			if err := draw(path); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			fmt.Fprintln(w, path)
		}
		return nil
	}
	for c, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s report.Series) bool { return len(s.X) > 0 }) {
			fmt.Fprintf(w, "no completed training for %s yet: no curves\n", fig.Name)
			continue
		}
		name := "curves"
		if len(figs) > 1 || len(spec.Columns) > 0 {
			name = fmt.Sprintf("curves-%d-%s", c+1, fileSafe(fig.Name))
		}
		if err := save(name, func(path string) error { return render.Figure(&fig, path) }); err != nil {
			return err
		}
	}
	var drawn []string
	for i, cell := range rep.Cells {
		ref, ok := cell.Output(stages.Histogram)
		if !ok || slices.Contains(drawn, ref.Digest) {
			continue
		}
		drawn = append(drawn, ref.Digest)
		data, err := store.Blobs.Get(ctx, ref)
		if err != nil {
			return err
		}
		t, err := artifacts.ReadArrow(data)
		if err != nil {
			return err
		}
		cfg := &rep.Plan.Cells[i].Config
		title := fmt.Sprintf("partition of cell %d (%s, %d workers, seed %d)", i+1, partitionLabel(cfg), cfg.Workers, cfg.Seed)
		if err := save(fmt.Sprintf("partition-cell%d", i+1), func(path string) error { return render.Histogram(t, title, path) }); err != nil {
			return err
		}
	}
	return nil
}

// partitionLabel names a cell's partition: its kind and parameters.
func partitionLabel(cfg *manifests.Manifest) string {
	if cfg.Partition == nil {
		return "iid"
	}
	parts := []string{cfg.Partition.Kind}
	for _, k := range slices.Sorted(maps.Keys(cfg.Partition.Params)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, cfg.Partition.Params[k]))
	}
	return strings.Join(parts, " ")
}

// fileSafe turns a label into a file name part.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\ :*?"<>|(),`, r) {
			return '_'
		}
		return r
	}, s)
}
