package kinds

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type is a parameter's type.
type Type int

const (
	Float Type = iota
	Int
	Bool
	String
)

// Param declares one parameter of a kind.
type Param struct {
	Name string
	Type Type
	Doc  string // what it is, for help and errors ("the Dirichlet concentration")
	// Range bounds a number, as an interval with inf for no bound:
	// "[0, 1)", "(0, 1]", "[0, inf)", "(0, inf)", "[1, inf)"; "" for any.
	Range   string
	Choices []string // a String's allowed values
	// Default is the value when the parameter is not given: float64, int,
	// bool or string; nil for none. DefaultOf computes one instead, from
	// the other parameters (after their defaults) or the cell.
	Default   any
	DefaultOf func(v Values, c Cell) any
	// Required, when set, makes the parameter mandatory; it is the message
	// that says so ("dirichlet needs alpha, the non-IID degree ...").
	Required string
	// Quiet leaves the parameter out of a block's JSON (and so out of
	// manifest hashes and cache keys) while it has its Default: a
	// parameter added to a kind that cells already ran keeps their keys.
	Quiet bool
}

// Cell is what of a cell a kind's defaults and checks may read.
type Cell struct {
	Workers, LocalSteps, Rounds int
}

// Problem is one thing wrong with a block: Param names the parameter, ""
// the kind itself, or Cell a cell field instead (local_steps).
type Problem struct {
	Param, Cell, Msg string
}

// Kind declares one kind of a family; New is its constructor, of the
// family's own type.
type Kind[New any] struct {
	Name   string
	Doc    string
	Params []Param
	// Uses lists the cell fields beyond its parameters that its results
	// depend on ("rounds", "seed"): they enter its stage's cache key.
	Uses []string
	// Check reports what no single parameter shows (nil: nothing).
	Check func(v Values, c Cell) []Problem
	New   New
}

// Family is every kind of one manifest block.
type Family[New any] struct {
	Field string // the manifest field: "algorithm"
	Key   string // the block key that names the kind: "name"
	Kinds []Kind[New]
}

// Schema is a family without its constructors: what manifests and export
// read.
type Schema = Family[struct{}]

// Schema returns the declarations without the constructors.
func (f *Family[New]) Schema() *Schema {
	s := &Schema{Field: f.Field, Key: f.Key}
	for _, k := range f.Kinds {
		s.Kinds = append(
			s.Kinds,
			Kind[struct{}]{Name: k.Name, Doc: k.Doc, Params: k.Params, Uses: k.Uses, Check: k.Check},
		)
	}
	return s
}

// Lookup returns the kind named name.
func (f *Family[New]) Lookup(name string) (*Kind[New], bool) {
	for i := range f.Kinds {
		if f.Kinds[i].Name == name {
			return &f.Kinds[i], true
		}
	}
	return nil, false
}

// Names lists the kinds in declaration order.
func (f *Family[New]) Names() []string {
	out := make([]string, len(f.Kinds))
	for i, k := range f.Kinds {
		out[i] = k.Name
	}
	return out
}

// Params lists every parameter any kind takes, once each, in the order
// they are first declared.
func (f *Family[New]) Params() []Param {
	var out []Param
	for _, k := range f.Kinds {
		for _, p := range k.Params {
			if !slices.ContainsFunc(out, func(q Param) bool { return q.Name == p.Name }) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Param returns the parameter of this name of the kind.
func (k *Kind[New]) Param(name string) (Param, bool) {
	i := slices.IndexFunc(k.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return k.Params[i], true
}

// ParamNames lists the kind's parameters, or "none".
func (k *Kind[New]) ParamNames() string {
	if len(k.Params) == 0 {
		return "none"
	}
	names := make([]string, len(k.Params))
	for i, p := range k.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Fill sets every parameter not given to its default.
func (k *Kind[New]) Fill(v Values, c Cell) {
	for _, p := range k.Params {
		if _, ok := v[p.Name]; !ok && p.Default != nil {
			v[p.Name] = p.Default
		}
	}
	for _, p := range k.Params {
		if _, ok := v[p.Name]; !ok && p.DefaultOf != nil {
			v[p.Name] = p.DefaultOf(v, c)
		}
	}
}

// WithDefaults returns a copy of v in which every parameter the kind takes
// and v lacks has its default.
func (k *Kind[New]) WithDefaults(v Values, c Cell) Values {
	out := Values{}
	maps.Copy(out, v)
	k.Fill(out, c)
	return out
}

// Validate reports what ValidateParams does, then, if that is nothing,
// what the kind's own Check finds.
func (k *Kind[New]) Validate(v Values, c Cell) []Problem {
	out := k.ValidateParams(v)
	if len(out) == 0 && k.Check != nil {
		out = k.Check(v, c)
	}
	return out
}

// ValidateParams reports parameters given that the kind does not take,
// required ones missing, and values out of range or not among the
// choices.
func (k *Kind[New]) ValidateParams(v Values) []Problem {
	var out []Problem
	for _, name := range v.names() {
		if _, ok := k.Param(name); !ok {
			out = append(
				out,
				Problem{
					Param: name,
					Msg:   fmt.Sprintf("%s does not take %s; its parameters are: %s", k.Name, name, k.ParamNames()),
				},
			)
		}
	}
	for _, p := range k.Params {
		x, ok := v[p.Name]
		switch {
		case !ok && p.Required != "":
			out = append(out, Problem{Param: p.Name, Msg: p.Required})
		case ok:
			if msg := p.check(x); msg != "" {
				out = append(out, Problem{Param: p.Name, Msg: msg})
			}
		}
	}
	return out
}

// check returns what is wrong with a value of the right type, or "".
func (p Param) check(x any) string {
	switch p.Type {
	case Float, Int:
		f := toFloat(x)
		if lo, hi, loOpen, hiOpen, ok := p.bounds(); ok &&
			(f < lo || f > hi || (loOpen && f == lo) || (hiOpen && f == hi) || f != f) {
			return fmt.Sprintf("%s is out of range; use %s", strconv.FormatFloat(f, 'g', -1, 64), p.Help())
		}
	case String:
		if s := x.(string); len(p.Choices) > 0 && !slices.Contains(p.Choices, s) {
			return fmt.Sprintf(
				"%q is not allowed%s; use one of: %s",
				s,
				DidYouMean(s, p.Choices),
				strings.Join(p.Choices, ", "),
			)
		}
	}
	return ""
}

// bounds parses Range.
func (p Param) bounds() (lo, hi float64, loOpen, hiOpen, ok bool) {
	r := p.Range
	if len(r) < 2 {
		return 0, 0, false, false, false
	}
	a, b, found := strings.Cut(r[1:len(r)-1], ",")
	if !found {
		panic("kinds: bad range " + r + " of " + p.Name)
	}
	parse := func(s string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			panic("kinds: bad range " + r + " of " + p.Name)
		}
		return f
	}
	return parse(a), parse(b), r[0] == '(', r[len(r)-1] == ')', true
}

// Help says what values the parameter allows: "a number in [0, 1)", "a
// positive integer", "one of: paper, unbiased".
func (p Param) Help() string {
	switch p.Type {
	case Bool:
		return "true or false"
	case String:
		if len(p.Choices) > 0 {
			return "one of: " + strings.Join(p.Choices, ", ")
		}
		return "a string"
	}
	what := "a number"
	if p.Type == Int {
		what = "an integer"
	}
	lo, hi, loOpen, _, ok := p.bounds()
	switch {
	case !ok:
		return what
	case p.Type == Int && lo == 1 && !loOpen && math.IsInf(hi, 1):
		return "a positive integer"
	case math.IsInf(hi, 1) && loOpen:
		return fmt.Sprintf("%s > %g", what, lo)
	case math.IsInf(hi, 1):
		return fmt.Sprintf("%s >= %g", what, lo)
	}
	return fmt.Sprintf("%s in %s", what, p.Range)
}

// Describe is the parameter's doc with what it allows, for messages.
func (p Param) Describe() string {
	if p.Doc == "" {
		return p.Help()
	}
	return p.Doc + ", " + p.Help()
}

// Coerce checks a decoded value's type (YAML scalars, JSON numbers) and
// returns it as the parameter's Go type, or an error saying what it
// expected.
func (p Param) Coerce(x any) (any, error) {
	bad := fmt.Errorf("expected %s", p.Describe())
	switch p.Type {
	case Float:
		switch n := x.(type) {
		case float64:
			return n, nil
		case int:
			return float64(n), nil
		case json.Number:
			f, err := n.Float64()
			if err != nil {
				return nil, bad
			}
			return f, nil
		}
	case Int:
		switch n := x.(type) {
		case int:
			return n, nil
		case float64:
			if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
				return int(n), nil
			}
		case json.Number:
			i, err := strconv.Atoi(n.String())
			if err != nil {
				return nil, bad
			}
			return i, nil
		}
	case Bool:
		if b, ok := x.(bool); ok {
			return b, nil
		}
	case String:
		if s, ok := x.(string); ok {
			return s, nil
		}
	}
	return nil, bad
}

func toFloat(x any) float64 {
	switch n := x.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case nil:
		return 0
	}
	return math.NaN()
}

// Values are a block's parameters by name: float64, int, bool or string,
// as the kind's Params declare.
type Values map[string]any

// Float, Int, Bool and String return a parameter, or the zero value when
// it is absent.
func (v Values) Float(name string) float64 {
	return toFloat(v[name])
}

func (v Values) Int(name string) int {
	i, _ := v[name].(int)
	return i
}

func (v Values) Bool(name string) bool {
	b, _ := v[name].(bool)
	return b
}

func (v Values) String(name string) string {
	s, _ := v[name].(string)
	return s
}

func (v Values) names() []string {
	out := make([]string, 0, len(v))
	for name := range v {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Bind returns the family schema declares, each kind with its constructor
// from news by name: a package that implements a family whose declaration
// lives elsewhere (below what reads manifests) binds to it. A declared kind
// without a constructor, or a constructor of no declared kind, is a
// programming error: Bind panics, so the implementing package's every test
// fails.
func Bind[New any](schema *Schema, news map[string]New) Family[New] {
	f := Family[New]{Field: schema.Field, Key: schema.Key}
	for _, k := range schema.Kinds {
		n, ok := news[k.Name]
		if !ok {
			panic(fmt.Sprintf("kinds: %s %q is declared but has no constructor", schema.Field, k.Name))
		}
		f.Kinds = append(
			f.Kinds,
			Kind[New]{Name: k.Name, Doc: k.Doc, Params: k.Params, Uses: k.Uses, Check: k.Check, New: n},
		)
	}
	if len(news) != len(schema.Kinds) {
		for name := range news {
			if _, ok := schema.Lookup(name); !ok {
				panic(fmt.Sprintf("kinds: %s %q has a constructor but no declaration", schema.Field, name))
			}
		}
	}
	return f
}
