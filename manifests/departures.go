package manifests

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// ChangesFromEmbedded lists how the plan departs from the set-up and protocol of
// the embedded manifest of its name (a paper manifest run with overrides
// or --scale, or a manifest of one's own that took a paper manifest's
// name): every field departureFields compares, each as "what (the
// manifest's what)". Running some of a table's rows or columns (a subset
// of a swept field's values) departs from nothing. A comparison with the
// paper on such a run is provisional. Nothing when the plan is an
// embedded manifest as written, departs from none of those, or is not
// embedded at all.
func (plan *Plan) ChangesFromEmbedded() []string {
	if plan == nil {
		return nil
	}
	base := embeddedNamed(plan.Manifest.Name)
	if base == nil || base.Hash == plan.Hash {
		return nil
	}
	s := sides{m: &plan.Manifest, b: &base.Manifest, mt: tree(&plan.Manifest), bt: tree(&base.Manifest)}
	var out []string
	for _, f := range departureFields {
		if f.compare != nil {
			out = append(out, f.compare(s)...)
		}
	}
	return out
}

// sides are the plan's manifest (m) and the embedded one (b), each also as
// a JSON object.
type sides struct {
	m, b   *Manifest
	mt, bt map[string]any
}

// departureFields says, for every field of a manifest (its key), how
// ChangesFromEmbedded compares it with the embedded manifest's, or why it does
// not; TestDeparturesCoverEveryField holds it to the schema.
var departureFields = []struct {
	field   string
	compare func(s sides) []string // nil: not compared
	why     string                 // why not, where compare is nil
}{
	{"version", nil, "the schema's version, not the protocol"},
	{"name", nil, "it names the manifest compared with"},
	{"task", func(s sides) []string {
		m, b := s.m.Task, s.b.Task
		var out []string
		for _, f := range []struct{ what, got, want string }{{"data set", m.Dataset, b.Dataset}, {"model", m.Model,
			b.Model}} {
			if f.got != f.want {
				out = append(out, fmt.Sprintf("%s %s (the manifest's %s)", f.what, f.got, f.want))
			}
		}
		if m.Dataset != b.Dataset {
			return out // another data set's parameters depart with it
		}
		return append(out, differs("task parameters", Task{Quadratic: m.Quadratic, Synthetic: m.Synthetic},
			Task{Quadratic: b.Quadratic, Synthetic: b.Synthetic})...)
	}, ""},
	{"topology", grid("topology", "topology"), ""},
	{"rounds", func(s sides) []string {
		if got, want := s.m.ScaledRounds(), s.b.ScaledRounds(); got != want {
			return []string{fmt.Sprintf("%d rounds (the manifest's %d)", got, want)}
		}
		return nil
	}, ""},
	{"scale", nil, "compared as the rounds it scales"},
	{"seed", grid("seeds", "seed"), ""},
	{"lr", grid("lr grid", "lr"), ""},
	{"workers", grid("workers", "workers"), ""},
	{"local_steps", grid("local steps", "local_steps"), ""},
	{"batch_size", grid("batch size", "batch_size"), ""},
	{"lr_schedule", within("lr_schedule"), ""},
	{"weight_decay", within("weight_decay"), ""},
	{"partition", within("partition"), ""},
	{"algorithm", within("algorithm"), ""},
	{"compression", within("compression"), ""},
	{"validation", within("validation"), ""},
	{"engine", nil, "either engine computes the same protocol (a report names the engine)"},
	{"evaluate", nil, "how often the models are scored, not how they are trained"},
	{"checkpoint", nil, "how often training is saved for resuming"},
	{"table", nil, "how the results are laid out"},
	{"sweep", nil, "compared with the field each of its paths sweeps"},
	{"add", func(s sides) []string {
		if got, want := CanonicalJSON(s.m.Add), CanonicalJSON(s.b.Add); !bytes.Equal(got, want) {
			return []string{
				fmt.Sprintf("cells added beyond the sweep %d (the manifest's %d)", len(s.m.Add), len(s.b.Add)),
			}
		}
		return nil
	}, ""},
}

// grid compares a field's values, named what: its sweep's, or its one
// value; running fewer of them departs too (fewer seeds, one lr).
func grid(what, field string) func(s sides) []string {
	return func(s sides) []string {
		return differs(what, values(s.m, s.mt, field), values(s.b, s.bt, field))
	}
}

// values are a field's values in a manifest: its sweep's, or its one
// value (from t, the manifest as a JSON object).
func values(m *Manifest, t map[string]any, field string) any {
	if vs, ok := m.Sweep[field]; ok {
		return vs
	}
	return []any{at(t, field)}
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
func within(field string) func(s sides) []string {
	return func(s sides) []string {
		out := differs(field, s.mt[field], s.bt[field])
		for _, path := range slices.Sorted(maps.Keys(s.m.Sweep)) {
			if path != field && !strings.HasPrefix(path, field+".") {
				continue
			}
			allowed := []any{at(s.bt, path)}
			if vs, ok := s.b.Sweep[path]; ok {
				allowed = nil
				for _, v := range vs {
					allowed = append(allowed, v)
				}
			}
			for _, v := range s.m.Sweep[path] {
				if slices.ContainsFunc(
					allowed,
					func(a any) bool { return bytes.Equal(CanonicalJSON(a), CanonicalJSON(v)) },
				) {
					continue
				}
				if len(allowed) == 1 {
					out = append(
						out,
						fmt.Sprintf(
							"%s %s (the manifest's %s)",
							path,
							CanonicalJSON(v),
							orNone(CanonicalJSON(allowed[0])),
						),
					)
				} else {
					out = append(out, fmt.Sprintf("%s %s (not one of the manifest's %d)", path, CanonicalJSON(v), len(
						allowed)))
				}
			}
		}
		return out
	}
}

// tree is a manifest as a JSON object.
func tree(m *Manifest) map[string]any {
	t, err := decodeNumbers(CanonicalJSON(m))
	if err != nil {
		panic(err)
	}
	return t.(map[string]any)
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
