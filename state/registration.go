package state

import (
	"encoding/json"
	"fmt"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// Registration is a manifest as a store registered it: the payload of its
// ManifestRegistered event (eventlog.Registration) with the plan decoded.
// Its JSON form is the payload's.
type Registration struct {
	Plan     manifests.Plan `json:"plan"`
	CellKeys []string       `json:"cell_keys"`
	// Overrides are what the run that registered it changed from the
	// manifest file: PATH=VALUE overrides, engine= and scale= for --engine
	// and --scale (already part of Plan and its hash; kept to show).
	Overrides []string `json:"overrides,omitempty"`
}

// RegistrationOf decodes a ManifestRegistered event.
func RegistrationOf(ev *eventlog.Event) (Registration, error) {
	raw, err := eventlog.PayloadOf[eventlog.Registration](ev)
	if err != nil {
		return Registration{}, err
	}
	r := Registration{CellKeys: raw.CellKeys, Overrides: raw.Overrides}
	if err := json.Unmarshal(raw.Plan, &r.Plan); err != nil {
		return Registration{}, fmt.Errorf("event %d (%s): its plan: %w", ev.Seq, ev.Kind, err)
	}
	return r, nil
}

// Event is the registration's ManifestRegistered event, of its plan's
// hash.
func (r *Registration) Event() *eventlog.Event {
	plan, _ := json.Marshal(r.Plan) // a parsed plan holds only finite numbers (manifests.Parse)
	ev := eventlog.New(
		eventlog.ManifestRegistered,
		eventlog.Registration{Plan: plan, CellKeys: r.CellKeys, Overrides: r.Overrides},
	)
	ev.Manifest = r.Plan.Hash
	return ev
}
