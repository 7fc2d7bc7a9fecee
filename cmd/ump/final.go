package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/ump-lab/ump/pipeline"
)

// printFinal prints one line per cell: its swept values, status and final
// figures. Diverged cells show * for every figure, as the paper's tables do.
func printFinal(ctx context.Context, w io.Writer, store *pipeline.Store, reg *pipeline.Registration) error {
	rep, err := store.Report(reg)
	if err != nil {
		return err
	}
	final, _, err := store.Export(ctx, rep, "final")
	if err != nil {
		return err
	}
	params := map[string]bool{}
	for _, name := range pipeline.ParamColumns() {
		params[name] = true
	}
	var figures []string
	for _, c := range final.Columns {
		if !params[c.Name] {
			figures = append(figures, c.Name)
		}
	}
	rowOf := map[int64]int{}
	if cells := final.Column("cell"); cells != nil {
		for r, idx := range cells.Ints {
			rowOf[idx] = r
		}
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprint(tw, "cell\tsweep\tstatus")
	for _, f := range figures {
		fmt.Fprintf(tw, "\t%s", f)
	}
	fmt.Fprintln(tw)
	for i, cell := range rep.Cells {
		fmt.Fprintf(tw, "%d\t%s\t%s", i+1, reg.Plan.Cells[i].LabelString(), cell.Status)
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
func printTable(ctx context.Context, w io.Writer, store *pipeline.Store, reg *pipeline.Registration) error {
	rep, err := store.Report(reg)
	if err != nil {
		return err
	}
	grid, err := store.Grid(ctx, rep, layout(&reg.Plan))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntable (ump table %.12s):\n", reg.Plan.Hash)
	_, err = io.WriteString(w, grid.Markdown())
	return err
}
