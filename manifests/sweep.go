package manifests

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unsweepable lists fields a sweep may not vary.
var unsweepable = map[string]bool{"version": true, "name": true, "table": true, "scale": true}

// expand expands the sweep's cartesian product into cells, the last axis
// varying fastest. Every cell's problems are gathered, each said once
// with the first cell it shows in, so that all come at once.
func expand(file string, base *yaml.Node, m *Manifest, axes []axis) ([]Cell, error) {
	idx := make([]int, len(axes))
	var cells []Cell
	var problems []string
	cellsOf := map[string][]string{} // problem -> the cells it shows in
	for {
		cell := Cell{Index: len(cells), Label: map[string]string{}, Config: *m}
		cell.Config.Sweep, cell.Config.Table = nil, nil
		if len(axes) > 0 {
			c, bad, err := sweepCell(file, base, axes, idx, cell.Label)
			switch {
			case err != nil:
				return nil, err
			case bad != nil:
				for _, p := range bad.Problems {
					if cellsOf[p] == nil {
						problems = append(problems, p)
					}
					cellsOf[p] = append(cellsOf[p], labelOf(axes, idx))
				}
			default:
				cell.Config = *c
				cell.Config.Table = nil
			}
		}
		cell.rounds = cell.Config.Rounds
		cell.Config.Rounds, cell.Config.Scale = cell.Config.ScaledRounds(), nil
		cells = append(cells, cell)
		if !nextIndex(idx, axes) {
			break
		}
	}
	if len(problems) > 0 {
		for i, p := range problems {
			cells := cellsOf[p]
			problems[i] = fmt.Sprintf("sweep cell %s: %s", cells[0], p)
			if len(cells) > 1 {
				problems[i] = fmt.Sprintf("sweep cell %s (and %d more): %s", cells[0], len(cells)-1, p)
			}
		}
		return nil, &Error{Problems: problems}
	}
	return cells, nil
}

// sweepCell decodes the cell at idx of the axes: the base with each
// axis's value set, its label written into label. bad holds its
// problems, err any other failure.
func sweepCell(
	file string,
	base *yaml.Node,
	axes []axis,
	idx []int,
	label map[string]string,
) (c *Manifest, bad *Error, err error) {
	node := base
	for k, a := range axes {
		if node, err = withPath(file, node, a.path, a.nodes[idx[k]], a.nodes[idx[k]].Line); err != nil {
			return nil, nil, err
		}
		label[a.path] = labelValue(a.values[idx[k]])
	}
	c, err = decodeManifest(file, node)
	if errors.As(err, &bad) {
		return nil, bad, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("sweep cell %s: %w", labelOf(axes, idx), err)
	}
	return c, nil, nil
}

// nextIndex advances idx to the next cell of the axes' product, the last
// axis fastest; false after the last.
func nextIndex(idx []int, axes []axis) bool {
	for k := len(axes) - 1; k >= 0; k-- {
		if idx[k]++; idx[k] < len(axes[k].nodes) {
			return true
		}
		idx[k] = 0
	}
	return false
}

// checkCellCount refuses a sweep of more than MaxCells cells before it is
// expanded.
func checkCellCount(file string, axes []axis, added int) error {
	cells, line := 1, 0
	sizes := make([]string, len(axes))
	for i, a := range axes {
		cells = min(cells*len(a.nodes), MaxCells+1) // no overflow
		sizes[i] = fmt.Sprintf("%s (%d)", a.path, len(a.nodes))
		if line == 0 || a.line < line {
			line = a.line
		}
	}
	if cells+added > MaxCells {
		what := strings.Join(sizes, " × ")
		if added > 0 {
			what += fmt.Sprintf(", and %d added", added)
		}
		return &Error{
			Problems: []string{
				fmt.Sprintf("%s: field \"sweep\": more than %d cells (%s); split the sweep into several manifests",
					position(file, line), MaxCells, what),
			},
		}
	}
	return nil
}

type axis struct {
	path   string
	line   int
	nodes  []*yaml.Node
	values []string // canonical JSON of each value after normalisation
}

// sweepAxes checks the sweep block and normalises each value in the context
// of the base manifest. Axes come back sorted by path.
func sweepAxes(file string, base, sweep *yaml.Node) ([]axis, error) {
	if sweep == nil {
		return nil, nil
	}
	if sweep.Kind != yaml.MappingNode {
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: field \"sweep\": expected a mapping of field paths to lists of values (e.g. seed: [1, 2]), "+
						"got %s",
					position(file, sweep.Line),
					describe(sweep),
				),
			},
		}
	}
	var axes []axis
	var problems []string // every value's, said once each
	for i := 0; i+1 < len(sweep.Content); i += 2 {
		k, v := sweep.Content[i], sweep.Content[i+1]
		path := k.Value
		where := fmt.Sprintf("%s: field %q", position(file, k.Line), "sweep."+path)
		if unsweepable[path] || strings.HasPrefix(path, "table.") || path == "sweep" {
			return nil, &Error{Problems: []string{fmt.Sprintf("%s: %s cannot be swept", where, path)}}
		}
		if helpFor(path) == "" {
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf(
						"%s: %q is not a manifest field; use a dotted path such as algorithm.beta or seed",
						where,
						path,
					),
				},
			}
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf(
						"%s: expected a non-empty list of values for %s (%s), got %s",
						where,
						path,
						helpFor(path),
						describe(v),
					),
				},
			}
		}
		a := axis{path: path, line: k.Line, nodes: v.Content}
		seen := map[string]int{}
		for j, vn := range v.Content {
			node, err := withPath(file, base, path, vn, vn.Line)
			if err != nil {
				return nil, err
			}
			m, err := decodeManifest(file, node)
			var bad *Error
			switch {
			case errors.As(err, &bad):
				for _, p := range bad.Problems {
					if !slices.Contains(problems, p) {
						problems = append(problems, p)
					}
				}
				continue
			case err != nil:
				return nil, err
			}
			value := valueAt(m, path)
			if first, dup := seen[value]; dup {
				return nil, &Error{
					Problems: []string{
						fmt.Sprintf(
							"%s: field %q: value %d repeats value %d (%s) once defaults are filled in; list each "+
								"value once",
							position(file, vn.Line),
							"sweep."+path,
							j+1,
							first+1,
							value,
						),
					},
				}
			}
			seen[value] = j
			a.values = append(a.values, value)
		}
		axes = append(axes, a)
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	sort.Slice(axes, func(i, j int) bool { return axes[i].path < axes[j].path })
	for i := 1; i < len(axes); i++ {
		if strings.HasPrefix(axes[i].path, axes[i-1].path+".") {
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf(
						"%s: field %q: overlaps the swept field %q; sweep one or the other",
						position(file, axes[i].line),
						"sweep."+axes[i].path,
						axes[i-1].path,
					),
				},
			}
		}
	}
	return axes, nil
}
