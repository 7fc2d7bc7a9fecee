package document

import (
	"fmt"

	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
)

// Unsigned is what a report says of results no key vouches for.
const Unsigned = "no: nothing vouches for these results. The digests in " + resultsdir.RecordFile + " catch accidents, not edits: " +
	"whoever edits a file can write its new digest"

// VouchForDir says who vouches for results read from dir: their signer
// when trust holds the key, or no one; a signer not trusted is refused
// (signing.ErrUntrusted), unless trustUnsigned takes the results as
// unsigned.
func VouchForDir(x *resultsdir.Exported, dir string, trust *signing.Trust, trustUnsigned bool) (string, error) {
	switch {
	case x.Signer == "":
		return Unsigned, nil
	case trust.Trusts(x.Signer):
		return "by " + display.Markdown(x.Signer) + ", a key you trust", nil
	case trustUnsigned:
		return "no: signed by " + display.Markdown(x.Signer) + ", a key you do not trust, taken as unsigned (--trust-unsigned)", nil
	}
	return "", fmt.Errorf("%w: %s is signed by %s, a key you do not trust: `ump trust add %s` if it is a collaborator's, "+
		"--trust KEY for this report alone, or --trust-unsigned to take the results as unsigned", signing.ErrUntrusted, dir, x.Signer, x.Signer)
}

// VouchForStore says who vouches for results exported from the user's
// store, of which importedUnsigned cells were pulled with
// --trust-unsigned: no one if any was, else the user's key (nil: none),
// which then signs them (x.Signer).
func VouchForStore(x *resultsdir.Exported, importedUnsigned int, key *signing.Key) string {
	switch {
	case importedUnsigned > 0: // no key vouches for them, the user's neither
		return fmt.Sprintf("unsigned: %d of its cells were pulled with --trust-unsigned, so no key vouches for their results", importedUnsigned)
	case key != nil: // the results come from the user's own store
		x.Signer = key.Public()
		return "by " + display.Markdown(x.Signer) + ", your key: computed in your store, or pulled into it from keys you trust"
	}
	return Unsigned
}

// VouchLaidOut says who vouches for results laid out anew (ump report
// --as) under the manifest named name: no signature covers the new
// files; from says whose results they were.
func VouchLaidOut(x *resultsdir.Exported, name string) string {
	from := "unsigned"
	if x.Signer != "" {
		from = "signed by " + display.Markdown(x.Signer)
	}
	return "no: laid out anew as " + display.Markdown(name) + " (new files, which no signature covers) from results " + from
}
