package resultsdir

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/state"
)

// FinishedCells are the plan indices of the cells that cells names
// (`ump verify --cells N,M,...`, from 1), each finished in x, or every
// finished cell of x where cells is "".
func (x *Exported) FinishedCells(cells string) ([]int, error) {
	finals, err := x.Finals()
	if err != nil {
		return nil, err
	}
	var picked []int
	if cells == "" {
		for i, f := range finals {
			if f.Status != "" {
				picked = append(picked, i)
			}
		}
		return picked, nil
	}
	for _, field := range strings.Split(cells, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		switch {
		case err != nil || n < 1 || n > len(finals):
			return nil, fmt.Errorf(
				"%w: --cells %s: %q is not a cell of the %d (from 1)",
				state.ErrBadArgument,
				cells,
				field,
				len(finals),
			)
		case finals[n-1].Status == "":
			return nil, fmt.Errorf(
				"%w: --cells %s: cell %d did not finish in the results, so there is nothing to compare",
				state.ErrBadArgument,
				cells,
				n,
			)
		}
		picked = append(picked, n-1)
	}
	slices.Sort(picked) // in plan order, as the runner takes them
	return slices.Compact(picked), nil
}

// Missing are the plan indices of the cells x holds no results of (not
// finished where it was reported): none for a whole sweep; a partial
// directory names them.
func (x *Exported) Missing() ([]int, error) {
	finals, err := x.Finals()
	if err != nil {
		return nil, err
	}
	var missing []int
	for i, f := range finals {
		if f.Status == "" {
			missing = append(missing, i)
		}
	}
	return missing, nil
}

// CellRanges names plan indices as cells from 1, runs of them as ranges:
// "3, 5, 7–9".
func CellRanges(cells []int) string {
	var parts []string
	for k := 0; k < len(cells); {
		j := k
		for j+1 < len(cells) && cells[j+1] == cells[j]+1 {
			j++
		}
		if j == k {
			parts = append(parts, strconv.Itoa(cells[k]+1))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", cells[k]+1, cells[j]+1))
		}
		k = j + 1
	}
	return strings.Join(parts, ", ")
}
