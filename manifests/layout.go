package manifests

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkSelectSeeds refuses a table.select.seeds that names a seed the
// sweep does not hold (sweptSeeds, canonical JSON), or that leaves none to
// report; line is the table's.
func checkSelectSeeds(file string, t *Table, sweptSeeds []json.RawMessage, line int) error {
	if t == nil || len(t.SelectSeeds) == 0 {
		return nil
	}
	var swept []int
	for _, raw := range sweptSeeds {
		var seed int
		if json.Unmarshal(raw, &seed) == nil {
			swept = append(swept, seed)
		}
	}
	where := position(file, line) + `: field "table.select.seeds"`
	if len(swept) == 0 {
		return &Error{
			Problems: []string{
				where + ": the manifest does not sweep seed; sweep it (sweep: {seed: [1, 2, 3, 4, 5]}) to tune on " +
					"some seeds and report the others",
			},
		}
	}
	for _, seed := range t.SelectSeeds {
		if !slices.Contains(swept, seed) {
			return &Error{
				Problems: []string{
					fmt.Sprintf("%s: seed %d is not swept (sweep.seed is %v); tune on swept seeds", where, seed, swept),
				},
			}
		}
	}
	if !slices.ContainsFunc(swept, func(s int) bool { return !slices.Contains(t.SelectSeeds, s) }) {
		return &Error{
			Problems: []string{
				fmt.Sprintf("%s: %v leaves no swept seed to report; keep at least one out of it", where, t.SelectSeeds),
			},
		}
	}
	return nil
}

// checkLayout refuses a table block that does not account for every swept
// path (Table.Unplaced), naming them all and where each is swept, before
// anything runs.
func checkLayout(file string, base *yaml.Node, t *Table, axes []axis) error {
	if t == nil {
		return nil
	}
	var swept []string
	lines := map[string]int{}
	for _, a := range axes {
		swept = append(swept, a.path)
		lines[a.path] = a.line
	}
	unplaced := t.Unplaced(swept)
	if len(unplaced) == 0 {
		return nil
	}
	slices.SortFunc(unplaced, func(a, b string) int { return lines[a] - lines[b] }) // as the file has them
	line := lineOf(base, "table")
	var named []string
	for _, p := range unplaced {
		named = append(named, fmt.Sprintf("%s (%s)", p, position(file, lines[p])))
	}
	which := "it is"
	if len(unplaced) > 1 {
		which = "they are"
	}
	return &Error{
		Problems: []string{
			fmt.Sprintf(
				"%s: field \"table\": the sweep varies %s, but %s neither a row, a column, the select path nor seed; "+
					"add each to table.rows or table.columns (or make one table.select)",
				position(file, line),
				strings.Join(named, " and "),
				which,
			),
		},
	}
}
