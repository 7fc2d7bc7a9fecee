package manifests

import (
	"bytes"
	"fmt"
	"path"
)

// Departures lists how the plan departs from the set-up and protocol of
// the embedded manifest of its name (a paper manifest run with overrides,
// --scale or another engine, or a manifest of one's own that took a paper
// manifest's name): its data set, model, topology, rounds (and scale),
// seeds, learning rate and its grid, workers, local steps and batch size,
// and cells added beyond the sweep, each as "what (the manifest's what)".
// A comparison with the paper on such a run is provisional. Nothing when
// the plan is an embedded manifest as written, departs from none of
// those, or is not embedded at all.
func (plan *Plan) Departures() []string {
	if plan == nil {
		return nil
	}
	base := embeddedNamed(plan.Manifest.Name)
	if base == nil || base.Hash == plan.Hash {
		return nil
	}
	m, b := &plan.Manifest, &base.Manifest
	var out []string
	for _, f := range []struct{ name, got, want string }{{"data set", m.Task.Dataset, b.Task.Dataset}, {"model", m.Task.Model, b.Task.Model}} {
		if f.got != f.want {
			out = append(out, fmt.Sprintf("%s %s (the manifest's %s)", f.name, f.got, f.want))
		}
	}
	if got, want := CanonicalJSON(sweptOr(m, "topology", m.Topology)), CanonicalJSON(sweptOr(b, "topology", b.Topology)); !bytes.Equal(got, want) {
		out = append(out, fmt.Sprintf("topology %s (the manifest's %s)", got, want))
	}
	if got, want := m.ScaledRounds(), b.ScaledRounds(); got != want {
		out = append(out, fmt.Sprintf("%d rounds (the manifest's %d)", got, want))
	}
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"seeds", seeds(m), seeds(b)},
		{"lr grid", sweptOr(m, "lr", m.LR), sweptOr(b, "lr", b.LR)},
		{"workers", sweptOr(m, "workers", m.Workers), sweptOr(b, "workers", b.Workers)},
		{"local steps", sweptOr(m, "local_steps", m.LocalSteps), sweptOr(b, "local_steps", b.LocalSteps)},
		{"batch size", sweptOr(m, "batch_size", m.BatchSize), sweptOr(b, "batch_size", b.BatchSize)},
	} {
		if got, want := CanonicalJSON(f.got), CanonicalJSON(f.want); !bytes.Equal(got, want) {
			out = append(out, fmt.Sprintf("%s %s (the manifest's %s)", f.name, got, want))
		}
	}
	if got, want := CanonicalJSON(m.Add), CanonicalJSON(b.Add); !bytes.Equal(got, want) {
		out = append(out, fmt.Sprintf("cells added beyond the sweep %d (the manifest's %d)", len(m.Add), len(b.Add)))
	}
	return out
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
