package manifests

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ump-lab/ump/kinds"
)

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
