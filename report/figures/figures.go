package figures

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
)

// Saver writes a figure under name in every format asked for, with draw.
type Saver func(name string, draw func(path string) error) error

// Curves draws the curves: one figure, of panels where the table has
// columns, or one file per column (perColumn); it says which columns
// have no curves yet.
func Curves(figs []figure.Figure, spec manifests.Table, title string, perColumn bool, save Saver, w io.Writer) error {
	var drawable []figure.Figure
	for _, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s figure.Series) bool { return len(s.X) > 0 }) {
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
			if !slices.ContainsFunc(drawable, func(d figure.Figure) bool { return d.Name == fig.Name }) {
				continue
			}
			if err := save(fmt.Sprintf("curves-%d-%s", c+1, fileName(fig.Name)), func(path string) error {
				return render.Figure(&fig, path)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Partitions draws the worker x class heat map of each distinct
// partition.
func Partitions(ctx context.Context, src state.Source, rep *state.Report, save Saver) error {
	var drawn []string
	for i, cell := range rep.Cells {
		ref, ok := cell.Output(stages.Histogram)
		if !ok || slices.Contains(drawn, ref.Digest) {
			continue
		}
		drawn = append(drawn, ref.Digest)
		data, err := src.Blobs.Get(ctx, ref)
		if err != nil {
			return err
		}
		t, err := artifacts.ReadArrow(data)
		if err != nil {
			return err
		}
		cfg := &rep.Plan.Cells[i].Config
		title := fmt.Sprintf(
			"partition of cell %d (%s, %d workers, seed %d)",
			i+1,
			partitionLabel(cfg),
			cfg.Workers,
			cfg.Seed,
		)
		if err := save(fmt.Sprintf("partition-cell%d", i+1), func(path string) error {
			return render.Histogram(t,
				title, path)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Against draws the final figure of each table row against the swept
// path (report.Grid.SweepFigure): the layout with path as its one column
// and every other swept path of the table as a row.
func Against(
	ctx context.Context,
	src state.Source,
	rep *state.Report,
	spec manifests.Table,
	path string,
	save Saver,
) error {
	swept := slices.Sorted(maps.Keys(rep.Plan.Manifest.Sweep))
	if !slices.Contains(swept, path) || path == "seed" || path == spec.Select {
		return fmt.Errorf("%w: --against %s: the manifest sweeps %s; name one of them but seed and the tuned %s",
			state.ErrBadArgument, path, strings.Join(swept, ", "), cmp.Or(spec.Select, "path"))
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
		return fmt.Errorf(
			"%w: --against %s: it takes one value here; a figure against it needs two or more",
			state.ErrBadArgument,
			path,
		)
	}
	return save("against-"+fileName(path), func(p string) error { return render.Figure(&fig, p) })
}

// fileName turns a label into a file name part that shells and LaTeX
// take as it is: letters, digits, '-' and '_', each run of anything else
// one '-' ("topology.kind=ring" gives "topology-kind-ring").
func fileName(s string) string {
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
