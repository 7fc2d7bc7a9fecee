package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/ump-lab/ump/pipeline"
)

// printFinal prints one line per cell: its swept values, status and final
// figures (those that are not NaN in every cell shown, e.g. the bits of a
// vector no algorithm sends). Diverged cells show * for every figure, as the
// paper's tables do.
func printFinal(ctx context.Context, w io.Writer, store *pipeline.Store, rep *pipeline.Report) error {
	final, _, err := store.Export(ctx, []*pipeline.Report{rep}, "final", false)
	if err != nil {
		return err
	}
	params := map[string]bool{}
	for _, name := range pipeline.ParamColumns() {
		params[name] = true
	}
	rowOf := map[int64]int{}
	var shown []int // the rows printed with their figures (not diverged)
	if cells := final.Column("cell"); cells != nil {
		for r, n := range cells.Ints { // n counts from 1
			rowOf[n-1] = r
			if rep.Cells[n-1].Status != pipeline.Diverged {
				shown = append(shown, r)
			}
		}
	}
	var figures []string
	for _, c := range final.Columns {
		if !params[c.Name] && !allNaN(c.Floats, shown) {
			figures = append(figures, c.Name)
		}
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprint(tw, "cell\tsweep\tstatus")
	for _, f := range figures {
		fmt.Fprintf(tw, "\t%s", f)
	}
	fmt.Fprintln(tw)
	for i, cell := range rep.Cells {
		fmt.Fprintf(tw, "%d\t%s\t%s", i+1, rep.Plan.Cells[i].LabelString(), cell.Status)
		r, ok := rowOf[int64(i)]
		for _, f := range figures {
			c := final.Column(f)
			switch {
			case !ok:
				fmt.Fprint(tw, "\t-")
			case cell.Status == pipeline.Diverged:
				fmt.Fprint(tw, "\t*")
			case c.Ints != nil:
				fmt.Fprintf(tw, "\t%d", c.Ints[r])
			default:
				fmt.Fprintf(tw, "\t%s", strconv.FormatFloat(c.Floats[r], 'g', 6, 64))
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printTable prints the manifest's table, as `ump table HASH` does.
func printTable(ctx context.Context, w io.Writer, store *pipeline.Store, rep *pipeline.Report) error {
	grid, err := store.Grid(ctx, rep, pipeline.Layout(&rep.Plan))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntable (ump table %.12s):\n", rep.Plan.Hash)
	_, err = io.WriteString(w, grid.Markdown())
	return err
}

// allNaN reports whether a float column is NaN in every given row.
func allNaN(values []float64, rows []int) bool {
	if values == nil {
		return false // an integer column
	}
	for _, r := range rows {
		if !math.IsNaN(values[r]) {
			return false
		}
	}
	return true
}
