package published

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Results is the paper's published results and claims
// (manifests/published.yaml says what each field means).
type Results struct {
	// Confidence is the level at which each comparison a claim makes is
	// decided (DefaultConfidence when not given).
	Confidence float64            `yaml:"confidence"`
	Tables     []Table            `yaml:"tables"`
	Readings   map[string]float64 `yaml:"readings"`
	Claims     []Claim            `yaml:"claims"`
}

// Table is one of the paper's tables, tied to the embedded paper
// manifest named Manifest (and its Variants: the same table under another
// protocol) by its row and column labels.
type Table struct {
	Manifest string   `yaml:"manifest"`
	Variants []string `yaml:"variants"`
	Paper    string   `yaml:"paper"`
	// Drawn: the paper draws the results as a figure and prints no
	// numbers; its rows have no values, and claims are decided on ours.
	Drawn   bool     `yaml:"drawn"`
	Columns []string `yaml:"columns"`
	Rows    []Row    `yaml:"rows"`
}

// Row is a row of a published table: the manifest's row label,
// the paper's name for it and its entries as printed, one per column.
type Row struct {
	Row    string   `yaml:"row"`
	Name   string   `yaml:"name"`
	Values []string `yaml:"values"`
}

// Claim is a statement of the paper that a table's entries decide
// (exactly one kind: Order, ColumnOrder, Rises, Falls, Widens, Best,
// Worst or Converges), from the paper's LaTeX source at Line, where Quote
// stands.
type Claim struct {
	Claim string `yaml:"claim"`
	Line  int    `yaml:"line"`
	Quote string `yaml:"quote"`
	// Reading is how ump reads what the text leaves open (a threshold,
	// "every entry" for "tends to"), printed beside the verdict.
	Reading     string   `yaml:"reading"`
	Tables      []string `yaml:"tables"`
	Order       []group  `yaml:"order"`
	ColumnOrder []group  `yaml:"column_order"`
	// GroupMeans reads a column_order on each group's mean over its
	// columns ("on average"), not entry by entry.
	GroupMeans bool              `yaml:"group_means"`
	Strict     bool              `yaml:"strict"`
	Columns    []string          `yaml:"columns"`
	Rows       []string          `yaml:"rows"`
	Rises      bool              `yaml:"rises"`
	Falls      bool              `yaml:"falls"`
	Widens     []string          `yaml:"widens"`
	Best       map[string]string `yaml:"best"`
	Worst      map[string]string `yaml:"worst"`
	Converges  *Convergence      `yaml:"converges"`
}

// Convergence is a claim on the curves (each entry's figure per evaluated
// round, at its chosen learning rate, the mean over seeds): in every
// column, every row of Faster[0] reaches Within points of its final
// figure in at most 1 − Fewer times the rounds every row of Faster[1]
// takes. A row that diverged never reaches it.
type Convergence struct {
	Within float64 `yaml:"within"` // points (the paper's percent)
	Fewer  float64 `yaml:"fewer"`  // a fraction of the slower rows' rounds
	Faster []group `yaml:"faster"` // two groups: the faster rows, the slower
}

// group is one step of a claim's order: a row name or a list of them.
type group []string

func (g *group) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*g = group{n.Value}
		return nil
	}
	return n.Decode((*[]string)(g))
}

// DefaultConfidence is the confidence of claims' comparisons where the
// data file declares none.
const DefaultConfidence = 0.95

// Value is an entry as the paper prints it, read: mean ± std in
// percent (HasStd when a std is printed), or Diverged for "*".
type Value struct {
	Printed   string
	Mean, Std float64
	HasStd    bool
	Diverged  bool
}

// Parse reads and checks published data: every row has an
// entry per column, every entry reads as a number (or through readings),
// every claim names tables, rows and columns that exist.
func Parse(data []byte) (*Results, error) {
	var p Results
	if err := decodeStrict(data, &p); err != nil {
		return nil, fmt.Errorf("published results: %w", err)
	}
	switch {
	case p.Confidence == 0:
		p.Confidence = DefaultConfidence
	case !(p.Confidence > 0 && p.Confidence < 1):
		return nil, fmt.Errorf("published results: confidence %g: give a level in (0, 1), such as 0.95", p.Confidence)
	}
	for _, t := range p.Tables {
		for _, r := range t.Rows {
			if t.Drawn && len(r.Values) > 0 {
				return nil, fmt.Errorf("published results: %s, row %s: a drawn table has no values", t.Manifest, r.Name)
			}
			if !t.Drawn && len(r.Values) != len(t.Columns) {
				return nil, fmt.Errorf(
					"published results: %s, row %s: %d values for %d columns",
					t.Manifest,
					r.Name,
					len(r.Values),
					len(t.Columns),
				)
			}
			for _, v := range r.Values {
				if _, err := p.Read(v); err != nil {
					return nil, fmt.Errorf("published results: %s, row %s: %w", t.Manifest, r.Name, err)
				}
			}
		}
	}
	for _, c := range p.Claims {
		if err := p.checkClaim(&c); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// decodeStrict decodes YAML data into v, refusing a field v has not.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// checkClaim checks that claim c has exactly one kind and names rows and
// columns its tables have.
func (p *Results) checkClaim(c *Claim) error {
	kinds := 0
	for _, set := range []bool{len(c.Order) > 0, len(c.ColumnOrder) > 0, c.Rises, c.Falls, len(c.Widens) > 0,
		len(c.Best) > 0, len(c.Worst) > 0, c.Converges != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("published results: claim %q: give exactly one of order, column_order, rises, falls, "+
			"widens, best, worst and converges", c.Claim)
	}
	if v := c.Converges; v != nil && (len(v.Faster) != 2 || !(v.Within > 0) || !(v.Fewer >= 0 && v.Fewer < 1)) {
		return fmt.Errorf("published results: claim %q: converges needs within > 0 (points), fewer in [0, 1) "+
			"and faster: [FASTER ROWS, SLOWER ROWS]", c.Claim)
	}
	if c.GroupMeans && len(c.ColumnOrder) == 0 {
		return fmt.Errorf("published results: claim %q: group_means reads a column_order; give one", c.Claim)
	}
	if len(c.Widens) > 0 && len(c.Widens) != 2 {
		return fmt.Errorf("published results: claim %q: widens names two rows, the one ahead and the one behind",
			c.Claim)
	}
	for _, name := range c.Tables {
		t := p.Table(name)
		if t == nil {
			return fmt.Errorf("published results: claim %q: no table %s", c.Claim, name)
		}
		names := slices.Concat(slices.Sorted(maps.Keys(c.Best)), slices.Sorted(maps.Keys(c.Worst)), c.Rows, c.Widens)
		for _, g := range c.Order {
			names = append(names, g...)
		}
		if c.Converges != nil {
			for _, g := range c.Converges.Faster {
				names = append(names, g...)
			}
		}
		for _, n := range names {
			if t.RowNamed(n) < 0 {
				return fmt.Errorf("published results: claim %q: %s has no row %s", c.Claim, name, n)
			}
		}
		cols := slices.Concat(c.Columns, slices.Collect(maps.Values(c.Best)), slices.Collect(maps.Values(c.Worst)))
		for _, g := range c.ColumnOrder {
			cols = append(cols, g...)
		}
		for _, col := range cols {
			if !slices.Contains(t.Columns, col) {
				return fmt.Errorf("published results: claim %q: %s has no column %s", c.Claim, name, col)
			}
		}
	}
	return nil
}

// Declared is p with one claim of ump's own in place of the paper's:
// a comparison REPRODUCING.md makes beyond the paper's quoted claims,
// decided on table's entries by the same rule. It has no line or quote.
func (p *Results) Declared(table string, data []byte) (*Results, error) {
	var c Claim
	if err := decodeStrict(data, &c); err != nil {
		return nil, fmt.Errorf("declared claim: %w", err)
	}
	switch {
	case c.Claim == "":
		return nil, fmt.Errorf("declared claim: give its words as claim: ...")
	case c.Line != 0 || c.Quote != "" || len(c.Tables) > 0:
		return nil, fmt.Errorf("declared claim %q: a declared claim is ump's, not the paper's: "+
			"leave out line, quote and tables", c.Claim)
	}
	c.Tables = []string{table}
	d := *p
	d.Claims = []Claim{c}
	if err := d.checkClaim(&c); err != nil {
		return nil, err
	}
	return &d, nil
}

// Read reads a printed entry.
func (p *Results) Read(printed string) (Value, error) {
	v := Value{Printed: printed}
	if printed == "*" {
		v.Diverged = true
		return v, nil
	}
	number := func(s string) (float64, error) {
		if r, ok := p.Readings[s]; ok {
			return r, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("entry %q: %q is not a number (declare how to read it under readings)", printed, s)
		}
		return f, nil
	}
	mean, std, hasStd := strings.Cut(printed, " ± ")
	var err error
	if v.Mean, err = number(mean); err != nil {
		return v, err
	}
	if hasStd {
		v.HasStd = true
		v.Std, err = number(std)
	}
	return v, err
}

// Table returns the published table tied to the manifest named name (or
// to a variant of it), or nil.
func (p *Results) Table(name string) *Table {
	for i := range p.Tables {
		if p.Tables[i].Manifest == name || slices.Contains(p.Tables[i].Variants, name) {
			return &p.Tables[i]
		}
	}
	return nil
}

// RowLabelled is the index of the row tied to the manifest's row label, or
// -1.
func (t *Table) RowLabelled(label string) int {
	return slices.IndexFunc(t.Rows, func(r Row) bool { return r.Row == label })
}

// RowNamed is the index of the row the paper calls name, or -1.
func (t *Table) RowNamed(name string) int {
	return slices.IndexFunc(t.Rows, func(r Row) bool { return r.Name == name })
}
