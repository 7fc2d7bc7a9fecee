package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ump-lab/ump/internal/display"
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
