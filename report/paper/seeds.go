package paper

import (
	"encoding/json"
	"slices"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
)

// target is a choice of an entry that needs more seeds.
type target struct {
	row, col int
	choice   string
}

// MoreSeeds are the cells to add to the plan's table (grid, laid out
// from its finished cells) for `ump run --until-decided upTo`: a cell
// with the next seed of each choice in question (targets) that has fewer
// than upTo seeds; open counts the entries with a choice at upTo. The
// same table gives the same cells.
func MoreSeeds(
	plan *manifests.Plan,
	grid *report.Grid,
	upTo int,
) (adds []map[string]json.RawMessage, open int, err error) {
	targets, err := targetsOf(plan, grid)
	if err != nil {
		return nil, 0, err
	}
	seen, capped := map[string]bool{}, map[[2]int]bool{}
	for _, tg := range targets {
		cells := slices.DeleteFunc(
			slices.Clone(grid.Cells[tg.row][tg.col]),
			func(i int) bool { return grid.Choices[i] != tg.choice },
		)
		if len(cells) >= upTo {
			capped[[2]int{tg.row, tg.col}] = true
			continue
		}
		last := 0
		for _, i := range cells {
			last = max(last, plan.Cells[i].Config.Seed)
		}
		add := plan.WithSeed(&plan.Cells[cells[0]], last+1)
		if key := string(manifests.CanonicalJSON(add)); !seen[key] {
			seen[key] = true
			adds = append(adds, add)
		}
	}
	return adds, len(capped), nil
}

// targetsOf are the choices that need more seeds: in each entry whose
// choice of table.select is within the noise, the chosen and the
// runner-up value; in each entry a claim of the paper compares within
// the noise (for a manifest the paper publishes a table of), its chosen
// value.
func targetsOf(plan *manifests.Plan, grid *report.Grid) ([]target, error) {
	var out []target
	for r, row := range grid.Entries {
		for c, e := range row {
			if !e.Missing && e.Selection != nil && !e.Selection.Stable() {
				out = append(out, target{r, c, e.Select}, target{r, c, e.Selection.RunnerUp})
			}
		}
	}
	pub, err := report.Paper()
	if err != nil || pub.Table(plan.Manifest.Name) == nil {
		return out, err
	}
	for _, at := range ComparePaper(pub, plan, grid, pub.Table(plan.Manifest.Name), nil).NoisyEntries() {
		if e := grid.Entries[at[0]][at[1]]; !e.Missing {
			out = append(out, target{at[0], at[1], e.Select})
		}
	}
	return out, nil
}
