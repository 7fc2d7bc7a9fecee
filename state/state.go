package state

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
)

// Source is what reports read: a store's events and the blobs they name.
type Source struct {
	Dir    string // the store's directory, for messages
	Events eventlog.Reader
	Blobs  artifacts.Store
}

// ErrBadArgument is returned (wrapped) when the caller asks for what the
// store does not hold: an unknown or ambiguous manifest hash, a table, a
// column or a figure no table has, a table layout that does not fit.
var ErrBadArgument = errors.New("bad argument")

// Manifests returns the latest registration of every manifest the store
// lists, oldest first: all but those forgotten (ump forget) since they
// were last registered.
func (s Source) Manifests() ([]Registration, error) {
	regs, forgotten, err := s.registrations()
	return slices.DeleteFunc(regs, func(r Registration) bool { return forgotten[r.Plan.Hash] }), err
}

// registrations returns the latest registration of every manifest, oldest
// first, and those forgotten since.
func (s Source) registrations() ([]Registration, map[string]bool, error) {
	evs, forgotten, err := s.RegistrationEvents()
	if err != nil {
		return nil, nil, err
	}
	latest := map[string]int{}
	var out []Registration
	for _, ev := range evs {
		r, err := RegistrationOf(&ev)
		if err != nil {
			return nil, nil, err
		}
		if i, ok := latest[ev.Manifest]; ok {
			out[i] = r
			continue
		}
		latest[ev.Manifest] = len(out)
		out = append(out, r)
	}
	return out, forgotten, nil
}

// RegistrationEvents returns every registration event, oldest first, and
// the manifests forgotten since their latest one.
func (s Source) RegistrationEvents() ([]eventlog.Event, map[string]bool, error) {
	evs, err := s.Events.ByKind(eventlog.ManifestRegistered)
	if err != nil {
		return nil, nil, err
	}
	forgets, err := s.Events.ByKind(eventlog.ManifestForgotten)
	if err != nil {
		return nil, nil, err
	}
	registered := map[string]uint64{} // the sequence number of its latest registration
	for _, ev := range evs {
		registered[ev.Manifest] = ev.Seq
	}
	forgotten := map[string]bool{}
	for _, ev := range forgets {
		if ev.Seq > registered[ev.Manifest] {
			forgotten[ev.Manifest] = true
		}
	}
	return evs, forgotten, nil
}

// FindManifest returns the registration whose hash is or starts with
// prefix; the prefix must be unique. Forgotten manifests are found too.
func (s Source) FindManifest(prefix string) (*Registration, error) {
	all, _, err := s.registrations()
	if err != nil {
		return nil, err
	}
	return FindIn(all, prefix, s.Dir)
}

// FindReport folds every cell of the manifest whose hash is or starts
// with prefix (FindManifest, Report).
func (s Source) FindReport(prefix string) (*Report, error) {
	reg, err := s.FindManifest(prefix)
	if err != nil {
		return nil, err
	}
	return s.Report(reg)
}

// Note is a user's note on a manifest (ump note).
type Note struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// Notes returns a manifest's notes, oldest first.
func (s Source) Notes(hash string) ([]Note, error) {
	evs, err := s.Events.ByManifest(hash)
	if err != nil {
		return nil, err
	}
	var notes []Note
	for i := range evs {
		if evs[i].Kind == eventlog.ManifestNoted {
			text, err := eventlog.PayloadOf[string](&evs[i])
			if err != nil {
				return nil, err
			}
			notes = append(notes, Note{Time: evs[i].Time, Text: text})
		}
	}
	return notes, nil
}

// MinPrefix is the fewest digits a manifest prefix may have: one digit
// would match by chance.
const MinPrefix = 4

// FindIn returns the registration among regs (the store in dir's) whose
// hash is or starts with prefix; the prefix must be unique and at least
// MinPrefix digits long.
func FindIn(regs []Registration, prefix, dir string) (*Registration, error) {
	var found []Registration
	for _, r := range regs {
		if strings.HasPrefix(r.Plan.Hash, prefix) {
			found = append(found, r)
		}
	}
	switch {
	case len(prefix) < MinPrefix && len(found) > 0:
		return nil, fmt.Errorf(
			"%w: manifest prefix %q is too short; give at least %d of its hash's digits (e.g. %.12s)",
			ErrBadArgument,
			prefix,
			MinPrefix,
			found[0].Plan.Hash,
		)
	case prefix == "" || len(found) == 0:
		return nil, fmt.Errorf(
			"%w: no manifest %q in store %s; `ump status` lists the manifests it holds",
			ErrBadArgument,
			prefix,
			dir,
		)
	case len(found) > 1:
		return nil, fmt.Errorf(
			"%w: manifest prefix %q is ambiguous (%d matches); give more digits",
			ErrBadArgument,
			prefix,
			len(found),
		)
	}
	return &found[0], nil
}

// StageView is the fold of one stage's events within a cell.
type StageView struct {
	Name     string
	Key      string
	Status   string // running (started, not finished), completed, failed
	Cached   bool   // completed by reusing another cell's result
	Inputs   []string
	Result   *stages.Result
	Error    string
	Round    int // last reported round
	Rounds   int
	Restarts int // StageStarted events beyond the first
	// Seconds is the compute time reported per round under Key (the
	// latest report of a round, which a resumed run may repeat).
	Seconds map[int]float64
}

// CellView is the fold of one cell's events.
type CellView struct {
	Key    string
	Status string
	Stages []*StageView // in the order they first appear
	Events []eventlog.Event
	// Imported says where the cell's events came from when they were
	// imported (pull, or resuming from S3), once an import.
	Imported []eventlog.Provenance
}

// Cell folds the events of a cell key as manifest hash sees them
// (countFor).
func (s Source) Cell(hash, key string) (*CellView, error) {
	unsigned, err := s.unsignedImports()
	if err != nil {
		return nil, err
	}
	return s.cell(hash, key, unsigned)
}

func (s Source) cell(hash, key string, unsigned map[[2]string]bool) (*CellView, error) {
	evs, err := s.Events.ByCell(key)
	if err != nil {
		return nil, err
	}
	return FoldCell(key, countFor(hash, evs, unsigned))
}

// unsignedImports lists the (manifest, cell key) pairs whose events were
// imported without a signature (--trust-unsigned).
func (s Source) unsignedImports() (map[[2]string]bool, error) {
	imports, err := s.Events.ByKind(eventlog.CellImported)
	if err != nil {
		return nil, err
	}
	unsigned := map[[2]string]bool{}
	for i := range imports {
		if p, err := eventlog.PayloadOf[eventlog.Provenance](&imports[i]); err != nil || p.Signer == "" {
			unsigned[[2]string{imports[i].Manifest, imports[i].Cell}] = true
		}
	}
	return unsigned, nil
}

// countFor keeps the events that count for manifest hash: all but those
// of other manifests' cells imported unsigned (unsignedImports), whose
// results count for the manifest they were taken for alone.
func countFor(hash string, evs []eventlog.Event, unsigned map[[2]string]bool) []eventlog.Event {
	return slices.DeleteFunc(
		evs,
		func(ev eventlog.Event) bool { return ev.Manifest != hash && unsigned[[2]string{ev.Manifest, ev.Cell}] },
	)
}

// FoldCell folds a cell's events; a payload that does not decode is an
// error.
func FoldCell(key string, evs []eventlog.Event) (*CellView, error) {
	v := &CellView{Key: key, Status: eventlog.Pending, Events: evs}
	byName := map[string]*StageView{}
	stage := func(name string) *StageView {
		if st, ok := byName[name]; ok {
			return st
		}
		st := &StageView{Name: name}
		byName[name] = st
		v.Stages = append(v.Stages, st)
		return st
	}
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case eventlog.CellStarted:
			v.Status = eventlog.Incomplete
		case eventlog.CellImported:
			p, err := eventlog.PayloadOf[eventlog.Provenance](ev)
			if err != nil {
				return nil, err
			}
			v.Imported = append(v.Imported, p)
		case eventlog.CellCompleted:
			p, err := eventlog.PayloadOf[eventlog.CellOutcome](ev)
			if err != nil {
				return nil, err
			}
			v.Status = p.Status
		case eventlog.StageStarted:
			st := stage(ev.Stage)
			if st.Key != "" {
				st.Restarts++
			}
			if st.Key != ev.StageKey { // another computation: its rounds' seconds are its own
				st.Seconds = nil
			}
			st.Key, st.Status, st.Inputs, st.Error, st.Cached = ev.StageKey, "running", ev.Inputs, "", false
		case eventlog.RoundCompleted:
			r, err := eventlog.PayloadOf[record.RoundReport](ev)
			if err != nil {
				return nil, err
			}
			st := stage(ev.Stage)
			st.Round, st.Rounds = r.Round, r.Rounds
			if st.Seconds == nil {
				st.Seconds = map[int]float64{}
			}
			if ev.StageKey == st.Key {
				st.Seconds[r.Round] = r.Seconds
			}
		case eventlog.StageCompleted:
			p, err := eventlog.PayloadOf[eventlog.StageOutcome](ev)
			if err != nil {
				return nil, err
			}
			st := stage(ev.Stage)
			st.Key, st.Status, st.Cached = ev.StageKey, eventlog.Completed, p.Cached
			st.Result = &stages.Result{Outputs: ev.Outputs, Summary: p.Summary, Diverged: p.Diverged}
		case eventlog.StageFailed:
			msg, err := eventlog.PayloadOf[string](ev)
			if err != nil {
				return nil, err
			}
			st := stage(ev.Stage)
			st.Status, st.Error = eventlog.Failed, msg
		}
	}
	return v, nil
}

// DirImport is the provenance of the cell's import from a results
// directory (ump import: its tables only), the latest one, or nil.
func (v *CellView) DirImport() *eventlog.Provenance {
	for i := len(v.Imported) - 1; i >= 0; i-- {
		if v.Imported[i].TablesOnly {
			return &v.Imported[i]
		}
	}
	return nil
}

// Stage returns the view of a named stage, or nil.
func (v *CellView) Stage(name string) *StageView {
	for _, st := range v.Stages {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// Output returns the ref of a completed stage's output, if the cell has
// it.
func (v *CellView) Output(out stages.Output) (artifacts.Ref, bool) {
	st := v.Stage(out.Stage)
	if st == nil || st.Status != eventlog.Completed || st.Result == nil {
		return artifacts.Ref{}, false
	}
	ref, ok := st.Result.Outputs[out.Name]
	return ref, ok
}

// Report is a manifest with the fold of each of its cells.
type Report struct {
	Registration
	Cells []*CellView
	// ImportedUnsigned counts the cells whose results were pulled without
	// a signature (pull --trust-unsigned): no key vouches for them.
	ImportedUnsigned int
}

// Report folds every cell of a registered manifest.
func (s Source) Report(r *Registration) (*Report, error) {
	rep := &Report{Registration: *r}
	unsigned, err := s.unsignedImports()
	if err != nil {
		return nil, err
	}
	for _, key := range r.CellKeys {
		v, err := s.cell(r.Plan.Hash, key, unsigned)
		if err != nil {
			return nil, err
		}
		rep.Cells = append(rep.Cells, v)
		if unsigned[[2]string{r.Plan.Hash, key}] {
			rep.ImportedUnsigned++
		}
	}
	return rep, nil
}

// Counts returns how many cells have each status.
func (r *Report) Counts() map[string]int {
	c := map[string]int{}
	for _, v := range r.Cells {
		c[v.Status]++
	}
	return c
}

// Span returns the times of the first and the last event the manifest's
// own runs recorded (zero when none has): when it ran, not when another
// manifest computed a cell it shares (Reused), nor when the store
// imported a cell (a pull) or noted something (the store's own records).
func (r *Report) Span() (first, last time.Time) {
	for _, v := range r.Cells {
		for _, ev := range v.Events {
			if ev.Manifest != r.Plan.Hash || eventlog.Own(ev.Kind) {
				continue
			}
			if first.IsZero() || ev.Time.Before(first) {
				first = ev.Time
			}
			if ev.Time.After(last) {
				last = ev.Time
			}
		}
	}
	return first, last
}

// Reused counts the manifest's cells whose events are all another
// manifest's: results it shares without having run them.
func (r *Report) Reused() int {
	n := 0
	for _, v := range r.Cells {
		if len(v.Events) > 0 &&
			!slices.ContainsFunc(v.Events, func(ev eventlog.Event) bool { return ev.Manifest == r.Plan.Hash }) {
			n++
		}
	}
	return n
}

// OtherResults finds, for the cells of a manifest that have no result
// under the given keys, a result recorded under another key of the same
// cell: one an earlier registration of the manifest gave it on a machine
// whose engine or data differed (the cell key includes both). It returns
// those keys by cell index (the newest registration's first) and the
// engines that computed them.
func (s Source) OtherResults(hash string, keys []string) (map[int]string, []string, error) {
	evs, err := s.Events.ByManifest(hash)
	if err != nil {
		return nil, nil, err
	}
	var regs []Registration
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == eventlog.ManifestRegistered {
			reg, err := RegistrationOf(&evs[i])
			if err != nil {
				return nil, nil, err
			}
			regs = append(regs, reg)
		}
	}
	unsigned, err := s.unsignedImports()
	if err != nil {
		return nil, nil, err
	}
	found := map[int]string{}
	engines := map[string]bool{}
	hasResult := func(key string) (*CellView, bool, error) {
		v, err := s.cell(hash, key, unsigned)
		return v, err == nil && (v.Status == eventlog.Completed || v.Status == eventlog.Diverged), err
	}
	for i, key := range keys {
		if _, ok, err := hasResult(key); ok || err != nil {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		for _, reg := range regs {
			if i >= len(reg.CellKeys) || reg.CellKeys[i] == key {
				continue
			}
			v, ok, err := hasResult(reg.CellKeys[i])
			if err != nil {
				return nil, nil, err
			}
			if ok {
				found[i] = reg.CellKeys[i]
				engines[v.Engine()] = true
				break
			}
		}
	}
	return found, slices.Sorted(maps.Keys(engines)), nil
}

// Fingerprint returns the cell's first CellStarted fingerprint (what
// computed it: engine, inputs, ...), or nil.
func (v *CellView) Fingerprint() map[string]string {
	for i := range v.Events {
		if v.Events[i].Kind == eventlog.CellStarted {
			fp, _ := eventlog.PayloadOf[map[string]string](&v.Events[i])
			return fp
		}
	}
	return nil
}

// StageEvents are the events of stage key skey that count for manifest
// hash (countFor).
func (s Source) StageEvents(hash, skey string) ([]eventlog.Event, error) {
	evs, err := s.Events.ByStage(skey)
	if err != nil {
		return nil, err
	}
	unsigned, err := s.unsignedImports()
	return countFor(hash, evs, unsigned), err
}

// Version names this build of ump: its module version and, for a build
// from a git checkout, the commit (what a cell's fingerprint records as
// "ump").
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, set := range info.Settings {
		if set.Key == "vcs.revision" {
			v += " " + set.Value
		}
		if set.Key == "vcs.modified" && set.Value == "true" {
			v += " (modified)"
		}
	}
	return v
}

// Engine is the engine a cell's fingerprint names.
func (cell *CellView) Engine() string {
	if e := cell.Fingerprint()["engine"]; e != "" {
		return e
	}
	return "unknown"
}
