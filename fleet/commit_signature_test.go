package fleet

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/signing"
)

// TestCommitSignatureCoversItsCell: a commit's signature is an ed25519
// signature, by the signer's key, of its statement (version 1), written
// out here by hand: the manifest, the cell's number (its plan index + 1),
// key, attempt, status, events and outputs in order of their names. So a signature of
// cell 3 does not pass for cell 2's statement, nor for another manifest's.
func TestCommitSignatureCoversItsCell(t *testing.T) {
	key := testSigner(t, "alice")
	c := &Commit{Attempt: "host-1-7", Key: "k3", Status: "completed", Outputs: map[string]string{"train/rounds": "sha256:bb", "evaluate/final": "sha256:aa"},
		Events: artifacts.Ref{Digest: "sha256:ee", Size: 42}}
	c.Sign("h0", 2, key)
	pub, err := signing.ParsePublic(c.Signer)
	if err != nil || c.Signer != key.Public() {
		t.Fatalf("signer %q (%v), want %q", c.Signer, err, key.Public())
	}
	sig, err := base64.StdEncoding.DecodeString(c.Signature)
	if err != nil {
		t.Fatal(err)
	}
	statement := func(manifest string, cell int) []byte {
		return fmt.Appendf(nil, "ump commit 1\nmanifest %s\ncell %d\ncell_key k3\nattempt host-1-7\nstatus completed\nevents sha256:ee 42\n"+
			"output evaluate/final sha256:aa\noutput train/rounds sha256:bb\n", manifest, cell)
	}
	if !ed25519.Verify(pub, statement("h0", 3), sig) {
		t.Errorf("the signature of cell index 2 is not one of the statement of cell 3 of manifest h0")
	}
	for _, other := range []struct {
		manifest string
		cell     int
	}{{"h0", 2}, {"h0", 4}, {"h1", 3}} {
		if ed25519.Verify(pub, statement(other.manifest, other.cell), sig) {
			t.Errorf("the signature of cell 3 of h0 passes for cell %d of %s", other.cell, other.manifest)
		}
	}
}
