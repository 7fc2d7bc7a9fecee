package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
	"github.com/urfave/cli/v2"
)

func tableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "print a manifest's results as a paper-style table (Markdown, LaTeX or CSV)",
		ArgsUsage: "HASH",
		Description: "The manifest's table block chooses rows, columns, the value, which value is best and\n" +
			"the path tuned per entry (select: lr); seeds are aggregated as mean ± std. Without a\n" +
			"block: a row per swept setting, lr tuned when swept, test_acc_mean (objective_gap for\n" +
			"the quadratic task). Diverged entries show *, entries not run yet –. --value picks\n" +
			"another column of the final table (e.g. consensus_acc, the averaged model's accuracy,\n" +
			"beside test_acc_mean, the local models' mean) without editing the manifest.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "value", Usage: "the final table's `COLUMN` to show and tune by, instead of the layout's value"},
			&cli.BoolFlag{Name: "latex", Usage: "booktabs LaTeX, the best entry of each column in bold"},
			&cli.BoolFlag{Name: "csv", Usage: "one CSV row per entry"},
			&cli.BoolFlag{Name: "paper", Usage: "set each entry beside the paper's published one (manifests/published.yaml; paper manifests only): the difference, whether the paper's mean lies in our 95% interval, each column's rank agreement (Kendall's tau-b) and the paper's claims decided"},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			if c.Bool("latex") && c.Bool("csv") {
				return badInput{fmt.Errorf("choose one of --latex and --csv")}
			}
			return runTable(c.Context, globalsOf(c), hash, c.String("value"), c.Bool("latex"), c.Bool("csv"), c.Bool("paper"), c.App.Writer)
		},
	}
}

func runTable(ctx context.Context, g globals, hash, value string, latex, csv, paper bool, w io.Writer) error {
	store, rep, err := openReport(ctx, g, hash, "ump table")
	if err != nil {
		return err
	}
	defer store.Close()
	if g.notes != nil {
		if err := noteOtherEngine(g.notes, "", store, rep); err != nil {
			return err
		}
	}
	t := report.Layout(&rep.Plan)
	if value != "" {
		t.Value, t.Best = value, manifests.BestFor(value)
		t.Also = slices.DeleteFunc(slices.Clone(t.Also), func(a string) bool { return a == value })
	}
	grid, err := store.Source().Grid(ctx, rep, t)
	if err != nil && value != "" {
		return fmt.Errorf("--value %s: %w", value, err)
	}
	if err != nil {
		return err
	}
	if paper {
		return writePaperComparison(grid, rep.Plan.Manifest.Name, latex, csv, w)
	}
	switch {
	case latex:
		_, err = io.WriteString(w, grid.LaTeX())
	case csv:
		var b bytes.Buffer
		if err = artifacts.WriteCSV(&b, grid.Table()); err == nil {
			_, err = w.Write(b.Bytes())
		}
	default:
		_, err = io.WriteString(w, grid.Markdown())
	}
	return err
}

// writePaperComparison writes the grid of the manifest named name beside
// the paper's published table for it.
func writePaperComparison(grid *report.Grid, name string, latex, csv bool, w io.Writer) error {
	published, err := report.ParsePublished(manifests.Published)
	if err != nil {
		return err
	}
	t := published.Table(name)
	if t == nil {
		var names []string
		for _, t := range published.Tables {
			names = append(names, t.Manifest)
		}
		return badInput{fmt.Errorf("--paper: the paper publishes no table for manifest %q; it does for: %s", name, strings.Join(names, ", "))}
	}
	pc := published.ComparePaper(grid, t)
	switch {
	case latex:
		_, err = io.WriteString(w, pc.LaTeX())
	case csv:
		var b bytes.Buffer
		if err = artifacts.WriteCSV(&b, pc.Table()); err == nil {
			_, err = w.Write(b.Bytes())
		}
	default:
		_, err = io.WriteString(w, pc.Markdown())
	}
	return err
}
