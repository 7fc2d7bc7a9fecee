package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
)

// The commit protocol against artifacts.Memory, the in-memory twin of a
// create-only S3 store, with failures injected where a server or network
// fails: races and lost answers run without a server.

// flaky is a Named store whose PutNew of names matching fail fails once:
// before storing (lost: false) or after, the answer lost (lost: true).
type flaky struct {
	*artifacts.Memory
	fail  string
	lost  bool
	fired atomic.Bool
}

func (f *flaky) PutNew(ctx context.Context, name string, data []byte) error {
	if !strings.HasSuffix(name, f.fail) || f.fired.Swap(true) {
		return f.Memory.PutNew(ctx, name, data)
	}
	if f.lost {
		f.Memory.PutNew(ctx, name, data)
	}
	return fmt.Errorf("%w: the connection was reset", artifacts.ErrUnavailable)
}

func testSigner(t *testing.T, name string) *signing.Key {
	t.Helper()
	key, _, err := signing.LoadOrCreate(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// machine is one process sharing bucket, signing with key and trusting
// the trusted keys.
func machine(t *testing.T, bucket artifacts.Named, key *signing.Key, trusted ...*signing.Key) *Remote {
	t.Helper()
	var pubs []string
	for _, k := range trusted {
		pubs = append(pubs, k.Public())
	}
	trust, err := signing.NewTrust(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRemote(bucket, key, trust)
	r.Attempt = fmt.Sprintf("%s-%p", r.Attempt, r)
	return r
}

// finished is a finished cell's events with one output of digest d.
func finished(hash, key, d string) []eventlog.Event {
	ev := eventlog.New(eventlog.StageCompleted, eventlog.StageOutcome{})
	ev.Manifest, ev.Cell, ev.Stage, ev.StageKey = hash, key, "evaluate", "s"
	ev.Outputs = map[string]artifacts.Ref{"final": {Digest: "sha256:" + strings.Repeat(d, 64), Size: 1}}
	done := eventlog.New(eventlog.CellCompleted, eventlog.CellOutcome{Status: eventlog.Completed})
	done.Manifest, done.Cell = hash, key
	return []eventlog.Event{*ev, *done}
}

const (
	tHash = "h0000000000000000000000000000000000000000000000000000000000000000"
	tKey  = "k0000000000000000000000000000000000000000000000000000000000000000"
)

func TestRacingCommitsLeaveOneCommit(t *testing.T) {
	bucket := artifacts.NewMemory()
	key := testSigner(t, "fleet")
	ctx := context.Background()
	got := make([]*Commit, 12)
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = machine(
				t,
				bucket,
				key,
				key,
			).Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "a"))
		}()
	}
	wg.Wait()
	if names, _ := bucket.List(ctx, "manifests/"); len(names) != 1 {
		t.Fatalf("after racing commits S3 holds %v; want one commit.json", names)
	}
	held, err := machine(t, bucket, nil, key).commit(ctx, tHash, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if errs[i] != nil || got[i].Attempt != held.Attempt {
			t.Errorf("machine %d: %v; want the held commit of %s", i, errs[i], held.Attempt)
		}
	}
	other, err := machine(
		t,
		bucket,
		key,
		key,
	).Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "b"))
	if !errors.Is(err, ErrNondeterministic) || other != nil {
		t.Errorf("a machine that computed other outputs: %v; want ErrNondeterministic", err)
	}
}

func TestCommitWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	key := testSigner(t, "me")
	for _, lost := range []bool{false, true} {
		bucket := &flaky{Memory: artifacts.NewMemory(), fail: "commit.json", lost: lost}
		m := machine(t, bucket, key, key)
		c, err := m.Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "a"))
		if lost {
			// Stored, then the answer lost: reading back finds its own.
			if err != nil || c.Attempt != m.Attempt {
				t.Errorf("a commit stored whose answer was lost: %v; want its own commit", err)
			}
			continue
		}
		if !errors.Is(err, artifacts.ErrUnavailable) {
			t.Errorf("a commit the server did not store: %v; want ErrUnavailable", err)
		}
		if _, err := m.commit(ctx, tHash, 0); !errors.Is(err, artifacts.ErrNotFound) {
			t.Errorf("after a failed commit: %v; want none held", err)
		}
		if c, err := m.Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "a")); err != nil ||
			c.Attempt != m.Attempt {
			t.Errorf("the commit retried: %v", err)
		}
	}
}

func TestCommitsAndUploadsCountOnlyFromTrustedKeys(t *testing.T) {
	ctx := context.Background()
	bucket := artifacts.NewMemory()
	mine, stranger := testSigner(t, "mine"), testSigner(t, "stranger")
	me := machine(t, bucket, mine, mine)
	accept := func([]eventlog.Event) error { return nil }

	// Uploads: the stranger's got furthest, but only mine count: the
	// furthest of them.
	progress := func(m *Remote, round int) {
		ev := eventlog.New(eventlog.RoundCompleted, record.RoundReport{Round: round})
		ev.Manifest, ev.Cell, ev.Round = tHash, tKey, round
		ev.Outputs = map[string]artifacts.Ref{eventlog.RoundCheckpoint: {Digest: "sha256:" + strings.Repeat("c", 64)}}
		if err := m.Progress(ctx, tHash, 0, []eventlog.Event{*ev}); err != nil {
			t.Fatal(err)
		}
	}
	progress(machine(t, bucket, mine, mine), 5)
	progress(me, 10)
	progress(machine(t, bucket, stranger, stranger), 90)
	bucket.PutNew(ctx, cellDir(tHash, 0)+"attempts/unsigned/000001.jsonl", encodeEvents(finished(tHash, tKey, "d")))
	res, err := me.Resume(ctx, tHash, 0, accept)
	if err != nil || res.Events == nil || res.Events[0].Round != 10 || len(res.Skipped) != 2 {
		t.Fatalf(
			"Resume beside a stranger's and an unsigned upload: %+v %v; want mine (round 10), two skipped",
			res,
			err,
		)
	}
	for _, want := range []string{"is signed by " + stranger.Public(), "is not signed"} {
		if !strings.Contains(strings.Join(res.Skipped, "\n"), want) {
			t.Errorf("skipped %q; want one that %s", res.Skipped, want)
		}
	}

	// A commit by the stranger: refused, named, in Resume and RemoteStatus.
	if _, err := machine(t, bucket, stranger, stranger).Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash,
		tKey, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := me.Resume(ctx, tHash, 0, accept); !errors.Is(err, ErrRejected) ||
		!strings.Contains(err.Error(), "ump trust add "+stranger.Public()) {
		t.Errorf("Resume of a stranger's commit: %v; want ErrRejected naming the key", err)
	}
	trusting := machine(t, bucket, mine, mine, stranger)
	if res, err := trusting.Resume(ctx, tHash, 0, accept); err != nil || res.Commit == nil ||
		res.Commit.Signer != stranger.Public() {
		t.Errorf("Resume of the commit by a key the store trusts: %+v %v", res, err)
	}
}

func TestRacingPinsAgreeOrNameTheMismatch(t *testing.T) {
	ctx := context.Background()
	bucket := artifacts.NewMemory()
	key := testSigner(t, "fleet")
	plan := parse(t, smallManifest)
	pinWith := func(inputs string) error {
		reg := &state.Registration{Plan: *plan}
		var all []string
		for range plan.Cells {
			reg.CellKeys = append(reg.CellKeys, "key of "+inputs)
			all = append(all, inputs)
		}
		ev := reg.Event()
		return machine(t, bucket, key, key).Pin(ctx, ev, reg, all)
	}
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = pinWith("cpu") }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("machine %d pinning the same cell keys: %v", i, err)
		}
	}
	if err := pinWith("gpu"); !errors.Is(err, ErrEngineMismatch) ||
		!strings.Contains(err.Error(), `inputs were "cpu"`) {
		t.Errorf("a machine whose cell keys differ: %v; want ErrEngineMismatch naming the pinned inputs", err)
	}
}

// TestRunnersShareASweepInMemory: the runner over the twins alone (an
// in-memory event log per machine, one in-memory blob store and one
// create-only named store shared as S3 would be): a second machine with
// an empty log takes every cell the first committed, as cache hits with
// the same outputs, and records where each came from.
func TestRunnersShareASweepInMemory(t *testing.T) {
	plan := parse(t, smallManifest)
	bucket, blobs := artifacts.NewMemory(), artifacts.NewMemory()
	key := testSigner(t, "fleet")
	run := func(log eventlog.Log) pipeline.Outcome {
		t.Helper()
		r := &pipeline.Runner{
			Log:     log,
			Blobs:   blobs,
			Stages:  cellStages(),
			Engines: engines.Set{},
			Fleet:   machine(t, bucket, key, key),
		}
		out, err := r.Run(context.Background(), plan)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first, second := eventlog.NewMemory(), eventlog.NewMemory()
	if out := run(first); out.Completed != len(plan.Cells) || out.Cached != 0 {
		t.Fatalf("first machine: %+v; want every cell computed", out)
	}
	if out := run(second); out.Completed != len(plan.Cells) || out.Cached != len(plan.Cells) {
		t.Fatalf("second machine: %+v; want every cell taken from the first's commits", out)
	}
	if _, err := os.Stat("status.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a runner with no Dir wrote its progress snapshot into the working directory (%v)", err)
	}
	imports, _ := second.ByKind(eventlog.CellImported)
	if len(imports) != len(plan.Cells) {
		t.Errorf("the second machine recorded %d imports; want one per cell", len(imports))
	}
	digests := func(log eventlog.Log) map[string]string {
		evs, _ := log.ByKind(eventlog.StageCompleted)
		out := map[string]string{}
		for _, ev := range evs {
			for name, ref := range ev.Outputs {
				out[ev.Cell+"/"+ev.Stage+"/"+name] = ref.Digest
			}
		}
		return out
	}
	want, got := digests(first), digests(second)
	for k, d := range want {
		if got[k] != d {
			t.Errorf("%s: the second machine has %q, the first computed %q", k, got[k], d)
		}
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Errorf("outputs: the first machine %d, the second %d", len(want), len(got))
	}
}

// TestSignaturesCoverWhereAndWhat: a commit's signature covers the
// manifest it is of and its outputs' digests, and an upload's its path: a
// trusted commit copied to another manifest's cell (same index and key),
// a commit whose output digest was changed after signing, and a signed
// upload copied to another attempt's path are all refused.
func TestSignaturesCoverWhereAndWhat(t *testing.T) {
	ctx := context.Background()
	bucket := artifacts.NewMemory()
	key := testSigner(t, "fleet")
	me := machine(t, bucket, key, key)
	if _, err := me.Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "a")); err != nil {
		t.Fatal(err)
	}
	raw, err := bucket.GetNamed(ctx, commitName(tHash, 0))
	if err != nil {
		t.Fatal(err)
	}
	other := "h1" + tHash[2:]
	bucket.PutNew(ctx, commitName(other, 0), raw)
	if _, err := me.commit(ctx, tHash, 0); err != nil {
		t.Fatalf("the commit where it was signed: %v", err)
	}
	if _, err := me.commit(ctx, other, 0); !errors.Is(err, ErrRejected) {
		t.Errorf("a commit copied to another manifest's cell: %v; want ErrRejected", err)
	}
	var c Commit
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Outputs) == 0 {
		t.Fatal("the commit names no outputs")
	}
	for name := range c.Outputs {
		c.Outputs[name] = "sha256:" + strings.Repeat("b", 64)
	}
	if err := me.Trust.Verify("the commit", c.Signer, c.signed(tHash, 0), c.Signature); err == nil {
		t.Error("a commit whose output digests changed after signing verifies")
	}

	events := encodeEvents(finished(tHash, tKey, "d"))
	name := cellDir(tHash, 0) + "attempts/one/000001.jsonl"
	bucket.PutNew(ctx, name, SignUpload(name, events, key))
	moved := cellDir(tHash, 0) + "attempts/two/000001.jsonl"
	bucket.PutNew(ctx, moved, SignUpload(name, events, key))
	if _, err := me.upload(ctx, name); err != nil {
		t.Fatalf("the upload where it was signed: %v", err)
	}
	if _, err := me.upload(ctx, moved); err == nil {
		t.Error("a signed upload copied to another attempt's path is read")
	}
}

// missingBlob is a bucket that has lost one blob.
type missingBlob struct {
	*artifacts.Memory
	digest string
}

func (m missingBlob) Get(ctx context.Context, ref artifacts.Ref) ([]byte, error) {
	if ref.Digest == m.digest {
		return nil, fmt.Errorf("%w: %s", artifacts.ErrNotFound, ref.Digest)
	}
	return m.Memory.Get(ctx, ref)
}

// TestFailedPullLeavesNothingBehind: a pull that cannot fetch its last
// blob fails naming it, and the store holds none of the blobs it fetched
// before (no event would refer to them); with the blob there, it pulls.
func TestFailedPullLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	plan := parse(t, smallManifest)
	src := openTestStore(t)
	if _, err := (&pipeline.Runner{Log: src.Log, Blobs: src.Blobs, Dir: src.Path, Stages: cellStages(),
		Engines: engines.Set{}}).Run(ctx, plan); err != nil {
		t.Fatal(err)
	}
	bucket, key := artifacts.NewMemory(), testSigner(t, "fleet")
	if _, err := machine(t, bucket, key, key).Push(ctx, src, plan.Hash, io.Discard); err != nil {
		t.Fatal(err)
	}
	evs, err := src.Events.ByManifest(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	refs := pipeline.Referenced(evs)
	dst := openTestStore(t)
	_, err = machine(
		t,
		missingBlob{bucket, refs[len(refs)-1].Digest},
		key,
		key,
	).Pull(ctx, dst, plan.Hash, cellStages(), nil, io.Discard)
	if !errors.Is(err, artifacts.ErrNotFound) ||
		!strings.Contains(err.Error(), fmt.Sprintf("blob %d of %d", len(refs), len(refs))) {
		t.Fatalf("pull without its last blob: %v", err)
	}
	if left, err := dst.Local.List(); err != nil || len(left) != 0 {
		t.Errorf("the failed pull left %d blobs behind (%v)", len(left), err)
	}
	st, err := machine(t, bucket, key, key).Pull(ctx, dst, plan.Hash, cellStages(), nil, io.Discard)
	if err != nil || st.Blobs != len(refs) {
		t.Errorf("pull: %+v %v; want %d blobs", st, err, len(refs))
	}
}

// smallManifest is a sweep of two quadratic cells that run in a second.
const smallManifest = `version: 1
name: small
task: {dataset: quadratic, quadratic: {dim: 50, sigma: 0.1}}
workers: 6
rounds: 40
local_steps: 3
lr: 0.05
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: gt-dsum}]
evaluate: {every: 2}
checkpoint: {every: 10}
`

func parse(t *testing.T, src string) *manifests.Plan {
	t.Helper()
	plan, err := manifests.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func openTestStore(t *testing.T) *pipeline.Store {
	t.Helper()
	s, err := pipeline.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// cellStages are the stages every cell runs, as cmd/ump composes them
// (no device).
func cellStages() []stages.Stage {
	return []stages.Stage{stages.Of(partition.Stage{}), stages.Of(topology.Stage{}),
		stages.Of(train.Stage{Engines: engines.Set{}}), stages.Of(evaluate.Stage{})}
}
