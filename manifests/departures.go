package manifests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Departures lists how the plan departs from the set-up and protocol of
// the embedded manifest of its name (a paper manifest run with overrides
// or --scale, or a manifest of one's own that took a paper manifest's
// name): every field departureFields compares, each as "what (the
// manifest's what)". Running some of a table's rows or columns (a subset
// of a swept field's values) departs from nothing. A comparison with the
// paper on such a run is provisional. Nothing when the plan is an
// embedded manifest as written, departs from none of those, or is not
// embedded at all.
func (plan *Plan) Departures() []string {
	if plan == nil {
		return nil
	}
	base := embeddedNamed(plan.Manifest.Name)
	if base == nil || base.Hash == plan.Hash {
		return nil
	}
	var out []string
	for _, f := range departureFields {
		if f.compare != nil {
			out = append(out, f.compare(&plan.Manifest, &base.Manifest)...)
		}
	}
	return out
}

// departureFields says, for every field of a manifest (its key), how
// Departures compares it with the embedded manifest's, or why it does
// not; TestDeparturesCoverEveryField holds it to the schema.
var departureFields = []struct {
	field   string
	compare func(m, b *Manifest) []string // nil: not compared
	why     string                        // why not, where compare is nil
}{
	{"version", nil, "the schema's version, not the protocol"},
	{"name", nil, "it names the manifest compared with"},
	{"task", func(m, b *Manifest) []string {
		var out []string
		for _, f := range []struct{ what, got, want string }{{"data set", m.Task.Dataset, b.Task.Dataset}, {"model", m.Task.Model, b.Task.Model}} {
			if f.got != f.want {
				out = append(out, fmt.Sprintf("%s %s (the manifest's %s)", f.what, f.got, f.want))
			}
		}
		if m.Task.Dataset != b.Task.Dataset {
			return out // another data set's parameters depart with it
		}
		return append(out, differs("task parameters", Task{Quadratic: m.Task.Quadratic, Synthetic: m.Task.Synthetic},
			Task{Quadratic: b.Task.Quadratic, Synthetic: b.Task.Synthetic})...)
	}, ""},
	{"topology", func(m, b *Manifest) []string {
		return differs("topology", sweptOr(m, "topology", m.Topology), sweptOr(b, "topology", b.Topology))
	}, ""},
	{"rounds", func(m, b *Manifest) []string {
		if got, want := m.ScaledRounds(), b.ScaledRounds(); got != want {
			return []string{fmt.Sprintf("%d rounds (the manifest's %d)", got, want)}
		}
		return nil
	}, ""},
	{"scale", nil, "compared as the rounds it scales"},
	{"seed", func(m, b *Manifest) []string { return differs("seeds", seeds(m), seeds(b)) }, ""},
	{"lr", func(m, b *Manifest) []string {
		return differs("lr grid", sweptOr(m, "lr", m.LR), sweptOr(b, "lr", b.LR))
	}, ""},
	{"workers", func(m, b *Manifest) []string {
		return differs("workers", sweptOr(m, "workers", m.Workers), sweptOr(b, "workers", b.Workers))
	}, ""},
	{"local_steps", func(m, b *Manifest) []string {
		return differs("local steps", sweptOr(m, "local_steps", m.LocalSteps), sweptOr(b, "local_steps", b.LocalSteps))
	}, ""},
	{"batch_size", func(m, b *Manifest) []string {
		return differs("batch size", sweptOr(m, "batch_size", m.BatchSize), sweptOr(b, "batch_size", b.BatchSize))
	}, ""},
	{"lr_schedule", func(m, b *Manifest) []string { return within(m, b, "lr_schedule") }, ""},
	{"weight_decay", func(m, b *Manifest) []string { return within(m, b, "weight_decay") }, ""},
	{"partition", func(m, b *Manifest) []string { return within(m, b, "partition") }, ""},
	{"algorithm", func(m, b *Manifest) []string { return within(m, b, "algorithm") }, ""},
	{"compression", func(m, b *Manifest) []string { return within(m, b, "compression") }, ""},
	{"validation", func(m, b *Manifest) []string { return within(m, b, "validation") }, ""},
	{"engine", nil, "either engine computes the same protocol (a report names the engine)"},
	{"evaluate", nil, "how often the models are scored, not how they are trained"},
	{"checkpoint", nil, "how often training is saved for resuming"},
	{"table", nil, "how the results are laid out"},
	{"sweep", nil, "compared with the field each of its paths sweeps"},
	{"add", func(m, b *Manifest) []string {
		if got, want := CanonicalJSON(m.Add), CanonicalJSON(b.Add); !bytes.Equal(got, want) {
			return []string{fmt.Sprintf("cells added beyond the sweep %d (the manifest's %d)", len(m.Add), len(b.Add))}
		}
		return nil
	}, ""},
}

// differs is a departure named what where got and want differ (as
// canonical JSON).
func differs(what string, got, want any) []string {
	if g, w := CanonicalJSON(got), CanonicalJSON(want); !bytes.Equal(g, w) {
		return []string{fmt.Sprintf("%s %s (the manifest's %s)", what, orNone(g), orNone(w))}
	}
	return nil
}

// orNone is a value's JSON, or "none" for a field left out.
func orNone(v []byte) string {
	if string(v) == "null" {
		return "none"
	}
	return string(v)
}

// within compares a field whose swept values are a table's rows or
// columns: its value as written, and each value swept at it or under it
// (field.x), which must be among the values the embedded manifest gives
// that path (its sweep's, or its value as written).
func within(m, b *Manifest, field string) []string {
	mt, bt := tree(m), tree(b)
	out := differs(field, mt[field], bt[field])
	for _, path := range slices.Sorted(maps.Keys(m.Sweep)) {
		if path != field && !strings.HasPrefix(path, field+".") {
			continue
		}
		allowed := []any{at(bt, path)}
		if vs, ok := b.Sweep[path]; ok {
			allowed = nil
			for _, v := range vs {
				allowed = append(allowed, v)
			}
		}
		for _, v := range m.Sweep[path] {
			if slices.ContainsFunc(allowed, func(a any) bool { return bytes.Equal(CanonicalJSON(a), CanonicalJSON(v)) }) {
				continue
			}
			if len(allowed) == 1 {
				out = append(out, fmt.Sprintf("%s %s (the manifest's %s)", path, CanonicalJSON(v), orNone(CanonicalJSON(allowed[0]))))
			} else {
				out = append(out, fmt.Sprintf("%s %s (not one of the manifest's %d)", path, CanonicalJSON(v), len(allowed)))
			}
		}
	}
	return out
}

// tree is a manifest as a JSON object.
func tree(m *Manifest) map[string]any {
	var t map[string]any
	if err := json.Unmarshal(CanonicalJSON(m), &t); err != nil {
		panic(err)
	}
	return t
}

// at is the value at a dotted path of a JSON object (nil where absent).
func at(t map[string]any, path string) any {
	var v any = t
	for _, key := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[key]
	}
	return v
}

// embeddedNamed is the embedded manifest called name, as written (nil for
// none); an embedded manifest's file is named after it.
func embeddedNamed(name string) *Plan {
	for _, e := range Embedded() {
		if path.Base(e) != name {
			continue
		}
		if p, err := Open(e); err == nil && p.Manifest.Name == name {
			return p
		}
	}
	return nil
}

// seeds are a manifest's seeds: its sweep's, or its one seed.
func seeds(m *Manifest) any { return sweptOr(m, "seed", m.Seed) }

// sweptOr is a path's swept values, or its one value.
func sweptOr(m *Manifest, path string, one any) any {
	if values, ok := m.Sweep[path]; ok {
		return values
	}
	return []any{one}
}
