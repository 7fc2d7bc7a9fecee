package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write one reproduction report of manifests: each table beside the paper's with the claims decided, the figures (PNG and PDF), the commands and hashes, the ump version and engine, and the results as Parquet and CSV",
		ArgsUsage: "HASH|DIR ...",
		Description: "Each argument is a manifest in the store (a hash or unique prefix) or a directory an earlier\n" +
			"report wrote for one (it holds " + report.RegistrationFile + ", " + report.FinalFile + " and " + report.RoundsFile + "): a report\n" +
			"regenerates from committed results without the store. Writes --out/report.md and, per\n" +
			"manifest, --out/NAME-HASH12/: the results and the figures (curves-N-COLUMN.png and .pdf).\n" +
			"Only finished cells are reported; entries not run show –.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "ump-report", Usage: "the output `DIR` (not a directory of source code)"},
			&cli.StringFlag{Name: "as", Usage: "report the one DIR's results as those of `MANIFEST` (an embedded name or a file, with DIR's overrides): the same cells under another table block, such as a paper manifest whose layout changed after the results were computed"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return badInput{fmt.Errorf("ump report needs one or more manifest hashes (or directories an earlier report wrote)")}
			}
			if c.String("as") != "" && (c.NArg() != 1 || !report.IsExported(c.Args().First())) {
				return badInput{fmt.Errorf("--as %s takes one directory of results (one that an earlier report wrote)", c.String("as"))}
			}
			return runReport(c.Context, globalsOf(c), c.Args().Slice(), c.String("out"), c.String("as"), c.App.Writer)
		},
	}
}

func runReport(ctx context.Context, g globals, args []string, out, as string, w io.Writer) error {
	if err := checkReportDir(out); err != nil {
		return err
	}
	var store *pipeline.Store
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	key, err := reportKey(g)
	if err != nil {
		return err
	}
	var all []*report.Exported
	for _, arg := range args {
		if info, err := os.Stat(arg); report.IsExported(arg) || err == nil && info.IsDir() { // a directory: exported results (it says what it lacks)
			x, err := report.ReadExported(arg)
			if err != nil {
				return err
			}
			if as != "" {
				plan, err := manifests.Open(as, x.Registration.Overrides...)
				if err != nil {
					return badInput{fmt.Errorf("--as: %w", err)}
				}
				if x, err = x.As(plan); err != nil {
					return err
				}
			}
			all = append(all, x)
			continue
		}
		if store == nil {
			var err error
			if store, err = openStore(ctx, g, "ump report", true); err != nil {
				return err
			}
		}
		rep, err := store.Source().FindReport(arg)
		if err != nil {
			return err
		}
		x, err := report.ExportOf(ctx, store.Source(), rep)
		if err != nil {
			return err
		}
		if key != nil { // the results come from the user's own store
			x.Signer = key.Public()
		}
		all = append(all, x)
	}
	for i, x := range all { // one section and one directory per manifest
		for _, y := range all[:i] {
			if x.Registration.Plan.Hash == y.Registration.Plan.Hash {
				return badInput{fmt.Errorf("%s and %s are the same manifest (%.12s): name each manifest once", args[slices.Index(all, y)], args[i], x.Registration.Plan.Hash)}
			}
		}
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "# Reproduction report\n\nWritten by `ump report` (ump %s) from %d manifest(s). Each directory beside this file holds a manifest's\n"+
		"results; `ump report DIR... --out OUT` writes this report again from them, without the store.\n", state.Version(), len(all))
	for _, x := range all {
		dir := fmt.Sprintf("%s-%.12s", x.Registration.Plan.Manifest.Name, x.Registration.Plan.Hash)
		if err := x.Write(filepath.Join(out, dir), key); err != nil {
			return err
		}
		section, err := reportSection(x, out, dir)
		if err != nil {
			return fmt.Errorf("manifest %.12s: %w", x.Registration.Plan.Hash, err)
		}
		doc.WriteString(section)
	}
	path, err := report.PathInside(out, "report.md")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(w, path)
	return nil
}

// reportKey is the user's signing key, which signs each directory's
// record, or nil when none is set up (the report is then unsigned; ump
// creates the key for S3, or ump key show).
func reportKey(g globals) (*signing.Key, error) {
	if _, err := os.Stat(g.key); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return signing.Load(g.key)
}

// reportSection is a manifest's part of the report; its figures are drawn
// into out/dir.
func reportSection(x *report.Exported, out, dir string) (string, error) {
	plan := &x.Registration.Plan
	var b strings.Builder
	counts := x.Counts()
	cells := fmt.Sprintf("%d: %d completed, %d diverged", len(plan.Cells), counts[eventlog.Completed], counts[eventlog.Diverged])
	if left := len(plan.Cells) - counts[eventlog.Completed] - counts[eventlog.Diverged]; left > 0 {
		cells += fmt.Sprintf(", %d not finished (not reported)", left)
	}
	link := func(name string) string { return fmt.Sprintf("[%s](%s/%s)", name, dir, name) }
	fmt.Fprintf(&b, "\n## %s\n\n| | |\n|---|---|\n", display.Markdown(plan.Manifest.Name))
	run := "`" + x.Command(dir) + "`"
	if strings.HasSuffix(run, report.ManifestFile+"`") {
		run += " (from this report's directory)"
	}
	fmt.Fprintf(&b, "| manifest | `%s` |\n| run it | %s |\n| check it | `ump verify %.12s` (recomputes every cell and compares each output's digest) |\n",
		plan.Hash, run, plan.Hash)
	signed := "no: nothing vouches that these files are what ump wrote (set up a key with `ump key show`)"
	if x.Signer != "" {
		signed = "by " + display.Markdown(x.Signer) + " (" + report.RecordFile + ": every file's digest; `ump report` of this directory checks them)"
	}
	fmt.Fprintf(&b, "| cells | %s |\n| engine | %s |\n| computed by | %s |\n| signed | %s |\n", cells, display.Markdown(x.Engines()), display.Markdown(x.Versions()), signed)
	fmt.Fprintf(&b, "| results | %s, %s (and their .csv), %s |\n", link(report.FinalFile), link(report.RoundsFile), link(report.RegistrationFile))
	grid, tables, err := reportTables(x)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\n### Table\n\n%s", tables["grid"])
	if beside, ok := tables["paper"]; ok {
		fmt.Fprintf(&b, "\n### Beside the paper's\n\n%s", beside)
	}
	for _, scope := range grid.Spec.SelectPer[min(1, len(grid.Spec.SelectPer)):] {
		what := fmt.Sprintf("%s chosen %s", grid.Spec.Select, scopeWords[scope])
		fmt.Fprintf(&b, "\n### Table with %s (a declared variant: `ump table %.12s --select-per %s`)\n\n%s", what, plan.Hash, scope, tables["grid "+scope])
		if beside, ok := tables["paper "+scope]; ok {
			fmt.Fprintf(&b, "\n### Beside the paper's, with %s\n\n%s", what, beside)
		}
	}
	if fig, ok := grid.SweepFigure(report.FigureTitle(plan)); ok {
		name := fileSafe(fig.Name)
		if err := drawFigure(&fig, out, dir, name); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n### Against %s\n\n![%s against %s](%s/%s.png)\n\n%s of the final round against %s: a line per row at its tuned learning rate, the mean over seeds with ± 1 std as error bars ([PDF](%s/%s.pdf)).\n",
			fig.X, fig.Y, fig.X, dir, name, fig.Y, fig.X, dir, name)
	}
	figs, err := x.Curves(grid, report.CurveOptions{X: "round", Y: grid.Spec.Value})
	if err != nil {
		return "", err
	}
	b.WriteString("\n### Figures\n")
	for c, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s report.Series) bool { return len(s.X) > 0 }) {
			continue
		}
		name := fmt.Sprintf("curves-%d-%s", c+1, fileSafe(fig.Name))
		if err := drawFigure(&fig, out, dir, name); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n![%s](%s/%s.png)\n\n%s: every row at its tuned learning rate, mean over seeds with a ±1 std band ([PDF](%s/%s.pdf)).\n",
			fig.Title, dir, name, fig.Title, dir, name)
	}
	return b.String(), nil
}

// drawFigure draws fig as out/dir/name.png (300 dpi) and .pdf.
func drawFigure(fig *report.Figure, out, dir, name string) error {
	for _, ext := range []string{".png", ".pdf"} {
		path, err := report.PathInside(out, dir, name+ext)
		if err != nil {
			return err
		}
		if err := render.Figure(fig, path); err != nil {
			return err
		}
	}
	return nil
}

// reportTables lays out an exported manifest's table and renders it in
// Markdown: "grid" as `ump table` prints it and, where the paper publishes
// a table for the manifest, "paper" beside it (`ump table --paper`); the
// same as "grid SCOPE" and "paper SCOPE" for each other scope the table
// declares (`ump table --select-per SCOPE`).
func reportTables(x *report.Exported) (*report.Grid, map[string]string, error) {
	plan := &x.Registration.Plan
	layout := report.Layout(plan)
	grid, err := x.Grid(layout)
	if err != nil {
		return nil, nil, err
	}
	pub, err := published.Parse(manifests.Published)
	if err != nil {
		return nil, nil, err
	}
	paper := pub.Table(plan.Manifest.Name)
	tables := map[string]string{}
	for i, scope := range append([]string{""}, layout.SelectPer[min(1, len(layout.SelectPer)):]...) {
		g, key := grid, ""
		if i > 0 {
			if g, err = x.Grid(layout.Scoped(scope)); err != nil {
				return nil, nil, err
			}
			key = " " + scope
		}
		tables["grid"+key] = g.Markdown()
		if paper != nil {
			curves, err := x.Curves(g, report.CurveOptions{X: "round", Y: g.Spec.Value})
			if err != nil {
				return nil, nil, err
			}
			tables["paper"+key] = report.ComparePaper(pub, plan, g, paper, curves).Markdown()
		}
	}
	return grid, tables, nil
}

// scopeWords say how a select scope tunes.
var scopeWords = map[string]string{manifests.PerEntry: "per entry", manifests.PerRow: "once per row"}

// checkReportDir refuses an --out that is empty, a file, or a directory of
// Go source (run from ump's own tree, `--out report` would write into the
// package of that name).
func checkReportDir(out string) error {
	if out == "" {
		return badInput{errors.New("--out '': name the report's directory")}
	}
	info, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.IsDir():
		return badInput{fmt.Errorf("--out %s is a file: name a directory for the report", out)}
	}
	if code, _ := filepath.Glob(filepath.Join(out, "*.go")); len(code) > 0 {
		return badInput{fmt.Errorf("--out %s holds Go source (%s): name another directory for the report", out, filepath.Base(code[0]))}
	}
	return nil
}
