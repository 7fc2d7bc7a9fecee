package manifests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ump-lab/ump/internal/bounded"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/tasks"
)

// Plan is a parsed manifest: the normalised manifest, its hash and its cells.
type Plan struct {
	Manifest Manifest `json:"manifest"`
	Hash     string   `json:"hash"`
	Cells    []Cell   `json:"cells"`
}

// Cell is one point of the sweep: a complete configuration without a sweep.
type Cell struct {
	Index  int               `json:"index"`
	Label  map[string]string `json:"label"` // swept path -> canonical value
	Config Manifest          `json:"config"`
	// Config holds the rounds the cell runs, without a scale, so a scaled
	// cell is the same cell as an unscaled one of that many rounds;
	// rounds is the unscaled number, for SetScale.
	rounds int
}

// LabelString renders the swept values as "path=value ..." in path order,
// fit for a terminal (display.Terminal).
func (c Cell) LabelString() string {
	paths := slices.Sorted(maps.Keys(c.Label))
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = display.Terminal(p + "=" + c.Label[p])
	}
	if len(parts) == 0 {
		return "(single cell)"
	}
	return strings.Join(parts, " ")
}

// Spec is the cell's canonical JSON without what cannot change its trained
// model's bits: the manifest's name, sweep and added cells, how often to evaluate and
// checkpoint, and the table's layout. It enters the cell key.
func (c Cell) Spec() []byte {
	cfg := c.Config
	cfg.Name, cfg.Sweep, cfg.Add, cfg.Table, cfg.Evaluate, cfg.Checkpoint = "", nil, nil, nil, Evaluate{}, Checkpoint{}
	return CanonicalJSON(cfg)
}

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

// unsweepable lists fields a sweep may not vary.
var unsweepable = map[string]bool{"version": true, "name": true, "table": true, "scale": true}

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

// applyOverrides applies PATH=VALUE overrides to the manifest's root, in
// order; each path may be given once.
func applyOverrides(file string, root *yaml.Node, overrides []string) (*yaml.Node, error) {
	setBy := map[string]int{}
	for k, ov := range overrides {
		path, _, _ := strings.Cut(ov, "=")
		if j, ok := setBy[path]; ok {
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf("override %d (%s): override %d already sets %s; give each path once", k+1, ov, j, path),
				},
			}
		}
		setBy[path] = k + 1
		var err error
		if root, err = override(file, root, k+1, ov); err != nil {
			return nil, err
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

// override applies the k-th override PATH=VALUE to the manifest's root
// mapping; the nodes it adds carry line -k (position).
func override(file string, root *yaml.Node, k int, ov string) (*yaml.Node, error) {
	where := fmt.Sprintf("%s (%s)", position(file, -k), ov)
	bad := func(format string, args ...any) error {
		return &Error{Problems: []string{where + ": " + fmt.Sprintf(format, args...)}}
	}
	path, text, ok := strings.Cut(ov, "=")
	if !ok || path == "" || strings.TrimSpace(text) == "" {
		return nil, bad("write PATH=VALUE, e.g. lr=0.1, algorithm.beta=0.5 or sweep.seed=[1,2,3]")
	}
	field, swept := strings.CutPrefix(path, "sweep.")
	if (helpFor(field) == "" && path != "add") || path == "sweep" {
		return nil, bad(
			"%q is not a manifest field%s; use a dotted path such as lr, algorithm.beta or sweep.seed",
			path,
			suggestion(root, path),
		)
	}
	if swept && !strings.HasPrefix(strings.TrimSpace(text), "[") {
		if msg := insideSweptList(root, field, strings.TrimSpace(text)); msg != "" {
			return nil, bad("%s", msg)
		}
	}
	if s := sweptOver(root, path); s != "" && !swept {
		return nil, bad("the manifest sweeps %s; override sweep.%s=[...] instead", s, s)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) == 0 {
		return nil, bad(
			"the value is not YAML (%v); quote the whole override for the shell, e.g. 'algorithm={name: d-sum, beta: "+
				"0.5}'",
			err,
		)
	}
	value := doc.Content[0]
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		n.Line = -k
		for _, c := range n.Content {
			mark(c)
		}
	}
	mark(value)
	if swept {
		return withSwept(file, root, field, value, -k)
	}
	return withPath(file, root, path, value, -k)
}

// sweptOver is the field of the manifest's sweep that an override of
// path (not under sweep.) would collide with: path itself, a field
// below it or one above it; "" when none.
func sweptOver(root *yaml.Node, path string) string {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "sweep" || root.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j < len(root.Content[i+1].Content); j += 2 {
			if s := root.Content[i+1].Content[j].Value; s == path || strings.HasPrefix(s, path+".") ||
				strings.HasPrefix(path, s+".") {
				return s
			}
		}
	}
	return ""
}

// suggestion is " (did you mean \"algorithm.beta\"?)" for a misspelt
// path (suggestPath), checked as the override would be: where the
// manifest sweeps what the corrected path names, it names the override
// that works instead; "" when there is no close path.
func suggestion(root *yaml.Node, path string) string {
	fixed := suggestPath(path)
	if fixed == "" {
		return ""
	}
	if s := sweptOver(root, fixed); s != "" && !strings.HasPrefix(fixed, "sweep.") {
		return fmt.Sprintf(
			" (did you mean %q? the manifest sweeps %s, so that is overridden as sweep.%s=[...])",
			fixed,
			s,
			s,
		)
	}
	return fmt.Sprintf(" (did you mean %q?)", fixed)
}

// suggestPath is "algorithm.beta" for a path with one misspelt key: the
// first key its mapping does not allow, replaced by the closest one it
// does; "" when there is none or no close one.
func suggestPath(path string) string {
	parts := strings.Split(path, ".")
	t := reflect.TypeOf(Manifest{})
	for i, key := range parts {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if i == 0 && key == "sweep" && len(parts) > 1 {
			continue // sweep.FIELD names a field of the manifest
		}
		var allowed []string
		switch {
		case isBlock(t):
			allowed = blockKeys(reflect.New(t).Interface().(block).family())
		case t.Kind() == reflect.Struct:
			allowed = keys(t)
		}
		if slices.Contains(allowed, key) {
			if f, ok := fieldByKey(t, key); ok && !isBlock(t) {
				t = f.Type
				continue
			}
			return "" // a block's parameter: nothing below it
		}
		best, ok := kinds.Closest(key, allowed)
		if !ok {
			return ""
		}
		fixed := slices.Clone(parts)
		fixed[i] = best
		return strings.Join(fixed, ".")
	}
	return ""
}

// insideSweptList explains an override sweep.FIELD=VALUE (not a list)
// whose FIELD lies inside a path the manifest sweeps as a list of mappings
// (sweep.algorithm.beta=0.5 where algorithm is swept): such a value is set
// in every entry of that list, which it writes out with value. It returns
// "" when FIELD is not such a path.
func insideSweptList(root *yaml.Node, field, value string) string {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "sweep" || root.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		sweep := root.Content[i+1]
		for j := 0; j+1 < len(sweep.Content); j += 2 {
			s, list := sweep.Content[j].Value, sweep.Content[j+1]
			key, inside := strings.CutPrefix(field, s+".")
			if !inside || list.Kind != yaml.SequenceNode {
				continue
			}
			var entries []string
			for _, e := range list.Content {
				if e.Kind != yaml.MappingNode {
					return ""
				}
				var kv []string
				set := !takes(s, e, key) // an entry whose kind lacks key keeps its own
				for m := 0; m+1 < len(e.Content); m += 2 {
					v := e.Content[m+1].Value
					if e.Content[m].Value == key {
						v, set = value, true
					}
					kv = append(kv, e.Content[m].Value+": "+v)
				}
				if !set {
					kv = append(kv, key+": "+value)
				}
				entries = append(entries, "{"+strings.Join(kv, ", ")+"}")
			}
			return fmt.Sprintf(
				"the manifest sweeps %s as a list of %d entries; to set %s in each that takes it, override the whole "+
					"list: 'sweep.%s=[%s]'; to sweep %s itself, give a list: sweep.%s=[...]",
				s,
				len(entries),
				key,
				s,
				strings.Join(entries, ", "),
				field,
				field,
			)
		}
	}
	return ""
}

// takes reports whether the entry e of the block at path (a mapping
// naming its kind) takes the parameter key; true when path is no block or
// names no known kind.
func takes(path string, e *yaml.Node, key string) bool {
	t := reflect.TypeOf(Manifest{})
	for _, k := range strings.Split(path, ".") {
		f, ok := fieldByKey(t, k)
		if !ok {
			return true
		}
		for t = f.Type; t.Kind() == reflect.Pointer; {
			t = t.Elem()
		}
	}
	if !isBlock(t) {
		return true
	}
	fam := reflect.New(t).Interface().(block).family()
	for i := 0; i+1 < len(e.Content); i += 2 {
		if e.Content[i].Value == fam.Key {
			if k, ok := fam.Lookup(e.Content[i+1].Value); ok {
				return slices.ContainsFunc(k.Params, func(p kinds.Param) bool { return p.Name == key })
			}
		}
	}
	return true
}

// withSwept sets the sweep's list for field, a dotted path that the sweep
// mapping holds as one key (sweep.partition.alpha sets sweep's
// "partition.alpha", not a "partition" mapping inside it).
func withSwept(file string, root *yaml.Node, field string, value *yaml.Node, line int) (*yaml.Node, error) {
	sweep := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "sweep" {
			sweep = root.Content[i+1]
		}
	}
	if sweep.Kind != yaml.MappingNode {
		return nil, &Error{
			Problems: []string{
				fmt.Sprintf(
					"%s: field \"sweep\": expected a mapping of swept fields, got %s",
					position(file, sweep.Line),
					describe(sweep),
				),
			},
		}
	}
	out := *sweep
	out.Content = append([]*yaml.Node(nil), sweep.Content...)
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: field, Line: line}
	replaced := false
	for i := 0; i+1 < len(out.Content); i += 2 {
		if out.Content[i].Value == field {
			out.Content[i], out.Content[i+1], replaced = key, value, true
		}
	}
	if !replaced {
		out.Content = append(out.Content, key, value)
	}
	return withPath(file, root, "sweep", &out, line)
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

// HashOf is the manifest hash: sha256 of the canonical JSON of the
// normalised manifest and the schema version.
func HashOf(m Manifest) string {
	sum := sha256.Sum256(CanonicalJSON(struct {
		Schema   int      `json:"schema"`
		Manifest Manifest `json:"manifest"`
	}{SchemaVersion, m}))
	return hex.EncodeToString(sum[:])
}

// SetEngine sets the engine of the manifest and every cell, as if the file
// said `engine: ENGINE` (the hash changes accordingly); it is what
// `ump run --engine` does.
func (p *Plan) SetEngine(engine string) error {
	if _, swept := p.Manifest.Sweep["engine"]; swept {
		return &Error{Problems: []string{"--engine: the manifest sweeps engine; remove the flag or the sweep"}}
	}
	if !slices.Contains(tasks.Engines, engine) {
		return &Error{
			Problems: []string{fmt.Sprintf("--engine %q: use %s", engine, strings.Join(tasks.Engines, " or "))},
		}
	}
	if kind := p.Manifest.Task.Kind(); !slices.Contains(kind.Engines, engine) {
		return &Error{
			Problems: []string{
				fmt.Sprintf(
					"--engine %s: the %s task runs on the %s",
					engine,
					kind.Name,
					strings.ToUpper(kind.Engines[0]),
				),
			},
		}
	}
	if engine == tasks.GPU && p.Manifest.Validation != nil {
		return &Error{
			Problems: []string{
				"--engine gpu: the manifest holds out a validation split (validation:), which the GPU engine does " +
					"not score; use --engine cpu (or remove validation)",
			},
		}
	}
	if engine == tasks.CPU {
		engine = ""
	}
	p.Manifest.Engine = engine
	for i := range p.Cells {
		p.Cells[i].Config.Engine = engine
	}
	p.Hash = HashOf(p.Manifest)
	return nil
}

// SetScale sets the scale of the manifest, as if the file said
// `scale: SCALE` (the hash changes accordingly): every cell runs its rounds
// times scale. It is what `ump run --scale` does.
func (p *Plan) SetScale(scale float64) error {
	if !(scale > 0 && scale <= 1) {
		return &Error{
			Problems: []string{
				fmt.Sprintf("--scale %g: use a number in (0, 1] (to run longer, raise rounds in the manifest)", scale),
			},
		}
	}
	m := p.Manifest
	m.Scale = &scale
	if scale == 1 {
		m.Scale = nil // the default, written out
	}
	cells := slices.Clone(p.Cells)
	for i := range cells {
		c := &cells[i].Config
		c.Rounds, c.Scale = cells[i].rounds, m.Scale
		if err := c.validate(func(string) string { return "--scale" }); err != nil {
			return err
		}
		c.Rounds, c.Scale = c.ScaledRounds(), nil
	}
	p.Manifest, p.Cells, p.Hash = m, cells, HashOf(m)
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

// withPath returns a copy of root with the dotted path set to value. The key
// it sets or creates gets the given line (the swept value's), so messages
// point at the sweep.
func withPath(file string, root *yaml.Node, path string, value *yaml.Node, line int) (*yaml.Node, error) {
	head, rest, nested := strings.Cut(path, ".")
	out := *root
	out.Content = append([]*yaml.Node(nil), root.Content...)
	for i := 0; i+1 < len(out.Content); i += 2 {
		if out.Content[i].Value != head {
			continue
		}
		if !nested {
			key := *out.Content[i]
			key.Line = line
			out.Content[i], out.Content[i+1] = &key, value
			return &out, nil
		}
		child := out.Content[i+1]
		if child.Kind != yaml.MappingNode {
			return nil, &Error{
				Problems: []string{
					fmt.Sprintf(
						"%s: field %q: expected a mapping to sweep %q inside it, got %s",
						position(file, child.Line),
						head,
						path,
						describe(child),
					),
				},
			}
		}
		sub, err := withPath(file, child, rest, value, line)
		if err != nil {
			return nil, err
		}
		out.Content[i+1] = sub
		return &out, nil
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: head, Line: line}
	if !nested {
		out.Content = append(out.Content, key, value)
		return &out, nil
	}
	sub, err := withPath(file, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}, rest, value, line)
	if err != nil {
		return nil, err
	}
	out.Content = append(out.Content, key, sub)
	return &out, nil
}

// valueAt returns the canonical JSON of the field at a dotted path.
func valueAt(m *Manifest, path string) string {
	tree, err := decodeNumbers(CanonicalJSON(m))
	if err != nil {
		panic(err)
	}
	for _, key := range strings.Split(path, ".") {
		obj, _ := tree.(map[string]any)
		tree = obj[key]
	}
	return string(CanonicalJSON(tree))
}

// ValueAt renders the value of a dotted path of a cell for people, as
// sweep labels are rendered ("0.1", "d-sum(alpha=2,beta=0.9)"). A block's
// parameter shows its value even where its JSON leaves it out (a quiet
// parameter at its default), and "n/a" where the block's kind does not
// take it.
func (c Cell) ValueAt(path string) string {
	v := valueAt(&c.Config, path)
	head, param, nested := strings.Cut(path, ".")
	if v != "null" || !nested {
		return labelValue(v)
	}
	b, ok := c.Config.blocks()[head]
	if !ok {
		return labelValue(v)
	}
	_, params := b.fields()
	if x, ok := (*params)[param]; ok {
		return labelValue(string(CanonicalJSON(x)))
	}
	return "n/a"
}

// labelValue renders a canonical JSON value for people: strings bare,
// objects as name(key=value,...) in key order.
func labelValue(canonical string) string {
	v, err := decodeNumbers([]byte(canonical))
	if err != nil {
		return canonical
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		name, _ := x["name"].(string)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k != "name" {
				parts = append(parts, k+"="+labelValue(string(CanonicalJSON(x[k]))))
			}
		}
		return name + "(" + strings.Join(parts, ",") + ")"
	}
	return canonical
}

func labelOf(axes []axis, idx []int) string {
	parts := make([]string, len(axes))
	for k, a := range axes {
		parts[k] = a.path + "=" + labelValue(a.values[idx[k]])
	}
	return strings.Join(parts, " ")
}

// YAML is the normalised manifest as a manifest file: keys sorted,
// defaults written out. Opening it gives the same hash
// (TestYAMLRunsWithTheSameHash).
func YAML(m Manifest) []byte {
	tree, err := decodeNumbers(CanonicalJSON(m))
	if err != nil {
		panic(err)
	}
	out, err := yaml.Marshal(yamlNumbers(tree))
	if err != nil {
		panic(fmt.Sprintf("manifests: YAML: %v", err))
	}
	return out
}

// decodeNumbers decodes JSON with every number as written (json.Number):
// an integer above 2^53 keeps its digits, where float64 would round it
// (two seeds then shared a manifest hash).
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	err := dec.Decode(&tree)
	return tree, err
}

// yamlNumbers is a decoded JSON tree with each number as YAML should
// write it: an integer as an integer at any size (a seed of 20240101,
// not 2.0240101e+07), any other number as its float64.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = yamlNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			panic(fmt.Sprintf("manifests: YAML: number %s: %v", x, err))
		}
		return f
	}
	return v
}

// CanonicalJSON encodes v with object keys sorted, no insignificant space
// and numbers in Go's shortest round-trip form.
func CanonicalJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifests: canonical JSON: %v", err))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		panic(err)
	}
	out, err := json.Marshal(tree)
	if err != nil {
		panic(err)
	}
	return out
}

// checkLayout refuses a table block that does not account for every swept
// path (Table.Unplaced), naming them all and where each is swept, before
// anything runs.
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

// lineOf is the line of key in the mapping base, or base's own.
func lineOf(base *yaml.Node, key string) int {
	for i := 0; i+1 < len(base.Content); i += 2 {
		if base.Content[i].Value == key {
			return base.Content[i].Line
		}
	}
	return base.Line
}

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
