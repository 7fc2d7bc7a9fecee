package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ump-lab/ump/internal/bounded"
)

// Load reads and parses a manifest file of at most MaxFileBytes, with
// overrides applied (Parse).
func Load(path string, overrides ...string) (*Plan, error) {
	data, err := bounded.ReadFile(path, MaxFileBytes)
	switch {
	case errors.Is(err, bounded.ErrTooLarge):
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: more than %d bytes: not a manifest (the paper's largest is under 3 KB); give a manifest file",
					path,
					MaxFileBytes,
				),
			},
		}
	case errors.Is(err, bounded.ErrNotRegular):
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%v: give a manifest file (YAML), or an embedded manifest's name such as quickstart or "+
						"paper/table1-mnist",
					err,
				),
			},
		}
	case err != nil:
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	return Parse(path, data, overrides...)
}

// MaxFileBytes bounds a manifest file; MaxCells a sweep.
const (
	MaxFileBytes = 1 << 20
	MaxCells     = 20_000
)

// Parse decodes, validates, normalises and expands a manifest. file names the
// source in error messages. Each override PATH=VALUE (Hydra-style: a dotted
// field path, a YAML value) replaces or adds that field before anything
// is decoded, so it is validated like the file and enters the hash; its
// messages name it as "FILE, override K".
func Parse(file string, data []byte, overrides ...string) (*Plan, error) {
	root, err := decodeDocument(file, data)
	if err != nil {
		return nil, err
	}
	if root, err = applyOverrides(file, root, overrides); err != nil {
		return nil, err
	}
	base := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: root.Line}
	var sweep, add *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "sweep":
			sweep = root.Content[i+1]
		case "add":
			add = root.Content[i+1]
		default:
			base.Content = append(base.Content, root.Content[i], root.Content[i+1])
		}
	}
	m, axes, err := decodeBase(file, base, sweep)
	if err != nil {
		return nil, err
	}
	added, err := addedCells(file, base, add, axes)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Manifest: *m}
	for _, a := range axes {
		if plan.Manifest.Sweep == nil {
			plan.Manifest.Sweep = map[string][]json.RawMessage{}
		}
		for _, v := range a.values {
			plan.Manifest.Sweep[a.path] = append(plan.Manifest.Sweep[a.path], json.RawMessage(v))
		}
	}
	for _, a := range added {
		plan.Manifest.Add = append(plan.Manifest.Add, a.values)
	}
	plan.Hash = HashOf(plan.Manifest)
	if err := checkCellCount(file, axes, len(added)); err != nil {
		return nil, err
	}
	if err := checkLayout(file, base, m.Table, axes); err != nil {
		return nil, err
	}
	if err := checkSelectSeeds(file, m.Table, plan.Manifest.Sweep["seed"], lineOf(base, "table")); err != nil {
		return nil, err
	}
	if plan.Cells, err = expand(file, base, m, axes); err != nil {
		return nil, err
	}
	for _, a := range added {
		a.cell.Index = len(plan.Cells)
		plan.Cells = append(plan.Cells, a.cell)
	}
	return plan, nil
}

// decodeDocument reads a manifest file's one YAML document: a mapping of
// fields without a duplicate key.
func decodeDocument(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		if line := tabIndented(data); line > 0 &&
			strings.Contains(err.Error(), "tab") { // the parser names the line before it
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf("%s: a tab in the indentation; YAML indents with spaces", position(file, line)),
				},
			}
		}
		return nil, &Error{
			Problems: []string{fmt.Sprintf("%s: not valid YAML: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))},
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: the manifest is empty; it needs at least version, name, task, rounds, lr and algorithm",
					file,
				),
			},
		}
	}
	var next yaml.Node
	if err := dec.Decode(&next); err != io.EOF {
		line := next.Line
		if err != nil {
			line = doc.Content[0].Line
		}
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: a second YAML document (after ---): a manifest file holds one; put each manifest in its own "+
						"file",
					position(file, line),
				),
			},
		}
	}
	if err := noDuplicateKeys(file, doc.Content[0]); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: a manifest is a mapping of fields (version, name, task, ...)",
					position(file, root.Line),
				),
			},
		}
	}
	return root, nil
}

// decodeBase decodes the manifest without its sweep, and the sweep's axes
// in its context; a base with problems has them reported with the
// sweep's values' problems, at once (each said once).
func decodeBase(file string, base, sweep *yaml.Node) (*Manifest, []axis, error) {
	m, err := decodeManifest(file, base)
	if bad := (*Error)(nil); errors.As(err, &bad) {
		var more *Error
		if _, err := sweepAxes(file, base, sweep); errors.As(err, &more) {
			for _, p := range more.Problems {
				if !slices.Contains(bad.Problems, p) {
					bad.Problems = append(bad.Problems, p)
				}
			}
		}
		return nil, nil, bad
	} else if err != nil {
		return nil, nil, err
	}
	axes, err := sweepAxes(file, base, sweep)
	if err != nil {
		return nil, nil, err
	}
	return m, axes, nil
}

// tabIndented returns the first line (from 1) whose indentation holds a
// tab, or 0.
func tabIndented(data []byte) int {
	for n, line := range strings.Split(string(data), "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if strings.Contains(indent, "\t") {
			return n + 1
		}
	}
	return 0
}

// noDuplicateKeys refuses a mapping that repeats a key (YAML decoders
// keep the last, silently).
func noDuplicateKeys(file string, n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if line, dup := first[k.Value]; dup {
				return &Error{
					Problems: []string{
						fmt.Sprintf(
							"%s: key %q repeats the one on line %d; give each key once",
							position(file, k.Line),
							k.Value,
							line,
						),
					},
				}
			}
			first[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := noDuplicateKeys(file, c); err != nil {
			return err
		}
	}
	return nil
}

// lineOf is the line of key in the mapping base, or base's own.
func lineOf(base *yaml.Node, key string) int {
	for i := 0; i+1 < len(base.Content); i += 2 {
		if base.Content[i].Value == key {
			return base.Content[i].Line
		}
	}
	return base.Line
}
