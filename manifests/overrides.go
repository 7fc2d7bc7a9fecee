package manifests

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
