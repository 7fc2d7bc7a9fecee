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
	"github.com/ump-lab/ump/report/paper"
	"github.com/urfave/cli/v2"
)

func tableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "print a manifest's results as a paper-style table (Markdown, LaTeX or CSV)",
		ArgsUsage: "HASH",
		Description: "The manifest's table block chooses rows, columns, the value, which value is best and\n" +
			"the path tuned per entry (select: lr) or once per row ({by: lr, per: row}); seeds are\n" +
			"aggregated as mean ± std. Without a\n" +
			"block: a row per swept setting, lr tuned when swept, test_acc_mean (objective_gap for\n" +
			"the quadratic task). Diverged entries show *, entries not run yet –. --value picks\n" +
			"another column of the final table (e.g. consensus_acc, the averaged model's accuracy,\n" +
			"beside test_acc_mean, the local models' mean) without editing the manifest.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:  "value",
				Usage: "the final table's `COLUMN` to show and tune by, instead of the layout's value",
			},
			&cli.StringFlag{
				Name: "select-per",
				Usage: "tune the layout's select path in `SCOPE` instead of its first: entry (each entry its own " +
					"choice) or row (one choice per row, by the mean over its columns)",
			},
			&cli.BoolFlag{Name: "latex", Usage: "booktabs LaTeX, the best entry of each column in bold"},
			&cli.BoolFlag{Name: "csv", Usage: "one CSV row per entry"},
			&cli.BoolFlag{
				Name: "ci",
				Usage: "show each entry's 95% interval of the mean over seeds in place of ± std " +
					"(Student's t up to 5 seeds, a percentile bootstrap beyond)",
			},
			&cli.StringFlag{
				Name: "compare",
				Usage: "compare every row with `ROW` (its label as printed or its identifier, in any case, or a part " +
					"of either naming one row), per column: the difference of the means, Welch's p-value and the " +
					"probability of improvement",
			},
			&cli.BoolFlag{
				Name: "paper",
				Usage: "set each entry beside the paper's published one (manifests/published.yaml; paper manifests " +
					"only): the difference, whether the paper's mean lies in our 95% interval, each column's rank " +
					"agreement (Kendall's tau-b) and the paper's claims decided",
			},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			if c.Bool("latex") && c.Bool("csv") {
				return badInput{fmt.Errorf("choose one of --latex and --csv")}
			}
			if c.Bool("paper") && (c.Bool("ci") || c.String("compare") != "") {
				return badInput{
					fmt.Errorf(
						"--paper shows each entry's interval beside the paper's; it does not take --ci or --compare " +
							"(run ump table again with those)",
					),
				}
			}
			if per := c.String("select-per"); per != "" && !slices.Contains(manifests.SelectScopes, per) {
				return badInput{
					fmt.Errorf(
						"--select-per %q: use entry (each entry its own choice) or row (one choice per row, by the "+
							"mean over its columns)",
						per,
					),
				}
			}
			return runTable(
				c.Context,
				globalsOf(c),
				hash,
				tableOptions{
					value:     c.String("value"),
					selectPer: c.String("select-per"),
					latex:     c.Bool("latex"),
					csv:       c.Bool("csv"),
					ci:        c.Bool("ci"),
					compare:   c.String("compare"),
					paper:     c.Bool("paper"),
				},
				c.App.Writer,
			)
		},
	}
}

// tableOptions are ump table's flags.
type tableOptions struct {
	value, selectPer, compare string
	latex, csv, ci, paper     bool
}

func runTable(ctx context.Context, g globals, hash string, o tableOptions, w io.Writer) error {
	store, rep, err := openReport(ctx, g, hash, "ump table")
	if err != nil {
		return err
	}
	defer store.Close()
	if g.notes != nil {
		if err := report.WriteOtherEngine(g.notes, "", g.ump, store.Source(), rep); err != nil {
			return err
		}
	}
	t := report.Layout(&rep.Plan)
	if o.value != "" {
		t.Value, t.Best = o.value, manifests.BestFor(o.value)
		t.Also = slices.DeleteFunc(slices.Clone(t.Also), func(a string) bool { return a == o.value })
	}
	if o.selectPer != "" {
		if t.Select == "" {
			return badInput{
				fmt.Errorf(
					"--select-per %s: the table of %.12s tunes no path (table.select)",
					o.selectPer,
					rep.Plan.Hash,
				),
			}
		}
		t = t.Scoped(o.selectPer)
	}
	grid, err := report.ReadGrid(ctx, store.Source(), rep, t)
	if err != nil && o.value != "" {
		return fmt.Errorf("--value %s: %w", o.value, err)
	}
	if err != nil {
		return err
	}
	if o.paper {
		pc, err := paperComparison(&rep.Plan, grid)
		if err != nil {
			return err
		}
		return writeTable(pc, o, w)
	}
	grid.Intervals = o.ci
	if o.compare != "" {
		r, ok := grid.RowIndex(o.compare)
		if !ok {
			var rows []string
			for r := range grid.RowLabels {
				rows = append(rows, grid.RowTitle(r))
			}
			return badInput{
				fmt.Errorf(
					"--compare %q: name one row, by its label as printed, its identifier, or a part of either found "+
						"in no other; the rows: %s",
					o.compare,
					strings.Join(rows, "; "),
				),
			}
		}
		grid.Baseline = grid.RowLabels[r]
	}
	return writeTable(grid, o, w)
}

// renderedTable is a table ump table prints: a grid, or a grid beside the
// paper's.
type renderedTable interface {
	Markdown() string
	LaTeX() string
	Table() *artifacts.Table
}

// writeTable writes t as --latex or --csv ask, else as Markdown.
func writeTable(t renderedTable, o tableOptions, w io.Writer) (err error) {
	switch {
	case o.latex:
		_, err = io.WriteString(w, t.LaTeX())
	case o.csv:
		var b bytes.Buffer
		if err = artifacts.WriteCSV(&b, t.Table()); err == nil {
			_, err = w.Write(b.Bytes())
		}
	default:
		_, err = io.WriteString(w, t.Markdown())
	}
	return err
}

// paperComparison sets the grid of plan's results beside the paper's
// published table for its manifest.
func paperComparison(plan *manifests.Plan, grid *report.Grid) (*paper.PaperComparison, error) {
	name := plan.Manifest.Name
	pub, err := report.Paper()
	if err != nil {
		return nil, err
	}
	t := pub.Table(name)
	if t == nil {
		var names []string
		for _, t := range pub.Tables {
			names = append(names, t.Manifest)
		}
		return nil, badInput{
			fmt.Errorf(
				"--paper: the paper publishes no table for manifest %q; it does for: %s",
				name,
				strings.Join(names, ", "),
			),
		}
	}
	return paper.ComparePaper(pub, plan, grid, t, nil), nil
}
