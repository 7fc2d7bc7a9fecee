package report

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/state"
)

// WriteFinal writes one line per cell, within finalWidth columns: its
// swept values (those that differ between cells), status and headline
// figures: the table's value and also, and train_loss (those that are not
// NaN in every cell shown, e.g. the bits of a vector no algorithm sends).
// When the swept values do not fit beside the figures they go on a line of
// their own below. Diverged cells show * for every figure, as the paper's
// tables do. It reports whether any figure was written.
func WriteFinal(ctx context.Context, w io.Writer, src state.Source, rep *state.Report) (bool, error) {
	final, _, err := Export(ctx, src, []*state.Report{rep}, "final", false)
	if err != nil {
		return false, err
	}
	rowOf := map[int64]int{}
	var shown []int // the rows printed with their figures (not diverged)
	if cells := final.Column("cell"); cells != nil {
		for r, n := range cells.Ints { // n counts from 1
			rowOf[n-1] = r
			if rep.Cells[n-1].Status != eventlog.Diverged {
				shown = append(shown, r)
			}
		}
	}
	var figures []string
	for _, name := range HeadlineFigures(Layout(&rep.Plan)) {
		if c := final.Column(name); c != nil && !allNaN(c.Floats, shown) {
			figures = append(figures, name)
		}
	}
	rows := [][]string{slices.Concat([]string{"cell", "status"}, figures)}
	labels := []string{"sweep"}
	for i, cell := range rep.Cells {
		row := []string{strconv.Itoa(i + 1), cell.Status}
		r, ok := rowOf[int64(i)]
		for _, f := range figures {
			c := final.Column(f)
			switch {
			case !ok:
				row = append(row, "-")
			case cell.Status == eventlog.Diverged:
				row = append(row, "*")
			default:
				row = append(row, strconv.FormatFloat(c.Floats[r], 'g', 6, 64))
			}
		}
		rows = append(rows, row)
		labels = append(labels, varying(&rep.Plan, i))
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for k, v := range row {
			widths[k] = max(widths[k], len(v))
		}
	}
	line := func(row []string) string { // every column padded to its width
		var b strings.Builder
		for k, v := range row {
			b.WriteString(v + strings.Repeat(" ", widths[k]-len(v)+2))
		}
		return b.String()
	}
	labelWidth := 0
	for _, l := range labels {
		labelWidth = max(labelWidth, utf8.RuneCountInString(l))
	}
	if len(line(rows[0]))+labelWidth <= finalWidth {
		for k, row := range rows {
			fmt.Fprintln(w, line(row)+labels[k])
		}
	} else {
		fmt.Fprintln(w, line(rows[0])+"(sweep below)")
		for k, row := range rows[1:] {
			fmt.Fprintln(w, strings.TrimRight(line(row), " "))
			for _, l := range wrap(labels[k+1], finalWidth-6) {
				fmt.Fprintln(w, "      "+l)
			}
		}
	}
	return len(figures) > 0, nil
}

// finalWidth is the widest line WriteFinal writes.
const finalWidth = 100

// varying is cell i's swept values that differ between the plan's cells.
func varying(plan *manifests.Plan, i int) string {
	var parts []string
	for _, path := range slices.Sorted(maps.Keys(plan.Cells[i].Label)) {
		v := plan.Cells[i].Label[path]
		if slices.ContainsFunc(plan.Cells, func(c manifests.Cell) bool { return c.Label[path] != v }) {
			parts = append(parts, path+"="+v)
		}
	}
	if len(parts) == 0 {
		return "(single cell)"
	}
	return strings.Join(parts, " ")
}

// wrap breaks text at spaces into lines of at most width runes (a word
// longer than width stays whole).
func wrap(text string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(text) {
		if cur != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	return append(lines, cur)
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
