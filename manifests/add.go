package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// added is a cell the add block adds beyond the sweep's product: the
// normalised value of each swept path (canonical JSON), and the cell.
type added struct {
	values map[string]json.RawMessage
	cell   Cell
}

// addedCells reads the add block: a list of cells, each a mapping of
// every swept path to one value (most often a seed the sweep does not
// hold, for an entry that needs more). A cell the product or an earlier
// entry already holds is refused, as is a path the sweep does not vary.
func addedCells(file string, base, add *yaml.Node, axes []axis) ([]added, error) {
	if add == nil {
		return nil, nil
	}
	paths := make([]string, len(axes))
	for i, a := range axes {
		paths[i] = a.path
	}
	bad := func(line int, format string, args ...any) error {
		return &Error{
			Problems: []string{fmt.Sprintf("%s: field \"add\": ", position(file, line)) + fmt.Sprintf(format, args...)},
		}
	}
	if add.Kind != yaml.SequenceNode {
		return nil, bad(
			add.Line,
			"expected a list of cells, each a mapping of every swept path to a value (e.g. - {lr: 0.01, seed: 4}), "+
				"got %s",
			describe(add),
		)
	}
	if len(axes) == 0 {
		return nil, bad(
			add.Line,
			"the manifest sweeps nothing, so there is no cell to add beside its one; sweep the paths the cells "+
				"differ in",
		)
	}
	seen := map[string]int{} // a cell's values -> its entry (from 1), the product's as 0
	for _, c := range product(axes) {
		seen[c] = 0
	}
	var out []added
	for k, entry := range add.Content {
		a, err := addedCell(file, base, axes, entry)
		if err != nil {
			return nil, err
		}
		if len(a.values) != len(axes) {
			return nil, bad(
				entry.Line,
				"entry %d gives %s; give a value of every swept path: %s",
				k+1,
				strings.Join(slices.Sorted(maps.Keys(a.values)), ", "),
				strings.Join(paths, ", "),
			)
		}
		key := a.cell.LabelString()
		switch first, dup := seen[key]; {
		case dup && first == 0:
			return nil, bad(entry.Line, "entry %d (%s) is a cell of the sweep already", k+1, key)
		case dup:
			return nil, bad(entry.Line, "entry %d (%s) repeats entry %d", k+1, key, first)
		}
		seen[key] = k + 1
		out = append(out, a)
	}
	return out, nil
}

// addedCell decodes one entry of the add block: the base manifest with
// each of its swept paths set.
func addedCell(file string, base *yaml.Node, axes []axis, entry *yaml.Node) (added, error) {
	if entry.Kind != yaml.MappingNode {
		return added{}, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: field \"add\": expected a mapping of swept paths to values, got %s",
					position(file, entry.Line),
					describe(entry),
				),
			},
		}
	}
	node := base
	var err error
	a := added{values: map[string]json.RawMessage{}, cell: Cell{Label: map[string]string{}}}
	for i := 0; i+1 < len(entry.Content); i += 2 {
		k, v := entry.Content[i], entry.Content[i+1]
		if !slices.ContainsFunc(axes, func(x axis) bool { return x.path == k.Value }) {
			return added{}, &Error{
				Problems: []string{
					fmt.Sprintf(
						"%s: field \"add\": %q is not a swept path; an added cell differs from the sweep's only in "+
							"swept paths",
						position(file, k.Line),
						k.Value,
					),
				},
			}
		}
		if node, err = withPath(file, node, k.Value, v, v.Line); err != nil {
			return added{}, err
		}
		a.values[k.Value] = nil
	}
	m, err := decodeManifest(file, node)
	var problems *Error
	if errors.As(err, &problems) {
		for i, p := range problems.Problems {
			problems.Problems[i] = "added cell: " + p
		}
		return added{}, problems
	}
	if err != nil {
		return added{}, err
	}
	for path := range a.values {
		v := valueAt(m, path)
		a.values[path] = json.RawMessage(v)
		a.cell.Label[path] = labelValue(v)
	}
	a.cell.Config = *m
	a.cell.Config.Sweep, a.cell.Config.Table = nil, nil
	a.cell.rounds = a.cell.Config.Rounds
	a.cell.Config.Rounds, a.cell.Config.Scale = a.cell.Config.ScaledRounds(), nil
	return a, nil
}

// product is every cell of the sweep's product, as its label string.
func product(axes []axis) []string {
	var out []string
	idx := make([]int, len(axes))
	for {
		c := Cell{Label: map[string]string{}}
		for k, a := range axes {
			c.Label[a.path] = labelValue(a.values[idx[k]])
		}
		out = append(out, c.LabelString())
		if !nextIndex(idx, axes) {
			return out
		}
	}
}

// WithSeed is an entry of an add block: cell c's value of every path the
// plan sweeps, with seed in place of its own (canonical JSON).
func (p *Plan) WithSeed(c *Cell, seed int) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for path := range p.Manifest.Sweep {
		out[path] = json.RawMessage(valueAt(&c.Config, path))
	}
	out["seed"] = json.RawMessage(strconv.Itoa(seed))
	return out
}
