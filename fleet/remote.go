package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
)

// Remote is the state runs on many machines share, in an S3 store beside
// the blobs. Every name is written once: blobs by content, everything else
// create-only (artifacts.Named.PutNew), so no machine can undo another's
// work and a cell is committed exactly once however often it runs:
//
//	manifests/H/registration.json
//	    the manifest's registration and each cell's inputs, pinned by the first machine
//	manifests/H/cells/NNNNN/attempts/A/S.jsonl
//	    attempt A's events of cell NNNNN (1-based), uploaded at each checkpoint, signed
//	manifests/H/cells/NNNNN/commit.json
//	    the cell's result: the winning attempt, its status, output digests and events, signed
//	runs/RUN.json
//	    a submitted run's worklist (ump submit), RUN its sha256
//
// Whoever can write the bucket can write any of these names first, so
// nothing read is believed unchecked: a commit or an attempt's upload
// counts only when signed by a key of Trust (Commit.Sign, SignUpload),
// and its events only when they are its cell's and agree with it.
//
// Contract: safe for concurrent use by the cells of one process.
type Remote struct {
	Bucket  artifacts.Named
	Attempt string         // this process: host, PID, start time
	Signer  *signing.Key   // signs this process's commits and uploads; nil for a process that only reads
	Trust   *signing.Trust // whose commits and uploads count

	mu      sync.Mutex
	uploads map[string]int // per cell directory: progress objects this attempt wrote
}

// NewRemote names this process's attempt.
func NewRemote(bucket artifacts.Named, signer *signing.Key, trust *signing.Trust) *Remote {
	host, _ := os.Hostname()
	return &Remote{Bucket: bucket, Attempt: fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixNano()),
		Signer: signer, Trust: trust, uploads: map[string]int{}}
}

// ErrRejected is returned (wrapped) by Pull for pushed events that are
// not the manifest's own or do not decode.
var ErrRejected = errors.New("pushed events rejected")

// ErrEngineMismatch is returned (wrapped) when the cell keys pinned on S3
// follow from other inputs (another engine or other data) than this
// machine's.
var ErrEngineMismatch = errors.New("cell keys differ from those pinned on S3")

// ErrNondeterministic is returned (wrapped) when a cell's outputs differ
// from those its committed attempt recorded.
var ErrNondeterministic = errors.New("nondeterministic cell")

func registrationName(hash string) string { return "manifests/" + hash + "/registration.json" }
func cellDir(hash string, index int) string {
	return fmt.Sprintf("manifests/%s/cells/%05d/", hash, index+1)
}
func commitName(hash string, index int) string { return cellDir(hash, index) + "commit.json" }

// maxAttemptName bounds an attempt's name (host, PID, start time).
const maxAttemptName = 256

// pin is what registration.json holds.
type pin struct {
	Registration eventlog.Event `json:"registration"` // the ManifestRegistered event
	Inputs       []string       `json:"inputs"`       // each cell's inputs (cellInputs): data digest, engine
}

// Commit is what a cell's commit.json holds.
type Commit struct {
	Attempt   string            `json:"attempt"`
	Key       string            `json:"cell_key"`
	Status    string            `json:"status"`
	Outputs   map[string]string `json:"outputs"` // stage/output -> digest
	Events    artifacts.Ref     `json:"events"`  // the cell's events, JSON lines
	Time      time.Time         `json:"time"`
	Signer    string            `json:"signer,omitempty"`    // the public key that signed it (signing.Key.Public)
	Signature string            `json:"signature,omitempty"` // over signed(): all of the above
}

// signed is what a commit's signature covers: the cell it is of (manifest
// hash, plan index, cell key), its attempt, status, events, outputs and
// time.
func (c *Commit) signed(hash string, index int) []byte {
	return fmt.Appendf(c.fields("ump commit 2", hash, index), "time %s\n", c.Time.UTC().Format(time.RFC3339Nano))
}

// signedV1 is what the signature of a commit by an ump from before commits
// signed their time covered: all of signed but the time, which such a
// commit does not vouch for.
func (c *Commit) signedV1(hash string, index int) []byte {
	return c.fields("ump commit 1", hash, index)
}

// fields are a commit's signed lines but its time, under header.
func (c *Commit) fields(header, hash string, index int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nmanifest %s\ncell %d\ncell_key %s\nattempt %s\nstatus %s\nevents %s %d\n",
		header, hash, index+1, c.Key, c.Attempt, c.Status, c.Events.Digest, c.Events.Size)
	for _, name := range slices.Sorted(maps.Keys(c.Outputs)) {
		fmt.Fprintf(&b, "output %s %s\n", name, c.Outputs[name])
	}
	return []byte(b.String())
}

// Sign signs c as the commit of cell index (from 0) of manifest hash.
func (c *Commit) Sign(hash string, index int, key *signing.Key) {
	c.Signer, c.Signature = key.Public(), key.Sign(c.signed(hash, index))
}

// Pin records the registration on S3 unless a machine did first; then its
// cell keys must be this machine's.
func (r *Remote) Pin(ctx context.Context, ev *eventlog.Event, reg *state.Registration, inputs []string) error {
	data, err := json.Marshal(pin{Registration: *ev, Inputs: inputs})
	if err != nil {
		return err
	}
	name := registrationName(reg.Plan.Hash)
	if err := r.Bucket.PutNew(ctx, name, data); err == nil || !errors.Is(err, artifacts.ErrExists) {
		return err
	}
	theirs, err := r.pinned(ctx, reg.Plan.Hash)
	if err != nil {
		return err
	}
	pinned, err := state.RegistrationOf(&theirs.Registration)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for i, key := range reg.CellKeys {
		if i >= len(pinned.CellKeys) || i >= len(theirs.Inputs) || pinned.CellKeys[i] != key {
			return fmt.Errorf(
				"%w: cell %d of manifest %.12s was pinned on %s by a machine whose inputs were %q; this machine's "+
					"are %q. "+
					"Run the manifest on machines with the same engine (CPU engine version, GPU backend) and data, "+
					"or under another --artifacts prefix",
				ErrEngineMismatch,
				i+1,
				reg.Plan.Hash,
				r.Bucket,
				inputAt(theirs.Inputs, i),
				inputs[i],
			)
		}
	}
	return nil
}

func inputAt(inputs []string, i int) string {
	if i < len(inputs) {
		return inputs[i]
	}
	return "(none)"
}

// pinned reads a manifest's registration.json; a missing one is
// artifacts.ErrNotFound.
func (r *Remote) pinned(ctx context.Context, hash string) (*pin, error) {
	raw, err := r.Bucket.GetNamed(ctx, registrationName(hash))
	if err != nil {
		return nil, err
	}
	var p pin
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRejected, registrationName(hash), err)
	}
	return &p, nil
}

// Progress uploads this attempt's events of a cell so far, for another
// machine to resume from.
func (r *Remote) Progress(ctx context.Context, hash string, index int, evs []eventlog.Event) error {
	dir := cellDir(hash, index)
	r.mu.Lock()
	r.uploads[dir]++
	n := r.uploads[dir]
	r.mu.Unlock()
	name := fmt.Sprintf("%sattempts/%s/%06d.jsonl", dir, r.Attempt, n)
	return r.Bucket.PutNew(ctx, name, SignUpload(name, encodeEvents(evs), r.Signer))
}

// An attempt's upload is its events as JSON lines, then one line of
// uploadSignature: the signature of uploadSigned(name, the lines before).
type uploadSignature struct {
	Signer    string `json:"signer"`
	Signature string `json:"signature"`
}

func uploadSigned(name string, events []byte) []byte {
	return slices.Concat([]byte("ump upload 1\n"+name+"\n"), events)
}

// SignUpload returns an attempt's upload named name of events (JSON
// lines), signed with key.
func SignUpload(name string, events []byte, key *signing.Key) []byte {
	line, _ := json.Marshal(uploadSignature{Signer: key.Public(), Signature: key.Sign(uploadSigned(name, events))})
	return slices.Concat(events, line, []byte("\n"))
}

// upload reads an attempt's upload: its signature must be by a trusted
// key (an unsigned upload, from an ump before signing, passes only with
// Trust.Unsigned) and its lines must decode as events.
func (r *Remote) upload(ctx context.Context, name string) ([]eventlog.Event, error) {
	raw, err := r.Bucket.GetNamed(ctx, name)
	if err != nil {
		return nil, err
	}
	events, sig := raw, uploadSignature{}
	body := bytes.TrimSuffix(raw, []byte("\n"))
	if cut := bytes.LastIndexByte(body, '\n') + 1; json.Unmarshal(body[cut:], &sig) == nil && sig.Signature != "" {
		events = raw[:cut]
	} else {
		sig = uploadSignature{}
	}
	if err := r.Trust.Verify(name, sig.Signer, uploadSigned(name, events), sig.Signature); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return decodeEvents(events, name)
}

// Commit records a finished cell's result unless another attempt did
// first. It returns the commit that holds: this attempt's, or the earlier
// one when its outputs are the same; different outputs are
// ErrNondeterministic.
func (r *Remote) Commit(
	ctx context.Context,
	hash string,
	index int,
	key, status string,
	evs []eventlog.Event,
) (*Commit, error) {
	mine := &Commit{Attempt: r.Attempt, Key: key, Status: status, Outputs: stageOutputs(evs), Time: time.Now().UTC()}
	theirs, err := r.commit(ctx, hash, index)
	if errors.Is(err, artifacts.ErrNotFound) {
		if mine.Events, err = r.Bucket.Put(ctx, encodeEvents(evs)); err != nil {
			return nil, err
		}
		mine.Sign(hash, index, r.Signer)
		data, _ := json.Marshal(mine)
		perr := r.Bucket.PutNew(ctx, commitName(hash, index), data)
		if perr == nil {
			return mine, nil
		}
		// Taken meanwhile, or no answer: who holds the name? (Our own
		// earlier try, when its answer was lost.)
		if theirs, err = r.commit(ctx, hash, index); errors.Is(err, artifacts.ErrNotFound) {
			return nil, perr
		}
	}
	if err != nil {
		return nil, err
	}
	if theirs.Attempt == r.Attempt {
		return theirs, nil
	}
	if theirs.Key != key || !maps.Equal(theirs.Outputs, mine.Outputs) {
		return nil, fmt.Errorf(
			"%w: cell %d of manifest %.12s: attempt %s committed %s (outputs %v); this attempt (%s) computed %s "+
				"(outputs %v) from the same cell key. "+
				"Something in the engine is not deterministic; `ump verify` on each result tells which",
			ErrNondeterministic,
			index+1,
			hash,
			theirs.Attempt,
			theirs.Status,
			theirs.Outputs,
			r.Attempt,
			status,
			mine.Outputs,
		)
	}
	return theirs, nil
}

// commit reads a cell's commit.json and checks its fields and signature
// (Trust); a missing one is artifacts.ErrNotFound.
func (r *Remote) commit(ctx context.Context, hash string, index int) (*Commit, error) {
	raw, err := r.Bucket.GetNamed(ctx, commitName(hash, index))
	if err != nil {
		return nil, err
	}
	var c Commit
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRejected, commitName(hash, index), err)
	}
	// What status --remote prints of it is one line: a known status, an
	// attempt's short name.
	if !slices.Contains([]string{eventlog.Completed, eventlog.Diverged, eventlog.Failed}, c.Status) {
		return nil, fmt.Errorf(
			"%w: %s: status %.60q is not %s, %s or %s",
			ErrRejected,
			commitName(hash, index),
			c.Status,
			eventlog.Completed,
			eventlog.Diverged,
			eventlog.Failed,
		)
	}
	if len(c.Attempt) > maxAttemptName || strings.ContainsAny(c.Attempt, "\n\r") {
		return nil, fmt.Errorf(
			"%w: %s: attempt %.60q is not a machine's attempt name",
			ErrRejected,
			commitName(hash, index),
			c.Attempt,
		)
	}
	what := fmt.Sprintf("the commit of cell %d of manifest %.12s (%s)", index+1, hash, commitName(hash, index))
	msg := c.signed(hash, index)
	if !signing.Verifies(c.Signer, msg, c.Signature) &&
		signing.Verifies(c.Signer, c.signedV1(hash, index), c.Signature) {
		msg = c.signedV1(hash, index) // committed by an ump from before commits signed their time
	}
	if err := r.Trust.Verify(what, c.Signer, msg, c.Signature); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return &c, nil
}

// agrees checks a commit against the events it names: each reads, and is
// of its cell (keys: the cells of manifest hash); they record its outputs;
// its status follows from them.
func (c *Commit) agrees(hash string, keys []string, evs []eventlog.Event) error {
	for k := range evs {
		ev := &evs[k]
		if err := ev.CheckForeign(); err != nil {
			return fmt.Errorf("its event %d (%s): %v", k+1, ev.Kind, err)
		}
		switch {
		case ev.Manifest != hash:
			return fmt.Errorf("its event %d belongs to manifest %q, not %s", k+1, ev.Manifest, hash)
		case !slices.Contains(keys, ev.Cell):
			return fmt.Errorf("its event %d: cell %q is not a cell of the manifest", k+1, ev.Cell)
		case ev.Cell != c.Key:
			return fmt.Errorf("its event %d is cell %.12s's, not its own cell's (%.12s)", k+1, ev.Cell, c.Key)
		}
	}
	if got := stageOutputs(evs); !maps.Equal(got, c.Outputs) {
		return fmt.Errorf("it records outputs %v, its events %v", c.Outputs, got)
	}
	view, err := state.FoldCell(c.Key, evs)
	if err != nil {
		return err
	}
	if view.Status != c.Status {
		return fmt.Errorf("its status is %s, its events say %s", c.Status, view.Status)
	}
	return nil
}

// committedEvents reads the events a commit names.
func (r *Remote) committedEvents(ctx context.Context, hash string, index int, c *Commit) ([]eventlog.Event, error) {
	raw, err := r.Bucket.Get(ctx, c.Events)
	if err != nil {
		return nil, fmt.Errorf("the events of %s: %w", commitName(hash, index), err)
	}
	return decodeEvents(raw, commitName(hash, index))
}

// stageOutputs lists the outputs of a cell's completed stages.
func stageOutputs(evs []eventlog.Event) map[string]string {
	out := map[string]string{}
	for _, ev := range evs {
		if ev.Kind == eventlog.StageCompleted {
			for name, ref := range ev.Outputs {
				out[ev.Stage+"/"+name] = ref.Digest
			}
		}
	}
	return out
}

// Resumed is what S3 holds of a cell for a machine about to run it.
type Resumed struct {
	Events  []eventlog.Event // nil when there is nothing to resume from
	From    string           // where Events came from, for the user
	Commit  *Commit          // the cell's commit, when Events are its
	Skipped []string         // attempts' uploads that do not check, each with why
}

// Resume returns what a machine about to run a cell can start from: the
// committed events, or else the last upload of the attempt that got
// furthest (its furthest checkpoint, then its completed stages) among
// those that are signed by a trusted key, decode and pass check. Each
// attempt skipped is named, with why, in Skipped (and kept on S3): a bad
// upload never blocks a cell. A commit that does not check, or whose
// events do not pass check, is refused (ErrRejected).
func (r *Remote) Resume(
	ctx context.Context,
	hash string,
	index int,
	check func([]eventlog.Event) error,
) (*Resumed, error) {
	c, err := r.commit(ctx, hash, index)
	if err == nil {
		res := &Resumed{From: "committed by " + c.Attempt, Commit: c}
		if res.Events, err = r.committedEvents(ctx, hash, index, c); err != nil {
			return nil, err
		}
		if err := check(res.Events); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrRejected, res.From, err)
		}
		return res, nil
	}
	if !errors.Is(err, artifacts.ErrNotFound) {
		return nil, err
	}
	attempts, err := r.attempts(ctx, hash, index)
	if err != nil {
		return nil, err
	}
	res := &Resumed{}
	bestAt := [2]int{-1, -1}
	for _, a := range attempts {
		evs, err := r.upload(ctx, a.last)
		if err == nil {
			err = check(evs)
		}
		if errors.Is(err, artifacts.ErrUnavailable) {
			return nil, err
		}
		if err != nil {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", a.last, err))
			continue
		}
		at := [2]int{-1, 0}
		for _, ev := range evs {
			if _, ok := ev.Outputs[eventlog.RoundCheckpoint]; ok && ev.Kind == eventlog.RoundCompleted {
				at[0] = max(at[0], ev.Round)
			}
			if ev.Kind == eventlog.StageCompleted {
				at[1]++
			}
		}
		if at[0] > bestAt[0] || at[0] == bestAt[0] && at[1] > bestAt[1] {
			res.Events, bestAt, res.From = evs, at, fmt.Sprintf(
				"attempt %s (checkpoint of round %d)",
				a.name,
				max(at[0], 0),
			)
		}
	}
	return res, nil
}

// attempt is one attempt's uploads of a cell.
type attempt struct{ name, last string } // the attempt, its last upload

// attempts lists a cell's attempts that uploaded progress.
func (r *Remote) attempts(ctx context.Context, hash string, index int) ([]attempt, error) {
	dir := cellDir(hash, index) + "attempts/"
	names, err := r.Bucket.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []attempt
	for _, name := range names { // sorted: an attempt's uploads in order
		a, _, ok := strings.Cut(strings.TrimPrefix(name, dir), "/")
		if !ok {
			continue
		}
		if len(out) == 0 || out[len(out)-1].name != a {
			out = append(out, attempt{name: a})
		}
		out[len(out)-1].last = name
	}
	return out, nil
}

// CellState is what S3 holds of one cell (RemoteStatus).
type CellState struct {
	Index  int
	Commit *Commit // nil when not committed
	// Attempts that uploaded progress; for an uncommitted cell, the
	// furthest round its last upload reached and when.
	Attempts   int
	Round      int
	Uploaded   time.Time
	Unreadable []string // the attempts' last uploads that do not check (signature, decoding), each with why
	Refused    string   // why its commit.json does not check ("" when it does or there is none)
}

// RemoteStatus lists, for each cell of a manifest registered on S3, its
// commit or its progress, without pulling anything.
func (r *Remote) RemoteStatus(ctx context.Context, hash string) (*state.Registration, []CellState, error) {
	p, err := r.pinned(ctx, hash)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil, fmt.Errorf(
			"%w: manifest %s has no registration on %s: no machine has run it there yet (give the full 64-digit hash)",
			state.ErrBadArgument,
			hash,
			r.Bucket,
		)
	}
	if err != nil {
		return nil, nil, err
	}
	reg, err := state.RegistrationOf(&p.Registration)
	if err != nil {
		return nil, nil, err
	}
	names, err := r.Bucket.List(ctx, "manifests/"+hash+"/cells/")
	if err != nil {
		return nil, nil, err
	}
	cells := make([]CellState, len(reg.Plan.Cells))
	for i := range cells {
		cells[i].Index = i
	}
	last := map[int]map[string]string{} // cell -> attempt -> its last upload
	for _, name := range names {
		n, rest, ok := cellObject(hash, name)
		if !ok || n > len(cells) {
			continue
		}
		if rest == "commit.json" {
			c, err := r.commit(ctx, hash, n-1)
			switch {
			case errors.Is(err, ErrRejected):
				cells[n-1].Refused = err.Error()
			case err != nil:
				return nil, nil, err
			case c.Key != reg.CellKeys[n-1]:
				cells[n-1].Refused = fmt.Sprintf(
					"it names cell key %.12s, the registration %.12s",
					c.Key,
					reg.CellKeys[n-1],
				)
			default:
				cells[n-1].Commit = c
			}
		} else if a, upload, ok := strings.Cut(strings.TrimPrefix(rest, "attempts/"), "/"); ok && upload != "" {
			if last[n-1] == nil {
				last[n-1] = map[string]string{}
			}
			last[n-1][a] = max(last[n-1][a], name) // uploads are numbered with leading zeros
		}
	}
	for i, uploads := range last {
		cells[i].Attempts = len(uploads)
		if cells[i].Commit != nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Values(uploads)) {
			evs, err := r.upload(ctx, name)
			if errors.Is(err, ErrRejected) {
				cells[i].Unreadable = append(cells[i].Unreadable, err.Error())
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			for _, ev := range evs {
				if ev.Kind == eventlog.RoundCompleted {
					cells[i].Round = max(cells[i].Round, ev.Round)
				}
				if ev.Time.After(cells[i].Uploaded) {
					cells[i].Uploaded = ev.Time
				}
			}
		}
	}
	return &reg, cells, nil
}

// Cell gives a cell's hooks (pipeline.Fleet): its run shares it through
// S3.
func (r *Remote) Cell(c *pipeline.CellRun) pipeline.CellHooks { return cellHooks{r, c} }

// cellHooks share a cell through S3.
type cellHooks struct {
	r *Remote
	c *pipeline.CellRun
}

// Start brings into the store what S3 holds of the cell (Resume),
// checked like a pull, so that the runner finds its completed stages as
// cache hits and resumes training from the furthest checkpoint.
func (h cellHooks) Start(ctx context.Context) error {
	r, plan, cell, key := h.r, h.c.Plan, h.c.Cell, h.c.Key
	check := func(evs []eventlog.Event) error {
		for i := range evs {
			if evs[i].Manifest != plan.Hash || evs[i].Cell != key {
				return fmt.Errorf("event %d is not of cell %d (key %.12s)", i+1, cell.Index+1, key)
			}
			if err := evs[i].CheckForeign(); err != nil {
				return fmt.Errorf("event %d (%s): %v", i+1, evs[i].Kind, err)
			}
		}
		return h.c.Check(evs)
	}
	res, err := r.Resume(ctx, plan.Hash, cell.Index, check)
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		h.c.Say("skipping an attempt's upload that does not check (kept on S3): %s\n", s)
	}
	if res.Events == nil {
		return nil
	}
	have, err := h.c.Log.ByCell(key)
	if err != nil {
		return err
	}
	evs := res.Events
	if res.Commit != nil {
		evs = append(evs, r.imported(plan.Hash, res.Commit, have, evs)...)
	}
	if _, err := pipeline.ImportAbsent(ctx, h.c.Log, have, evs); err != nil {
		return err
	}
	h.c.Say("resuming from S3: %s\n", res.From)
	return nil
}

// imported returns the CellImported event that records where a commit's
// events came from, when the store (have) lacks some of them; else none.
func (r *Remote) imported(hash string, c *Commit, have, evs []eventlog.Event) []eventlog.Event {
	known := map[string]bool{}
	for _, ev := range have {
		known[pipeline.Identity(ev)] = true
	}
	for _, ev := range evs {
		if !known[pipeline.Identity(ev)] {
			ev := eventlog.New(
				eventlog.CellImported,
				eventlog.Provenance{From: r.Bucket.String(), Attempt: c.Attempt, Signer: c.Signer},
			)
			ev.Manifest, ev.Cell, ev.Time = hash, c.Key, time.Now().UTC()
			return []eventlog.Event{*ev}
		}
	}
	return nil
}

// Recorded uploads the cell's events so far (Remote.Progress) after each
// stage's end and each checkpoint; a context
// already cancelled (an interrupted run saving its last checkpoint) gets
// a short one of its own.
func (h cellHooks) Recorded(ctx context.Context, ev *eventlog.Event) error {
	plan, cell := h.c.Plan, h.c.Cell
	_, checkpoint := ev.Outputs[eventlog.RoundCheckpoint]
	if ev.Kind != eventlog.StageCompleted && ev.Kind != eventlog.StageFailed &&
		!(ev.Kind == eventlog.RoundCompleted && checkpoint) {
		return nil
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	evs, err := h.c.Log.ByCell(h.c.Key)
	if err != nil {
		return err
	}
	return h.r.Progress(ctx, plan.Hash, cell.Index, ownEvents(evs, plan.Hash))
}

// ownEvents keeps the events of one manifest, less the store's own
// records (eventlog.Own), which do not travel.
func ownEvents(evs []eventlog.Event, hash string) []eventlog.Event {
	return slices.DeleteFunc(evs, func(ev eventlog.Event) bool { return ev.Manifest != hash || eventlog.Own(ev.Kind) })
}

// Finish commits the cell's result on S3 (Remote.Commit); a failed cell
// is left for another attempt.
// It finishes even when ctx is cancelled meanwhile (S3's own time limits
// bound it).
func (h cellHooks) Finish(ctx context.Context, status string) error {
	r, plan, cell, key := h.r, h.c.Plan, h.c.Cell, h.c.Key
	if status == eventlog.Failed { // another machine may yet compute it
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	evs, err := h.c.Log.ByCell(key)
	if err != nil {
		return err
	}
	c, err := r.Commit(ctx, plan.Hash, cell.Index, key, status, ownEvents(evs, plan.Hash))
	if err != nil {
		return err
	}
	if c.Attempt != r.Attempt {
		h.c.Say("already committed by %s with the same outputs\n", c.Attempt)
	}
	return nil
}

// encodeEvents writes events as JSON lines.
func encodeEvents(evs []eventlog.Event) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range evs {
		enc.Encode(&evs[i])
	}
	return buf.Bytes()
}

// decodeEvents reads JSON lines; name is where they came from, for
// errors. Each event's Seq becomes its line number, for messages.
func decodeEvents(raw []byte, name string) ([]eventlog.Event, error) {
	var evs []eventlog.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<30)
	for line := 1; sc.Scan(); line++ {
		var ev eventlog.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrRejected, name, line, err)
		}
		ev.Seq = uint64(line)
		evs = append(evs, ev)
	}
	return evs, sc.Err()
}

// remoteEvents gathers what Pull imports: the pinned registration, then
// every committed cell's events in plan order, and the commits. ok is
// false when the manifest has no registration on S3.
func (r *Remote) remoteEvents(
	ctx context.Context,
	hash string,
	progress func(string, ...any),
) (evs []eventlog.Event, commits []*Commit, ok bool, err error) {
	p, err := r.pinned(ctx, hash)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	reg, err := state.RegistrationOf(&p.Registration)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: %s: %v", ErrRejected, registrationName(hash), err)
	}
	committed, err := r.Committed(ctx, hash)
	if err != nil {
		return nil, nil, false, err
	}
	evs = []eventlog.Event{p.Registration}
	for _, i := range slices.Sorted(maps.Keys(committed)) {
		if i >= len(reg.Plan.Cells) {
			return nil, nil, false, fmt.Errorf(
				"%w: %s: the manifest has %d cells",
				ErrRejected,
				commitName(hash, i),
				len(reg.Plan.Cells),
			)
		}
		if ctx.Err() != nil {
			return nil, nil, false, pipeline.ErrInterrupted
		}
		c, err := r.commit(ctx, hash, i)
		if err != nil {
			return nil, nil, false, err
		}
		if c.Key != reg.CellKeys[i] {
			return nil, nil, false, fmt.Errorf(
				"%w: %s names cell key %.12s, the registration %.12s",
				ErrRejected,
				commitName(hash, i),
				c.Key,
				reg.CellKeys[i],
			)
		}
		cellEvs, err := r.committedEvents(ctx, hash, i, c)
		if err != nil {
			return nil, nil, false, err
		}
		if err := c.agrees(hash, reg.CellKeys, cellEvs); err != nil {
			return nil, nil, false, fmt.Errorf("%w: %s: %v", ErrRejected, commitName(hash, i), err)
		}
		evs = append(evs, cellEvs...)
		commits = append(commits, c)
		progress(
			"cell %d/%d: committed by %s (%s), signed by %s\n",
			i+1,
			len(reg.Plan.Cells),
			c.Attempt,
			c.Status,
			signerName(c.Signer),
		)
	}
	for k := range evs {
		evs[k].Seq = uint64(k + 1)
	}
	return evs, commits, true, nil
}

// signerName is a signer for messages: its public key, or that there is
// none.
func signerName(signer string) string {
	if signer == "" {
		return "nobody (unsigned, accepted with --trust-unsigned)"
	}
	return signer
}

// Worklist is a submitted run (`ump submit`): the plan, and the cells each
// task runs (plan indices, in plan order). It is stored once, named by its
// sha256 (the run), so every task of every attempt reads the same list.
type Worklist struct {
	Plan  manifests.Plan `json:"plan"`
	Tasks [][]int        `json:"tasks"`
	// Trusted holds the keys the submitting store trusted, its user's own
	// included: the workers trust them too.
	Trusted []string `json:"trusted,omitempty"`
	// TrustUnsigned: the workers also resume from unsigned commits and
	// uploads (submit --trust-unsigned).
	TrustUnsigned bool `json:"trust_unsigned,omitempty"`
}

// maxArray is Slurm's default MaxArraySize less one: array indices run
// from 0 to maxArray-1.
const maxArray = 1000

// Split splits cells (a plan's indices) into tasks of perTask cells: by
// default (0) one each, or for a Slurm array (slurm) as many as keep it
// within Slurm's default size; it returns the tasks and perTask. Too many
// tasks for an array is a state.ErrBadArgument that says what to ask.
func Split(cells []int, perTask int, slurm bool) (tasks [][]int, _ int, _ error) {
	fewest := (len(cells) + maxArray - 1) / maxArray
	switch {
	case perTask == 0 && slurm:
		perTask = fewest
	case perTask == 0:
		perTask = 1
	}
	for start := 0; start < len(cells); start += perTask {
		tasks = append(tasks, cells[start:min(start+perTask, len(cells))])
	}
	if slurm && len(tasks) > maxArray {
		return nil, 0, fmt.Errorf(
			"%w: --cells-per-task %d gives %d tasks; a Slurm array holds at most %d by default: raise "+
				"--cells-per-task to %d",
			state.ErrBadArgument,
			perTask,
			len(tasks),
			maxArray,
			fewest,
		)
	}
	return tasks, perTask, nil
}

func worklistName(run string) string { return "runs/" + run + ".json" }

// Submit stores the worklist and returns its run.
func (r *Remote) Submit(ctx context.Context, wl *Worklist) (string, error) {
	data, err := json.Marshal(wl)
	if err != nil {
		return "", err
	}
	run := strings.TrimPrefix(artifacts.RefOf(data).Digest, "sha256:")
	if err := r.Bucket.PutNew(ctx, worklistName(run), data); err != nil && !errors.Is(err, artifacts.ErrExists) {
		return "", err
	}
	return run, nil
}

// Worklist reads a submitted run's worklist and checks it: its name is its
// digest and its plan hashes to its manifest hash.
func (r *Remote) Worklist(ctx context.Context, run string) (*Worklist, error) {
	raw, err := r.Bucket.GetNamed(ctx, worklistName(run))
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, fmt.Errorf("no run %q on %s: give the full run id that `ump submit` printed", run, r.Bucket)
	}
	if err != nil {
		return nil, err
	}
	if got := strings.TrimPrefix(artifacts.RefOf(raw).Digest, "sha256:"); got != run {
		return nil, fmt.Errorf("%w: %s holds a worklist with digest %s", ErrRejected, worklistName(run), got)
	}
	var wl Worklist
	if err := json.Unmarshal(raw, &wl); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRejected, worklistName(run), err)
	}
	if h := manifests.HashOf(wl.Plan.Manifest); h != wl.Plan.Hash {
		return nil, fmt.Errorf("%w: %s: its plan hashes to %s, not %s", ErrRejected, worklistName(run), h, wl.Plan.Hash)
	}
	for t, cells := range wl.Tasks {
		for _, c := range cells {
			if c < 0 || c >= len(wl.Plan.Cells) {
				return nil, fmt.Errorf(
					"%w: %s: task %d names cell %d of %d",
					ErrRejected,
					worklistName(run),
					t,
					c+1,
					len(wl.Plan.Cells),
				)
			}
		}
	}
	return &wl, nil
}

// Committed lists the plan indices of a manifest's committed cells.
func (r *Remote) Committed(ctx context.Context, hash string) (map[int]bool, error) {
	names, err := r.Bucket.List(ctx, "manifests/"+hash+"/cells/")
	if err != nil {
		return nil, err
	}
	done := map[int]bool{}
	for _, name := range names {
		if n, rest, ok := cellObject(hash, name); ok && rest == "commit.json" {
			done[n-1] = true
		}
	}
	return done, nil
}

// cellObject splits the name of an object under a manifest's cells/ into
// its cell's number (from 1) and the rest of the name.
func cellObject(hash, name string) (n int, rest string, ok bool) {
	num, rest, _ := strings.Cut(strings.TrimPrefix(name, "manifests/"+hash+"/cells/"), "/")
	n, err := strconv.Atoi(num)
	return n, rest, err == nil && n >= 1
}
