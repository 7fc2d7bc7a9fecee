package document

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/resultsdir"
)

// section is a manifest's part of the report, which says who vouches
// for its results (vouch); its figures are drawn into into, the directory
// that becomes out/dir.
func section(x *resultsdir.Exported, vouch, into, dir string) (string, error) {
	plan := &x.Registration.Plan
	var b strings.Builder
	about(&b, x, vouch, into, dir)
	grid, tables, err := Tables(x)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\n### Table\n\n%s", tables["grid"])
	if beside, ok := tables["paper"]; ok {
		fmt.Fprintf(&b, "\n### Beside the paper's\n\n%s", beside)
	}
	for _, scope := range grid.Spec.SelectPer[min(1, len(grid.Spec.SelectPer)):] {
		what := fmt.Sprintf("%s chosen %s", grid.Spec.Select, scopeWords[scope])
		fmt.Fprintf(
			&b,
			"\n### Table with %s (a declared variant: `ump table %.12s --select-per %s`)\n\n%s",
			what,
			plan.Hash,
			scope,
			tables["grid "+scope],
		)
		if beside, ok := tables["paper "+scope]; ok {
			fmt.Fprintf(&b, "\n### Beside the paper's, with %s\n\n%s", what, beside)
		}
	}
	if err := figures(&b, x, grid, into, dir); err != nil {
		return "", err
	}
	return b.String(), nil
}

// about writes the section's heading and its table of what the manifest
// is: its hash, how to run and check it, its cells, engine, versions,
// signature and files.
func about(b *strings.Builder, x *resultsdir.Exported, vouch, into, dir string) {
	plan := &x.Registration.Plan
	counts := x.Counts()
	cells := fmt.Sprintf(
		"%d: %d completed, %d diverged",
		len(plan.Cells),
		counts[eventlog.Completed],
		counts[eventlog.Diverged],
	)
	if missing, err := x.Missing(); err == nil && len(missing) > 0 {
		which := "cells " + resultsdir.CellRanges(missing) + " are"
		if len(missing) == 1 {
			which = "cell " + resultsdir.CellRanges(missing) + " is"
		}
		cells += fmt.Sprintf("; **partial**: %d of %d finished; %s not finished, so not reported "+
			"(`ump import` of this directory, then `ump run` of its manifest, computes them)",
			len(plan.Cells)-len(missing), len(plan.Cells), which)
	}
	engines, versions := display.Markdown(x.Engines()), display.Markdown(x.Versions())
	if engines == "" {
		engines, versions = "none yet: no cell finished", "none yet"
	}
	link := func(name string) string { return fmt.Sprintf("[%s](%s/%s)", name, dir, name) }
	fmt.Fprintf(b, "\n## %s\n\n| | |\n|---|---|\n", display.Markdown(plan.Manifest.Name))
	run := "`" + x.Command(dir) + "`"
	if strings.HasSuffix(run, resultsdir.ManifestFile+"`") {
		run += " (from this report's directory)"
	}
	fmt.Fprintf(
		b,
		"| manifest | `%s` |\n| run it | %s |\n| check it | `ump verify %.12s` (recomputes every cell and compares "+
			"each output's digest) |\n",
		plan.Hash,
		run,
		plan.Hash,
	)
	fmt.Fprintf(
		b,
		"| cells | %s |\n| engine | %s |\n| computed by | %s |\n| results signed | %s |\n| figures | drawn by `ump "+
			"report` from the results, and drawn again by `ump report` of the directory; %s lists the results' "+
			"digests |\n",
		cells,
		engines,
		versions,
		vouch,
		resultsdir.RecordFile,
	)
	results := []string{link(resultsdir.FinalFile), link(resultsdir.RoundsFile)}
	for _, name := range resultsdir.CSVFiles {
		if _, err := os.Stat(filepath.Join(into, name)); err == nil {
			results = append(results, link(name))
		}
	}
	fmt.Fprintf(b, "| results | %s, %s |\n", strings.Join(results, ", "), link(resultsdir.RegistrationFile))
}

// figures draws the section's figures into into and writes their
// paragraphs: the final figure against the swept path, where the table
// has one, and the curves of each column.
func figures(b *strings.Builder, x *resultsdir.Exported, grid *report.Grid, into, dir string) error {
	plan := &x.Registration.Plan
	if fig, ok := grid.SweepFigure(report.FigureTitle(plan)); ok {
		name := fileSafe(fig.Name)
		if err := drawFigure(&fig, into, name); err != nil {
			return err
		}
		fmt.Fprintf(
			b,
			"\n### Against %s\n\n![%s against %s](%s/%s.png)\n\n%s of the final round against %s: a line per row at "+
				"its tuned learning rate, the mean over seeds with ± 1 std as error bars ([PDF](%s/%s.pdf)).\n",
			fig.X,
			fig.Y,
			fig.X,
			dir,
			name,
			fig.Y,
			fig.X,
			dir,
			name,
		)
	}
	figs, err := x.Curves(grid, report.CurveOptions{X: "round", Y: grid.Spec.Value})
	if err != nil {
		return err
	}
	b.WriteString("\n### Figures\n")
	for c, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s figure.Series) bool { return len(s.X) > 0 }) {
			continue
		}
		name := fmt.Sprintf("curves-%d-%s", c+1, fileSafe(fig.Name))
		if err := drawFigure(&fig, into, name); err != nil {
			return err
		}
		fmt.Fprintf(
			b,
			"\n![%s](%s/%s.png)\n\n%s: every row at its tuned learning rate, mean over seeds with a ±1 std band "+
				"([PDF](%s/%s.pdf)).\n",
			fig.Title,
			dir,
			name,
			fig.Title,
			dir,
			name,
		)
	}
	return nil
}

// drawFigure draws fig as dir/name.png (300 dpi) and .pdf.
func drawFigure(fig *figure.Figure, dir, name string) error {
	for _, ext := range []string{".png", ".pdf"} {
		path, err := resultsdir.PathInside(dir, name+ext)
		if err != nil {
			return err
		}
		if err := render.Figure(fig, path); err != nil {
			return err
		}
	}
	return nil
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

// Tables lays out an exported manifest's table and renders it in
// Markdown: "grid" as `ump table` prints it and, where the paper publishes
// a table for the manifest, "paper" beside it (`ump table --paper`); the
// same as "grid SCOPE" and "paper SCOPE" for each other scope the table
// declares (`ump table --select-per SCOPE`).
func Tables(x *resultsdir.Exported) (*report.Grid, map[string]string, error) {
	plan := &x.Registration.Plan
	layout := report.Layout(plan)
	grid, err := x.Grid(layout)
	if err != nil {
		return nil, nil, err
	}
	pub, err := report.Paper()
	if err != nil {
		return nil, nil, err
	}
	published := pub.Table(plan.Manifest.Name)
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
		if published != nil {
			pc, err := besidePaper(x, pub, published, g)
			if err != nil {
				return nil, nil, err
			}
			tables["paper"+key] = pc.Markdown()
		}
	}
	return grid, tables, nil
}

// scopeWords say how a select scope tunes.
var scopeWords = map[string]string{manifests.PerEntry: "per entry", manifests.PerRow: "once per row"}
