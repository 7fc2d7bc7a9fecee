package state

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// A Change is a field of a manifest's normalised configuration whose
// value differs between two registrations: its dotted path and its JSON
// values ("" where absent).
type Change struct{ Path, Before, After string }

// Diff lists the fields whose values differ between a and b, by path:
// every field of their normalised configurations (sweep values whole,
// under sweep.PATH) and the overrides they were run with.
func Diff(a, b *Registration) ([]Change, error) {
	fa, err := fields(a)
	if err != nil {
		return nil, err
	}
	fb, err := fields(b)
	if err != nil {
		return nil, err
	}
	both := maps.Clone(fa)
	maps.Copy(both, fb)
	var out []Change
	for _, p := range slices.Sorted(maps.Keys(both)) {
		if va, vb := fa[p], fb[p]; va != vb {
			out = append(out, Change{p, va, vb})
		}
	}
	return out, nil
}

// fields is a registration's normalised configuration as dotted paths to
// JSON values (sweep values whole, under sweep.PATH), and the overrides it
// was run with.
func fields(reg *Registration) (map[string]string, error) {
	data, err := json.Marshal(reg.Plan.Manifest)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	out := map[string]string{}
	flatten(out, "", tree)
	if len(reg.Overrides) > 0 {
		out["(run with overrides)"] = strings.Join(reg.Overrides, " ")
	}
	return out, nil
}

// flatten writes a JSON tree as dotted paths to scalar or list values;
// the sweep's paths are kept whole (sweep.partition.alpha).
func flatten(out map[string]string, prefix string, v any) {
	m, isMap := v.(map[string]any)
	switch {
	case isMap && prefix == "sweep": // path -> values
		for k, vals := range m {
			data, _ := json.Marshal(vals)
			out["sweep."+k] = string(data)
		}
	case isMap:
		for k, child := range m {
			flatten(out, strings.TrimPrefix(prefix+"."+k, "."), child)
		}
	default:
		data, _ := json.Marshal(v)
		out[prefix] = string(data)
	}
}
