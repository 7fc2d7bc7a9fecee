package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ump-lab/ump/codecs"
	"github.com/ump-lab/ump/graphs"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/optimizers"
	"github.com/ump-lab/ump/split"
)

var (
	blockType    = reflect.TypeFor[block]()
	errBadScalar = errors.New("not a value of the parameter's type")
)

// block is a manifest block that names a kind of a family and holds the
// kind's parameters: in YAML and JSON one mapping, {KEY: kind, param:
// value, ...}.
//
// family is the block's family as its package declares it, read at each
// use (so a test may declare a parameter).
type block interface {
	family() *kinds.Schema
	fields() (kind *string, params *kinds.Values)
}

// blocks returns the manifest's blocks by field name (those it has).
func (m *Manifest) blocks() map[string]block {
	out := map[string]block{"topology": &m.Topology, "algorithm": &m.Algorithm}
	if m.Partition != nil {
		out["partition"] = m.Partition
	}
	if m.Compression != nil {
		out["compression"] = m.Compression
	}
	return out
}

func (a *Algorithm) family() *kinds.Schema              { return &optimizers.Family }
func (a *Algorithm) fields() (*string, *kinds.Values)   { return &a.Name, &a.Params }
func (c *Compression) family() *kinds.Schema            { return &codecs.Family }
func (c *Compression) fields() (*string, *kinds.Values) { return &c.Codec, &c.Params }
func (t *Topology) family() *kinds.Schema               { return graphs.Topologies.Schema() }
func (t *Topology) fields() (*string, *kinds.Values)    { return &t.Kind, &t.Params }
func (p *Partition) family() *kinds.Schema              { return split.Partitions.Schema() }
func (p *Partition) fields() (*string, *kinds.Values)   { return &p.Kind, &p.Params }
func (a Algorithm) MarshalJSON() ([]byte, error)        { return marshalBlock(&a) }
func (c Compression) MarshalJSON() ([]byte, error)      { return marshalBlock(&c) }
func (t Topology) MarshalJSON() ([]byte, error)         { return marshalBlock(&t) }
func (p Partition) MarshalJSON() ([]byte, error)        { return marshalBlock(&p) }
func (a *Algorithm) UnmarshalJSON(data []byte) error    { return unmarshalBlock(a, data) }
func (c *Compression) UnmarshalJSON(data []byte) error  { return unmarshalBlock(c, data) }
func (t *Topology) UnmarshalJSON(data []byte) error     { return unmarshalBlock(t, data) }
func (p *Partition) UnmarshalJSON(data []byte) error    { return unmarshalBlock(p, data) }
func isBlock(t reflect.Type) bool                       { return reflect.PointerTo(t).Implements(blockType) }

// marshalBlock writes the key, then the parameters in the order the kind
// declares them (any others after, sorted), leaving out a quiet parameter
// at its default.
func marshalBlock(b block) ([]byte, error) {
	kind, params := b.fields()
	var order, quiet []string
	if k, ok := b.family().Lookup(*kind); ok {
		for _, p := range k.Params {
			v, given := (*params)[p.Name]
			switch {
			case given && p.Quiet && v == p.Default:
				quiet = append(quiet, p.Name)
			case given:
				order = append(order, p.Name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(*params)) {
		if !slices.Contains(order, name) && !slices.Contains(quiet, name) {
			order = append(order, name)
		}
	}
	var buf bytes.Buffer
	write := func(key string, v any) error {
		k, _ := json.Marshal(key)
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if buf.Len() > 0 {
			buf.WriteByte(',')
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(val)
		return nil
	}
	if err := write(b.family().Key, *kind); err != nil {
		return nil, err
	}
	for _, name := range order {
		if err := write(name, (*params)[name]); err != nil {
			return nil, err
		}
	}
	return append(append([]byte{'{'}, buf.Bytes()...), '}'), nil
}

// unmarshalBlock reads a block written by marshalBlock (a plan in the
// event log), giving each declared parameter its declared type and each
// quiet one left out its default.
func unmarshalBlock(b block, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	fam := b.family()
	kind, params := b.fields()
	*kind, _ = raw[fam.Key].(string)
	delete(raw, fam.Key)
	*params = kinds.Values{}
	for name, x := range raw {
		if p, ok := familyParam(fam, name); ok {
			v, err := p.Coerce(x)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", fam.Field, name, err)
			}
			(*params)[name] = v
		} else if n, ok := x.(json.Number); ok {
			(*params)[name], _ = n.Float64()
		} else {
			(*params)[name] = x
		}
	}
	if k, ok := fam.Lookup(*kind); ok {
		for _, p := range k.Params {
			if _, given := (*params)[p.Name]; !given && p.Quiet {
				(*params)[p.Name] = p.Default
			}
		}
	}
	return nil
}

// familyParam is the declaration of a parameter some kind of the family
// takes.
func familyParam(fam *kinds.Schema, name string) (kinds.Param, bool) {
	params := fam.Params()
	i := slices.IndexFunc(params, func(p kinds.Param) bool { return p.Name == name })
	if i < 0 {
		return kinds.Param{}, false
	}
	return params[i], true
}

// blockKeys are the keys a block allows: its key and every parameter of
// the family.
func blockKeys(fam *kinds.Schema) []string { return paramKeys(fam, fam.Params()) }

// paramKeys are a block's key and the names of params, sorted.
func paramKeys(fam *kinds.Schema, params []kinds.Param) []string {
	keys := []string{fam.Key}
	for _, p := range params {
		keys = append(keys, p.Name)
	}
	slices.Sort(keys)
	return keys
}

// kindKeys are the keys the block n allows: its key and the parameters of
// the kind it names, or with no known kind every parameter of the family
// (blockKeys).
func kindKeys(fam *kinds.Schema, n *yaml.Node) []string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != fam.Key {
			continue
		}
		if k, ok := fam.Lookup(n.Content[i+1].Value); ok {
			return paramKeys(fam, k.Params)
		}
	}
	return blockKeys(fam)
}

// blockHelp is the help of a key of a block.
func blockHelp(fam *kinds.Schema, key string) string {
	if key == fam.Key {
		return "one of: " + strings.Join(fam.Names(), ", ")
	}
	if p, ok := familyParam(fam, key); ok {
		return p.Describe()
	}
	return ""
}

// decodeBlock fills a block from a YAML mapping: the kind, then each
// parameter as its declaration types it (a parameter of another kind of
// the family decodes, for validate to say the kind does not take it).
func (d *decoder) decodeBlock(n *yaml.Node, b block, path, help string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n.Line, path, "expected %s, got %s", help, describe(n))
	}
	fam := b.family()
	kind, params := b.fields()
	*params = kinds.Values{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		for val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		p := join(path, k.Value)
		if k.Value == fam.Key {
			d.lines[p] = k.Line
			if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!str" {
				return d.errorf(val.Line, p, "expected %s, got %s", blockHelp(fam, fam.Key), describe(val))
			}
			*kind = val.Value
			continue
		}
		decl, ok := familyParam(fam, k.Value)
		if !ok {
			keys := kindKeys(fam, n)
			return d.errorf(
				k.Line,
				p,
				"unknown key %q%s; allowed keys here: %s",
				k.Value,
				kinds.DidYouMean(k.Value, keys),
				strings.Join(keys, ", "),
			)
		}
		d.lines[p] = k.Line
		v, err := scalar(val, decl)
		if err != nil {
			return d.errorf(val.Line, p, "expected %s, got %s", decl.Describe(), describe(val))
		}
		(*params)[k.Value] = v
	}
	return nil
}

// scalar decodes a YAML scalar as the parameter's type.
func scalar(n *yaml.Node, p kinds.Param) (any, error) {
	if n.Kind != yaml.ScalarNode {
		return nil, errBadScalar
	}
	tag := n.ShortTag()
	switch p.Type {
	case kinds.Float:
		f, err := strconv.ParseFloat(n.Value, 64)
		if (tag == "!!int" || tag == "!!float") && err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
	case kinds.Int:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if tag == "!!int" && err == nil {
			return int(i), nil
		}
	case kinds.Bool:
		b, err := strconv.ParseBool(n.Value)
		if tag == "!!bool" && err == nil {
			return b, nil
		}
	case kinds.String:
		if tag == "!!str" {
			return n.Value, nil
		}
	}
	return nil, errBadScalar
}

// fillBlock sets the parameters the block's kind takes and the source did
// not give to their defaults (nothing for an unknown kind).
func fillBlock(b block, c kinds.Cell) {
	kind, params := b.fields()
	if *params == nil {
		*params = kinds.Values{}
	}
	if k, ok := b.family().Lookup(*kind); ok {
		k.Fill(*params, c)
	}
}

// validateBlock reports an unknown kind, or what the kind's declaration
// finds wrong with the parameters.
func validateBlock(b block, c kinds.Cell, bad complaint, oneOf func(path, v string, allowed ...string)) {
	fam := b.family()
	kind, params := b.fields()
	k, ok := fam.Lookup(*kind)
	if !ok {
		oneOf(fam.Field+"."+fam.Key, *kind, slices.Sorted(slices.Values(fam.Names()))...)
		return
	}
	for _, p := range k.Validate(*params, c) {
		switch {
		case p.Cell != "":
			bad(p.Cell, "%s", p.Msg)
		case p.Param == "":
			bad(fam.Field+"."+fam.Key, "%s", p.Msg)
		default:
			bad(fam.Field+"."+p.Param, "%s", p.Msg)
		}
	}
}
