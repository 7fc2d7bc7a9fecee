package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/record"
)

// Event kinds, each with one payload type (payloadTypes).
const (
	ManifestRegistered = "ManifestRegistered" // Registration
	CellStarted        = "CellStarted"        // Fingerprint: map[string]string
	StageStarted       = "StageStarted"       // none
	RoundCompleted     = "RoundCompleted"     // record.RoundReport
	StageCompleted     = "StageCompleted"     // StageOutcome
	StageFailed        = "StageFailed"        // string: the error
	CellCompleted      = "CellCompleted"      // CellOutcome
	CellImported       = "CellImported"       // Provenance
	ManifestNoted      = "ManifestNoted"      // string: the user's note (ump note)
	ManifestForgotten  = "ManifestForgotten"  // none: hidden from listings until registered again (ump forget)
)

// ownKinds are the store's own records, which never travel with a push,
// a commit or an upload, and are refused from elsewhere.
var ownKinds = []string{CellImported, ManifestNoted, ManifestForgotten}

// Own reports whether events of a kind are the store's own records (ownKinds).
func Own(kind string) bool { return slices.Contains(ownKinds, kind) }

// payloadTypes is the payload type of every event kind that has one.
var payloadTypes = map[string]reflect.Type{
	ManifestRegistered: reflect.TypeFor[Registration](),
	CellStarted:        reflect.TypeFor[map[string]string](),
	RoundCompleted:     reflect.TypeFor[record.RoundReport](),
	StageCompleted:     reflect.TypeFor[StageOutcome](),
	StageFailed:        reflect.TypeFor[string](),
	CellCompleted:      reflect.TypeFor[CellOutcome](),
	CellImported:       reflect.TypeFor[Provenance](),
	ManifestNoted:      reflect.TypeFor[string](),
}

// maxEventBytes bounds one event, below Badger's value limit (its value
// log file size); a registration of the most cells a manifest may have
// (manifests.MaxCells) fits.
const maxEventBytes = 24 << 20

// RoundCheckpoint names the checkpoint a RoundCompleted event records
// among its outputs.
const RoundCheckpoint = "checkpoint"

// StageOutcome is the payload of StageCompleted.
type StageOutcome struct {
	Summary  json.RawMessage `json:"summary,omitempty"`
	Diverged bool            `json:"diverged,omitempty"`
	Cached   bool            `json:"cached,omitempty"` // reused an identical stage of another cell
}

// CellOutcome is the payload of CellCompleted.
type CellOutcome struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Provenance is the payload of CellImported: where a store got a cell's
// events from (pull, a run resuming from S3, or ump import of a results
// directory) and who vouched for them. It is the store's own record and
// never travels (Own).
type Provenance struct {
	From    string `json:"from"`    // the S3 store, or the results directory
	Attempt string `json:"attempt"` // the attempt that committed the cell (S3)
	// Signer is the public key that signed the commit or cell; "" for
	// unsigned events taken with --trust-unsigned.
	Signer string `json:"signer,omitempty"`
	// Signature is the cell's signature as its results directory carried
	// it, which a report of the cell writes again (ump import).
	Signature string `json:"signature,omitempty"`
	// TablesOnly says that the cell came with its tables (its rounds and
	// final figures) and not its other outputs (checkpoints, partition):
	// finished, it is not computed again, and what is absent is not damage.
	TablesOnly bool `json:"tables_only,omitempty"`
}

// New returns an event of a kind with its payload, which must be of
// the kind's payload type (nil for StageStarted).
func New[T any](kind string, payload T) *Event {
	ev := &Event{Kind: kind}
	if want, ok := payloadTypes[kind]; ok {
		if got := reflect.TypeFor[T](); got != want {
			panic(fmt.Sprintf("eventlog: a %s event carries %s, not %s", kind, want, got))
		}
		ev.Payload, _ = json.Marshal(payload)
	}
	return ev
}

// PayloadOf decodes an event's payload, which must be of type T; an event
// whose payload does not decode is an error naming it.
func PayloadOf[T any](ev *Event) (T, error) {
	var p T
	if want := payloadTypes[ev.Kind]; want != reflect.TypeFor[T]() {
		return p, fmt.Errorf("event %d (%s) carries %v, not %T", ev.Seq, ev.Kind, want, p)
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return p, fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Kind, err)
	}
	return p, nil
}

// Event is one immutable record of the log.
type Event struct {
	Seq      uint64                   `json:"seq"`
	Time     time.Time                `json:"time"`
	Kind     string                   `json:"kind"`
	Manifest string                   `json:"manifest,omitempty"`
	Cell     string                   `json:"cell,omitempty"`
	Stage    string                   `json:"stage,omitempty"`
	StageKey string                   `json:"stage_key,omitempty"`
	Round    int                      `json:"round,omitempty"`
	Inputs   []string                 `json:"inputs,omitempty"`
	Outputs  map[string]artifacts.Ref `json:"outputs,omitempty"`
	Payload  json.RawMessage          `json:"payload,omitempty"`
}

// A cell's status: CellOutcome.Status, or what a fold of its events
// finds without one (Pending, Incomplete).
const (
	Pending    = "pending"    // no event yet
	Incomplete = "incomplete" // started, not finished (running or interrupted)
	Completed  = "completed"
	Diverged   = "diverged"
	Failed     = "failed"
)

// Registration is a manifest as registered: its plan, as JSON (a
// manifests.Plan, which state.RegistrationOf decodes), and its cell keys.
// The event's Manifest field holds the plan's hash.
type Registration struct {
	Plan     json.RawMessage `json:"plan"`
	CellKeys []string        `json:"cell_keys"`
	// Overrides are what the run that registered it changed from the
	// manifest file: PATH=VALUE overrides, engine= and scale= for --engine
	// and --scale (already part of Plan and its hash; kept to show).
	Overrides []string `json:"overrides,omitempty"`
}

// CheckForeign checks what an event from elsewhere (a pull, a commit, an
// upload) must be on its own: not a store's own record, of a known kind,
// its payload decoding to the kind's type (payloadTypes), every output a
// well-formed ref.
func (ev *Event) CheckForeign() error {
	if Own(ev.Kind) {
		return errors.New("a store's own record, which no machine sends")
	}
	t, ok := payloadTypes[ev.Kind]
	if !ok && ev.Kind != StageStarted {
		return errors.New("unknown event kind")
	}
	if ok {
		if err := json.Unmarshal(ev.Payload, reflect.New(t).Interface()); err != nil {
			return fmt.Errorf("its payload is not a %v: %v", t, err)
		}
	}
	for name, ref := range ev.Outputs {
		if err := ref.Check(); err != nil {
			return fmt.Errorf("output %s: %v", name, err)
		}
	}
	return nil
}
