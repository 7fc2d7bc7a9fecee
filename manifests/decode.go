package manifests

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ump-lab/ump/kinds"
)

// decoder turns a YAML node tree into a Manifest, refusing unknown keys and
// wrong types, and records the line of every key it saw.
type decoder struct {
	file  string
	lines map[string]int // dotted path -> line of its key
}

// position names a line of the manifest file, or, for a negative line
// -k, the k-th override of the command line (OpenWith), which has none.
func position(file string, line int) string {
	if line < 0 {
		return fmt.Sprintf("%s, override %d", file, -line)
	}
	return fmt.Sprintf("%s:%d", file, line)
}

func (d *decoder) errorf(line int, path, format string, args ...any) error {
	return &Error{
		Problems: []string{fmt.Sprintf("%s: field %q: %s", position(d.file, line), path, fmt.Sprintf(format, args...))},
	}
}

// at formats the position of a path for validation messages.
func (d *decoder) at(path string) string {
	for p := path; p != ""; p = parent(p) {
		if line, ok := d.lines[p]; ok {
			return position(d.file, line)
		}
	}
	return d.file
}

func (d *decoder) given(path string) bool {
	_, ok := d.lines[path]
	return ok
}

func parent(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// ownForms is a struct with a field written in a form of its own, which
// decodeOwn reads (done), leaving the others to the decoder.
type ownForms interface {
	decodeOwn(d *decoder, key string, n *yaml.Node, path string) (done bool, err error)
}

// decodeOwn reads table.select's mapping form, {by: PATH, seeds: [...], per: [...]}.
func (t *Table) decodeOwn(d *decoder, key string, n *yaml.Node, path string) (bool, error) {
	if key != "select" || n.Kind != yaml.MappingNode {
		return false, nil
	}
	return true, d.decodeSelection(n, t, path)
}

// decodeSelection fills table.select's mapping form into t.
func (d *decoder) decodeSelection(n *yaml.Node, t *Table, path string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		d.lines[p] = k.Line
		var err error
		switch k.Value {
		case "by":
			err = d.decode(val, reflect.ValueOf(&t.Select).Elem(), p, "a swept path tuned per entry, e.g. lr")
		case "seeds":
			err = d.decode(
				val,
				reflect.ValueOf(&t.SelectSeeds).Elem(),
				p,
				"a list of the swept seeds to tune on, e.g. [1, 2]",
			)
		case "per":
			if val.Kind == yaml.ScalarNode { // per: row is per: [row]
				val = &yaml.Node{
					Kind:    yaml.SequenceNode,
					Tag:     "!!seq",
					Line:    val.Line,
					Column:  val.Column,
					Content: []*yaml.Node{val},
				}
			}
			err = d.decode(
				val,
				reflect.ValueOf(&t.SelectPer).Elem(),
				p,
				"entry, row, or a list of them, e.g. [row, entry]",
			)
		default:
			return d.errorf(
				k.Line,
				p,
				"unknown key %q%s; allowed keys here: by, seeds, per",
				k.Value,
				kinds.DidYouMean(k.Value, []string{"by", "seeds", "per"}),
			)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decode fills v from n. help describes what v allows, for messages.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path, help string) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" { // absent, as the normalised form writes it
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), path, help)
	case reflect.Struct:
		if b, ok := v.Addr().Interface().(block); ok {
			return d.decodeBlock(n, b, path, help)
		}
		if n.Kind != yaml.MappingNode {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		return d.decodeStruct(n, v, path)
	case reflect.Map: // of strings: table.labels
		if n.Kind != yaml.MappingNode {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.Set(reflect.MakeMap(v.Type()))
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			elem := reflect.New(v.Type().Elem()).Elem()
			if err := d.decode(val, elem, join(path, k.Value), help); err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(k.Value), elem)
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.Set(reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content)))
		for i, item := range n.Content {
			if err := d.decode(item, v.Index(i), fmt.Sprintf("%s[%d]", path, i), help); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
	}
	return d.decodeScalar(n, v, path, help)
}

// decodeStruct fills a struct's fields from a mapping, each key a field
// (or a form of its own: ownForms).
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if own, ok := v.Addr().Interface().(ownForms); ok {
			p := join(path, k.Value)
			if done, err := own.decodeOwn(d, k.Value, val, p); done || err != nil {
				d.lines[p] = k.Line
				if err != nil {
					return err
				}
				continue
			}
		}
		f, ok := fieldByKey(t, k.Value)
		if !ok {
			return d.errorf(
				k.Line,
				join(path, k.Value),
				"unknown key %q%s; allowed keys here: %s",
				k.Value,
				kinds.DidYouMean(k.Value, keys(t)),
				strings.Join(keys(t), ", "),
			)
		}
		p := join(path, k.Value)
		d.lines[p] = k.Line
		if err := d.decode(val, v.FieldByIndex(f.Index), p, f.Tag.Get("help")); err != nil {
			return err
		}
	}
	return nil
}

// decodeScalar fills an int, float, bool or string from a scalar of its
// YAML type.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path, help string) error {
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.Int:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if tag != "!!int" || err != nil {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if (tag != "!!int" && tag != "!!float") || err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if tag != "!!bool" || err != nil {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.SetBool(b)
	case reflect.String:
		if tag != "!!str" {
			return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
		}
		v.SetString(n.Value)
	default:
		panic("manifests: no decoder for " + v.Kind().String())
	}
	return nil
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "an empty value"
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	}
	return fmt.Sprintf("%q", n.Value)
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func keys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "-" {
			out = append(out, name)
		}
	}
	if t == reflect.TypeOf(Manifest{}) {
		out = append(out, "sweep")
	}
	sort.Strings(out)
	return out
}

// decodeManifest decodes a root mapping (without its sweep block), fills
// defaults and validates.
func decodeManifest(file string, root *yaml.Node) (*Manifest, error) {
	d := &decoder{file: file, lines: map[string]int{}}
	var m Manifest
	if err := d.decode(root, reflect.ValueOf(&m).Elem(), "", "a mapping of manifest fields"); err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range required {
		if !d.given(p) {
			missing = append(missing, fmt.Sprintf("%s: field %q is required: %s", d.at(p), p, helpFor(p)))
		}
	}
	if len(missing) > 0 {
		return nil, &Error{Problems: missing}
	}
	m.fillDefaults(d.given)
	if err := m.validate(d.at); err != nil {
		return nil, err
	}
	return &m, nil
}

// helpFor returns the help text of a dotted path of Manifest ("" for
// none), the parameters of a block included.
func helpFor(path string) string {
	t := reflect.TypeOf(Manifest{})
	help := ""
	keys := strings.Split(path, ".")
	for i, key := range keys {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if isBlock(t) {
			if i != len(keys)-1 {
				return ""
			}
			return blockHelp(reflect.New(t).Interface().(block).family(), key)
		}
		f, ok := fieldByKey(t, key)
		if !ok {
			return ""
		}
		help, t = f.Tag.Get("help"), f.Type
	}
	return help
}
