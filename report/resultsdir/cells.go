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
			return nil, fmt.Errorf("%w: --cells %s: %q is not a cell of the %d (from 1)", state.ErrBadArgument, cells, field, len(finals))
		case finals[n-1].Status == "":
			return nil, fmt.Errorf("%w: --cells %s: cell %d did not finish in the results, so there is nothing to compare", state.ErrBadArgument, cells, n)
		}
		picked = append(picked, n-1)
	}
	slices.Sort(picked) // in plan order, as the runner takes them
	return slices.Compact(picked), nil
}
