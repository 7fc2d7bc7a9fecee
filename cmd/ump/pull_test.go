package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
)

// TestPullTakesOnlyTheManifestsOwnEvents pushes two manifests, then
// tampers with one's first commit and the events it names: a forged result
// for the other manifest's cell, an event of another manifest, a malformed
// payload (each signed again with the trusted key, as a buggy client
// would), a commit signed by a key the store does not trust, a valid
// signature over changed fields, no signature.
// Each pull is refused (exit 3) with nothing imported and the other
// manifest's table unchanged; the untampered commit pulls (in chunks: over
// 2,000 events), twice without change, and `ump show` names its signer.
// An unsigned commit pulls only with --trust-unsigned, and its results
// serve no other manifest.
func TestPullTakesOnlyTheManifestsOwnEvents(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	big := writeFile(t, "big.yaml", strings.NewReplacer(
		"dim: 30000",
		"dim: 10",
		"rounds: 120",
		"rounds: 400",
		"seed: [1, 2]",
		"seed: [1, 2, 3, 4, 5, 6]",
		"checkpoint: {every: 10}",
		"checkpoint: {every: 100}",
		"evaluate: {every: 3}",
		"evaluate: {every: 1}",
	).Replace(longManifest))
	other := writeFile(t, "other.yaml", strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1))
	mine := t.TempDir()
	bigHash, otherHash := hashOf(t, ump(t, mine, "run", big)), hashOf(t, ump(t, mine, "run", other))
	for _, h := range []string{bigHash, otherHash} {
		if r := umpEnv(t, env, mine, "--s3-insecure", "push", h); r.code != 0 {
			t.Fatalf("push: %s", r.stderr)
		}
	}
	// The first cell's commit, and the events it names.
	name := "manifests/" + bigHash + "/cells/00001/commit.json"
	committed, err := s3.GetNamed(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var commit fleet.Commit
	if err := json.Unmarshal(committed, &commit); err != nil {
		t.Fatal(err)
	}
	pushed, err := s3.Get(context.Background(), commit.Events)
	if err != nil {
		t.Fatal(err)
	}

	theirs := t.TempDir()
	if r := umpEnv(t, env, theirs, "--s3-insecure", "pull", otherHash); r.code != 0 {
		t.Fatalf("pull: %s", r.stderr)
	}
	table := ump(t, theirs, "table", otherHash).stdout

	// A StageCompleted of the other manifest's evaluate stage with other
	// outputs, filed under the big manifest.
	s, err := pipeline.OpenReader(mine)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events.ByManifest(otherHash)
	bigEvs, _ := s.Events.ByManifest(bigHash)
	s.Close()
	if len(bigEvs) < 2000 {
		t.Fatalf("the big manifest has %d events; the test needs over 2,000", len(bigEvs))
	}
	var forged eventlog.Event
	for _, ev := range evs {
		if ev.Kind == eventlog.StageCompleted && ev.Stage == "evaluate" {
			forged = ev
		}
	}
	forged.Manifest = bigHash
	for k := range forged.Outputs {
		forged.Outputs[k], _ = s3.Put(context.Background(), []byte("a forged result"))
	}
	line, _ := json.Marshal(forged)
	other2 := forged
	other2.Manifest = otherHash
	line2, _ := json.Marshal(other2)
	poison := forged // filed under a cell of the big manifest, with the other's stage key
	poison.Cell = bigEvs[len(bigEvs)-1].Cell
	line3, _ := json.Marshal(poison)
	// The cell's first CellStarted recording other inputs than its key's.
	otherInputs := func(events []byte) []byte {
		lines := bytes.Split(events, []byte("\n"))
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"kind":"CellStarted"`)) {
				lines[i] = bytes.Replace(l, []byte(`"inputs":"`), []byte(`"inputs":"other `), 1)
				break
			}
		}
		return bytes.Join(lines, []byte("\n"))
	}
	poison2 := forged // in the commit's own cell, with the other's stage key, the commit re-digested to match
	poison2.Cell = commit.Key
	line4, _ := json.Marshal(poison2)
	redigested := maps.Clone(commit.Outputs)
	for k, ref := range poison2.Outputs {
		redigested["evaluate/"+k] = ref.Digest
	}
	contradicting := maps.Clone(commit.Outputs)
	for k := range contradicting {
		contradicting[k] = "sha256:" + strings.Repeat("1", 64)
		break
	}
	stranger, _, err := signing.LoadOrCreate(filepath.Join(t.TempDir(), "stranger"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := []struct {
		name, add, want string
		edit            func([]byte) []byte
		outputs         map[string]string // the forged commit's, when set
		status          string            // the forged commit's, when set
		sign            func(*fleet.Commit)
	}{
		{name: "a forged result for another manifest's cell", add: string(line), want: "is not a cell of the manifest"},
		{name: "an event of another manifest", add: string(line2), want: "belongs to manifest"},
		{name: "another cell's event in its events", add: string(line3), want: "not its own cell's"},
		{
			name:    "another manifest's stage key in its own cell, the commit re-digested",
			add:     string(line4),
			want:    "does not follow from the cell's spec",
			outputs: redigested,
		},
		{
			name: "a malformed payload",
			add:  `{"kind":"ManifestRegistered","manifest":"` + bigHash + `","payload":5}`,
			want: "cannot unmarshal",
		},
		{name: "an unknown kind", add: `{"kind":"Surprise","manifest":"` + bigHash + `"}`, want: "unknown event kind"},
		{name: "a cell's inputs changed", want: "does not follow from its spec and inputs", edit: otherInputs},
		{
			name:    "commit outputs its events do not record",
			want:    "it records outputs",
			edit:    bytes.Clone,
			outputs: contradicting,
		},
		{
			name:   "a commit flipped to diverged",
			want:   "its status is diverged, its events say completed",
			edit:   bytes.Clone,
			status: eventlog.Diverged,
		},
		{
			name: "a commit signed by an untrusted key",
			want: "is signed by " + stranger.Public() + ", a key this store does not trust",
			edit: bytes.Clone,
			sign: func(c *fleet.Commit) { c.Sign(bigHash, 0, stranger) },
		},
		{
			name:   "a commit flipped to diverged after signing",
			want:   "that does not verify: it was changed after signing",
			edit:   bytes.Clone,
			status: eventlog.Diverged,
			sign:   func(c *fleet.Commit) {},
		},
		{name: "a trusted signature over another cell", want: "that does not verify", edit: bytes.Clone,
			sign: func(c *fleet.Commit) { c.Sign(bigHash, 1, testKey(t)) }},
		{name: "an unsigned commit", want: "is not signed", edit: bytes.Clone,
			sign: func(c *fleet.Commit) { c.Signer, c.Signature = "", "" }},
	}
	for _, tc := range tampered {
		// Whoever can write the bucket can replace a commit.
		forgedCommit := commit
		var err error
		events := append(bytes.Clone(pushed), []byte(tc.add+"\n")...)
		if tc.edit != nil {
			events = tc.edit(bytes.Clone(pushed))
		}
		if tc.outputs != nil {
			forgedCommit.Outputs = tc.outputs
		}
		if tc.status != "" {
			forgedCommit.Status = tc.status
		}
		if bytes.Equal(events, pushed) && tc.outputs == nil && tc.status == "" && tc.sign == nil {
			t.Fatalf("tampering with %s changed nothing", tc.name)
		}
		if forgedCommit.Events, err = s3.Put(context.Background(), events); err != nil {
			t.Fatal(err)
		}
		if tc.sign != nil {
			tc.sign(&forgedCommit)
		} else { // a buggy client with a trusted key
			forgedCommit.Sign(bigHash, 0, testKey(t))
		}
		data, _ := json.Marshal(forgedCommit)
		if err := s3.PutNamed(context.Background(), name, data); err != nil {
			t.Fatal(err)
		}
		r := umpEnv(t, env, theirs, "--s3-insecure", "pull", bigHash)
		if r.code != 3 || !strings.Contains(r.stderr, "pushed events rejected") ||
			!strings.Contains(r.stderr, tc.want) {
			t.Errorf("pull with %s: exit %d %q; want 3 naming %q", tc.name, r.code, r.stderr, tc.want)
		}
		if st := ump(t, theirs, "status"); strings.Contains(st.stdout, bigHash[:12]) {
			t.Errorf("pull with %s registered the manifest", tc.name)
		}
		if got := ump(t, theirs, "table", otherHash).stdout; got != table {
			t.Errorf("pull with %s changed the other manifest's table:\n%s\nwas\n%s", tc.name, got, table)
		}
	}

	// Pushed before signing (cell 1's commit): imported only when told, and
	// then for this manifest alone. The other manifest, renamed (same
	// cells), is run in that store: nothing of the unsigned pull is a cache
	// hit or a checkpoint for it.
	otherName := "manifests/" + otherHash + "/cells/00001/commit.json"
	otherCommitted, _ := s3.GetNamed(context.Background(), otherName)
	var unsigned fleet.Commit
	json.Unmarshal(otherCommitted, &unsigned)
	unsigned.Signer, unsigned.Signature = "", ""
	data, _ := json.Marshal(unsigned)
	s3.PutNamed(context.Background(), otherName, data)
	third := t.TempDir()
	if r := umpEnv(t, env, third, "--s3-insecure", "pull", otherHash); r.code != 3 ||
		!strings.Contains(r.stderr, "--trust-unsigned") {
		t.Errorf("pull of an unsigned commit: exit %d; want 3 pointing at --trust-unsigned\n%s", r.code, r.stderr)
	}
	if r := umpEnv(t, env, third, "--s3-insecure", "pull", "--trust-unsigned", otherHash); r.code != 0 {
		t.Fatalf("pull --trust-unsigned: exit %d\n%s", r.code, r.stderr)
	}
	if show := ump(t, third, "show", otherHash).stdout; !strings.Contains(
		show,
		"unsigned (taken with --trust-unsigned",
	) {
		t.Errorf("show after pull --trust-unsigned does not say the cell is unsigned:\n%s", show)
	}
	// Reported by a user with a key, results pulled unsigned stay unsigned:
	// the user's key does not vouch for them, in the record or report.md.
	reported := filepath.Join(t.TempDir(), "report")
	if r := umpEnv(t, env, third, "--s3-insecure", "report", otherHash[:12], "--out", reported); r.code != 0 {
		t.Fatalf("report after pull --trust-unsigned: exit %d\n%s", r.code, r.stderr)
	}
	records, _ := filepath.Glob(filepath.Join(reported, "*-"+otherHash[:12], "record.json"))
	md, _ := os.ReadFile(filepath.Join(reported, "report.md"))
	if len(records) != 1 {
		t.Fatalf("report after pull --trust-unsigned wrote %v", records)
	}
	if record, _ := os.ReadFile(records[0]); strings.Contains(string(record), "signature") ||
		strings.Contains(string(md), "your key") ||
		!strings.Contains(
			string(md),
			"1 of its cells were pulled with --trust-unsigned, so no key vouches for their results",
		) {
		t.Errorf("results pulled unsigned come out vouched for by the user's key:\n%s\n%s", record, md)
	}
	renamed := writeFile(
		t,
		"renamed.yaml",
		strings.Replace(strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1), "name: long", "name: renamed", 1),
	)
	// (Cell 2's commit is signed: it is a cache hit; cell 1 trains anew.)
	if r := ump(t, third, "run", renamed); r.code != 0 || !strings.Contains(r.stderr, "(1 fully cached)") ||
		strings.Contains(r.stderr, "resuming") {
		t.Errorf(
			"a manifest sharing the unsigned pull's cells: exit %d; want cell 1 computed from scratch, cell 2 "+
				"cached\n%s",
			r.code,
			r.stderr,
		)
	}
	s3.PutNamed(context.Background(), otherName, otherCommitted)
	if r := ump(t, theirs, "run", renamed); r.code != 0 || !strings.Contains(r.stderr, "(2 fully cached)") {
		t.Errorf(
			"the same manifest in the store that pulled signed commits: exit %d; want every cell cached\n%s",
			r.code,
			r.stderr,
		)
	}

	s3.PutNamed(context.Background(), name, committed)
	pull := umpEnv(t, env, theirs, "--s3-insecure", "pull", bigHash)
	if pull.code != 0 || !strings.Contains(pull.stdout, "pulled manifest") {
		t.Fatalf("pull of over 2,000 events: exit %d\n%s", pull.code, pull.stderr)
	}
	if show := ump(t, theirs, "show", bigHash).stdout; !strings.Contains(show, "imported from s3://team/ump") ||
		!strings.Contains(show, "signed by "+testKey(t).Public()) {
		t.Errorf("show after a pull does not say where the cells came from and who signed them:\n%s", show)
	}
	if again := umpEnv(t, env, theirs, "--s3-insecure", "pull", bigHash); !strings.Contains(
		again.stdout,
		"0 new events",
	) {
		t.Errorf("second pull: %s", again.stdout)
	}
	if a, b := exportCSV(t, mine, bigHash, "rounds"), exportCSV(t, theirs, bigHash, "rounds"); a != b {
		t.Error("the rounds export differs after the pull")
	}
	if r := ump(t, theirs, "verify", otherHash); r.code != 0 {
		t.Errorf("verify of the other manifest after the refused pulls: exit %d\n%s", r.code, r.stdout)
	}
}

// TestPushReplacesADamagedRemoteCopy: a remote blob with the right size
// and the wrong bytes is uploaded again by the next push.
func TestPushReplacesADamagedRemoteCopy(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	if r := umpEnv(t, env, store, "--s3-insecure", "push", hash); r.code != 0 {
		t.Fatalf("push: %s", r.stderr)
	}
	blobs, _ := filepath.Glob(filepath.Join(store, "blobs", "sha256", "*", "*"))
	good, _ := os.ReadFile(blobs[0])
	key := "sha256/" + filepath.Base(filepath.Dir(blobs[0])) + "/" + filepath.Base(blobs[0])
	s3.PutNamed(context.Background(), key, bytes.Repeat([]byte{'x'}, len(good)))
	r := umpEnv(t, env, store, "--s3-insecure", "push", hash)
	if r.code != 0 || !strings.Contains(r.stdout, "1 blobs uploaded (1 of them replacing a damaged copy)") {
		t.Errorf("push over a damaged copy: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got, err := s3.GetNamed(context.Background(), key); err != nil || !bytes.Equal(got, good) {
		t.Errorf("the damaged copy was not replaced: %v", err)
	}
}

// TestPullOfAnIndexFromBeforeCommits: a manifest an old ump pushed as one
// manifests/<hash>.events.jsonl (no commits, no signatures) is refused
// (exit 3, naming --trust-unsigned, nothing imported) and imported with
// --trust-unsigned, its cells marked unsigned.
func TestPullOfAnIndexFromBeforeCommits(t *testing.T) {
	t.Parallel()
	srv, env, _ := startS3(t)
	old, err := artifacts.OpenS3(context.Background(), artifacts.S3Config{URL: "s3://team/old", Endpoint: srv.Endpoint,
		AccessKey: srv.Access, SecretKey: srv.Secret, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "UMP_ARTIFACTS=s3://team/old")
	mine := t.TempDir()
	hash := hashOf(t, ump(t, mine, "run", writeFile(t, "m.yaml", smallManifest)))
	s, err := pipeline.OpenReader(mine)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events.ByManifest(hash)
	var index bytes.Buffer
	for _, ev := range evs {
		line, _ := json.Marshal(ev)
		index.Write(append(line, '\n'))
		for _, ref := range ev.Outputs {
			data, err := s.Blobs.Get(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := old.Put(context.Background(), data); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	if err := old.PutNamed(context.Background(), "manifests/"+hash+".events.jsonl", index.Bytes()); err != nil {
		t.Fatal(err)
	}
	theirs := t.TempDir()
	if r := umpEnv(t, env, theirs, "--s3-insecure", "pull", hash); r.code != 3 ||
		!strings.Contains(r.stderr, "is not signed") ||
		!strings.Contains(r.stderr, "--trust-unsigned") {
		t.Errorf("pull of an old index: exit %d; want 3 naming --trust-unsigned\n%s", r.code, r.stderr)
	}
	if st := ump(t, theirs, "status").stdout; strings.Contains(st, hash[:12]) {
		t.Errorf("the refused pull registered the manifest:\n%s", st)
	}
	if r := umpEnv(t, env, theirs, "--s3-insecure", "pull", "--trust-unsigned", hash); r.code != 0 {
		t.Fatalf("pull --trust-unsigned of an old index: exit %d\n%s", r.code, r.stderr)
	}
	if a, b := exportCSV(t, mine, hash, "rounds"), exportCSV(t, theirs, hash, "rounds"); a != b {
		t.Error("the rounds export differs after pulling the old index")
	}
	if show := ump(t, theirs, "show", hash).stdout; strings.Count(
		show,
		"committed by (pushed as one file), unsigned (taken with --trust-unsigned",
	) != 2 {
		t.Errorf("show does not mark both cells unsigned:\n%s", show)
	}
}
