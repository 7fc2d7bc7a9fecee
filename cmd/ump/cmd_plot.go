package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/ump-lab/ump/stages"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"
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
			&cli.StringFlag{Name: "y", Usage: "the rounds-table column to plot (default: the table block's value, else test_acc_mean, objective_gap for the quadratic task)"},
			&cli.StringFlag{Name: "x", Value: "round", Usage: "round, or bits (bits_sent_per_worker)"},
			&cli.StringFlag{Name: "out", Value: "plots", Usage: "the output `DIR` (not a repository's root or a directory of source code)"},
			&cli.StringFlag{Name: "format", Value: "png,svg", Usage: "a comma-separated list of png (300 dpi), svg and pdf"},
			&cli.BoolFlag{Name: "per-column", Usage: "a file per table column instead of one figure of panels"},
			&cli.StringFlag{Name: "against", Usage: "also draw the final figure against this swept `PATH` (e.g. algorithm.beta), a line per other setting"},
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
	save := saver(func(name string, draw func(path string) error) error {
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
		if err := plotAgainst(ctx, store.Source(), rep, spec, o.against, save); err != nil {
			return err
		}
	}
	if err := plotCurves(figs, spec, report.FigureTitle(&rep.Plan), o.perColumn, save, w); err != nil {
		return err
	}
	return plotPartitions(ctx, store, rep, save)
}

// saver writes a figure under name in every format asked for, with draw.
type saver func(name string, draw func(path string) error) error

// plotCurves draws the curves: one figure, of panels where the table has
// columns, or one file per column (perColumn); it says which columns
// have no curves yet.
func plotCurves(figs []report.Figure, spec manifests.Table, title string, perColumn bool, save saver, w io.Writer) error {
	var drawable []report.Figure
	for _, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s report.Series) bool { return len(s.X) > 0 }) {
			fmt.Fprintf(w, "no completed training for %s yet: no curves\n", fig.Name)
			continue
		}
		drawable = append(drawable, fig)
	}
	switch {
	case len(drawable) == 0:
	case len(spec.Columns) == 0:
		if err := save("curves", func(path string) error { return render.Figure(&drawable[0], path) }); err != nil {
			return err
		}
	case !perColumn:
		if err := save("curves", func(path string) error { return render.Panels(title, drawable, path) }); err != nil {
			return err
		}
	default:
		for c, fig := range figs {
			if !slices.ContainsFunc(drawable, func(d report.Figure) bool { return d.Name == fig.Name }) {
				continue
			}
			if err := save(fmt.Sprintf("curves-%d-%s", c+1, plotName(fig.Name)), func(path string) error { return render.Figure(&fig, path) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// plotPartitions draws the worker x class heat map of each distinct
// partition.
func plotPartitions(ctx context.Context, store *pipeline.Store, rep *state.Report, save saver) error {
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

// plotAgainst draws the final figure of each table row against the swept
// path (report.Grid.SweepFigure): the layout with path as its one column
// and every other swept path of the table as a row.
func plotAgainst(ctx context.Context, src state.Source, rep *state.Report, spec manifests.Table, path string, save saver) error {
	swept := slices.Sorted(maps.Keys(rep.Plan.Manifest.Sweep))
	if !slices.Contains(swept, path) || path == "seed" || path == spec.Select {
		return badInput{fmt.Errorf("--against %s: the manifest sweeps %s; name one of them but seed and the tuned %s",
			path, strings.Join(swept, ", "), cmp.Or(spec.Select, "path"))}
	}
	against := spec
	against.Rows = nil
	for _, p := range slices.Concat(spec.Rows, spec.Columns) {
		if p != path {
			against.Rows = append(against.Rows, p)
		}
	}
	if len(against.Rows) == 0 {
		against.Rows = []string{"algorithm"}
	}
	against.Columns = []string{path}
	finals, err := report.ReadFinals(ctx, src, rep)
	if err != nil {
		return err
	}
	grid, err := report.NewGrid(&rep.Plan, against, finals)
	if err != nil {
		return err
	}
	fig, ok := grid.SweepFigure(report.FigureTitle(&rep.Plan))
	if !ok {
		return badInput{fmt.Errorf("--against %s: it takes one value here; a figure against it needs two or more", path)}
	}
	return save("against-"+plotName(path), func(p string) error { return render.Figure(&fig, p) })
}

// plotName turns a label into a file name part that shells and LaTeX
// take as it is: letters, digits, '-' and '_', each run of anything else
// one '-' ("topology.kind=ring" gives "topology-kind-ring").
func plotName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
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
