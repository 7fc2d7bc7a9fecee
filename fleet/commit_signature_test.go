package fleet

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// TestCommitSignatureCoversItsCell: a commit's signature is an ed25519
// signature, by the signer's key, of its statement (version 2), written
// out here by hand: the manifest, the cell's number (its plan index + 1),
// key, attempt, status, events, outputs in order of their names, and its
// time. So a signature of cell 3 does not pass for cell 2's statement,
// nor for another manifest's, nor for another time.
func TestCommitSignatureCoversItsCell(t *testing.T) {
	key := testSigner(t, "alice")
	c := &Commit{
		Attempt: "host-1-7",
		Key:     "k3",
		Status:  "completed",
		Outputs: map[string]string{"train/rounds": "sha256:bb", "evaluate/final": "sha256:aa"},
		Events:  artifacts.Ref{Digest: "sha256:ee", Size: 42},
		Time:    time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC),
	}
	c.Sign("h0", 2, key)
	pub, err := signing.ParsePublic(c.Signer)
	if err != nil || c.Signer != key.Public() {
		t.Fatalf("signer %q (%v), want %q", c.Signer, err, key.Public())
	}
	sig, err := base64.StdEncoding.DecodeString(c.Signature)
	if err != nil {
		t.Fatal(err)
	}
	statement := func(manifest string, cell int, at string) []byte {
		return fmt.Appendf(
			nil,
			"ump commit 2\nmanifest %s\ncell %d\ncell_key k3\nattempt host-1-7\nstatus completed\nevents sha256:ee "+
				"42\n"+
				"output evaluate/final sha256:aa\noutput train/rounds sha256:bb\ntime %s\n",
			manifest,
			cell,
			at,
		)
	}
	const at = "2026-11-28T01:02:03.000000004Z"
	if !ed25519.Verify(pub, statement("h0", 3, at), sig) {
		t.Errorf("the signature of cell index 2 is not one of the statement of cell 3 of manifest h0 at %s", at)
	}
	for _, other := range []struct {
		manifest string
		cell     int
		at       string
	}{{"h0", 2, at}, {"h0", 4, at}, {"h1", 3, at}, {"h0", 3, "2026-11-28T01:02:03Z"}} {
		if ed25519.Verify(pub, statement(other.manifest, other.cell, other.at), sig) {
			t.Errorf(
				"the signature of cell 3 of h0 at %s passes for cell %d of %s at %s",
				at,
				other.cell,
				other.manifest,
				other.at,
			)
		}
	}
}

// TestCommitTimeIsSigned: a commit whose time was edited on S3 is refused
// (ErrRejected: its signature does not verify); a commit signed by an ump
// from before commits signed their time (version 1) is still taken.
func TestCommitTimeIsSigned(t *testing.T) {
	ctx := context.Background()
	bucket := artifacts.NewMemory()
	key := testSigner(t, "mine")
	me := machine(t, bucket, key, key)
	c, err := me.Commit(ctx, tHash, 0, tKey, eventlog.Completed, finished(tHash, tKey, "a"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(c Commit) (*Commit, error) { // c as the only commit.json of another bucket
		data, _ := json.Marshal(c)
		other := artifacts.NewMemory()
		if err := other.PutNew(ctx, commitName(tHash, 0), data); err != nil {
			t.Fatal(err)
		}
		return machine(t, other, key, key).commit(ctx, tHash, 0)
	}
	if _, err := read(*c); err != nil {
		t.Fatalf("the commit as written: %v", err)
	}
	edited := *c
	edited.Time = c.Time.Add(-24 * time.Hour)
	if _, err := read(edited); !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a commit with its time edited: %v; want ErrRejected, its signature does not verify", err)
	}
	old := edited
	old.Signature = key.Sign(old.signedV1(tHash, 0))
	if got, err := read(old); err != nil || !got.Time.Equal(old.Time) {
		t.Errorf("a version 1 commit: %+v, %v; want it taken", got, err)
	}
}

// TestRemoteStatusRefusesACommitOfAnotherKey: a commit, signed and
// trusted, that names a cell key other than the registration's for its
// cell is reported refused by RemoteStatus, naming both keys; the cell's
// own commit is taken.
func TestRemoteStatusRefusesACommitOfAnotherKey(t *testing.T) {
	ctx := context.Background()
	bucket := artifacts.NewMemory()
	key := testSigner(t, "fleet")
	me := machine(t, bucket, key, key)
	plan := parse(t, smallManifest)
	reg := &state.Registration{Plan: *plan}
	for i := range plan.Cells {
		reg.CellKeys = append(reg.CellKeys, fmt.Sprintf("k%063d", i))
	}
	ev := reg.Event()
	if err := me.Pin(ctx, ev, reg, make([]string, len(plan.Cells))); err != nil {
		t.Fatal(err)
	}
	other := fmt.Sprintf("x%063d", 0)
	for i, k := range []string{reg.CellKeys[0], other} {
		if _, err := me.Commit(ctx, plan.Hash, i, k, eventlog.Completed, finished(plan.Hash, k, "a")); err != nil {
			t.Fatal(err)
		}
	}
	_, cells, err := me.RemoteStatus(ctx, plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if cells[0].Commit == nil || cells[0].Refused != "" {
		t.Errorf("the cell's own commit: %+v", cells[0])
	}
	if want := fmt.Sprintf("it names cell key %.12s, the registration %.12s", other,
		reg.CellKeys[1]); cells[1].Commit != nil ||
		cells[1].Refused != want {
		t.Errorf(
			"a commit of another cell key: commit %v, refused %q; want %q",
			cells[1].Commit,
			cells[1].Refused,
			want,
		)
	}
}
