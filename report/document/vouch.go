package document

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// Unsigned is what a report says of results no key vouches for.
const Unsigned = "no: nothing vouches for these results. The digests in " + resultsdir.RecordFile + " catch " +
	"accidents, not edits: " +
	"whoever edits a file can write its new digest"

// TrustedSigner says who vouches for results read from dir: their signer
// when trust holds the key, or no one. A report only reads results, so a
// signer not trusted is reported as such, as unsigned results are; what
// brings results into a store (import, pull) refuses it.
func TrustedSigner(x *resultsdir.Exported, dir string, trust *signing.Trust) (string, error) {
	switch {
	case x.Signer == "":
		return vouchPerCell(x, dir, trust)
	case trust.Trusts(x.Signer):
		return "by " + display.Markdown(x.Signer) + ", a key you trust", nil
	}
	return "no: signed by " + display.Markdown(x.Signer) + ", a key you do not " +
		"trust (`ump trust add " + x.Signer + "` if it is a collaborator's)", nil
}

// VouchForStore says who vouches for results exported from the user's
// store, of which importedUnsigned cells were pulled with
// --trust-unsigned: no one if any was, else the user's key (nil: none),
// which then signs them (x.Signer).
func VouchForStore(x *resultsdir.Exported, importedUnsigned int, key *signing.Key) string {
	switch {
	case importedUnsigned > 0: // no key vouches for them, the user's neither
		return fmt.Sprintf(
			"unsigned: %d of its cells were pulled with --trust-unsigned, so no key vouches for their results",
			importedUnsigned,
		)
	case key != nil: // the results come from the user's own store
		x.SignCells(key)
		if others := x.ImportedSigners(key); len(others) > 0 {
			own := x.Final.Rows()
			for _, n := range others {
				own -= n
			}
			text := "per cell, in " + resultsdir.CellsFile + ": " + importedBy(others)
			if own > 0 {
				text += fmt.Sprintf("; %d computed in your store, signed by %s, your key",
					own, display.Markdown(key.Public()))
			}
			return text
		}
		x.Signer = key.Public()
		return "by " + display.Markdown(
			x.Signer,
		) + ", your key: computed in your store, or pulled into it from keys you trust"
	}
	return Unsigned
}

// importedBy says how many cells each key signed that came from results
// directories (ump import).
func importedBy(signers map[string]int) string {
	var parts []string
	for _, key := range slices.Sorted(maps.Keys(signers)) {
		parts = append(parts, fmt.Sprintf("%d cells imported from results directories signed by %s",
			signers[key], display.Markdown(key)))
	}
	return strings.Join(parts, "; ")
}

// VouchLaidOut says who vouches for results laid out anew (ump report
// --as) under the manifest named name: no signature covers the new
// files; from says whose results they were.
func VouchLaidOut(x *resultsdir.Exported, name string) string {
	from := "unsigned"
	if x.Signer != "" {
		from = "signed by " + display.Markdown(x.Signer)
	}
	return "no: laid out anew as " + display.Markdown(
		name,
	) + " (new files, which no signature covers) from results " + from
}

// vouchPerCell says who vouches for the cells of a directory whose record
// no one signed: each cell's own signature (resultsdir.CellsFile), which
// must verify, by a key of trust or not; Unsigned where no cell is signed,
// or the directory carries no cells.
func vouchPerCell(x *resultsdir.Exported, dir string, trust *signing.Trust) (string, error) {
	cells, err := x.Cells()
	if errors.Is(err, resultsdir.ErrNoCells) {
		return Unsigned, nil
	}
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	for _, c := range cells {
		if c.Signer == "" && c.Signature == "" {
			count[""]++
			continue
		}
		if !signing.Verifies(c.Signer, c.Signed(), c.Signature) {
			return "", fmt.Errorf("%w: %s: cell %d carries a signature by %s that does not verify: "+
				"it was changed after signing",
				state.ErrBadArgument, filepath.Join(dir, resultsdir.CellsFile), c.Cell, display.Terminal(c.Signer))
		}
		count[c.Signer]++
	}
	if count[""] == len(cells) {
		return Unsigned, nil
	}
	var parts []string
	for _, key := range slices.Sorted(maps.Keys(count)) {
		switch {
		case key == "":
			parts = append(parts, fmt.Sprintf("%d unsigned", count[key]))
		case trust.Trusts(key):
			parts = append(parts, fmt.Sprintf("%d by %s, a key you trust", count[key], display.Markdown(key)))
		default:
			parts = append(parts, fmt.Sprintf("%d by %s, a key you do not trust", count[key], display.Markdown(key)))
		}
	}
	return "per cell, in " + resultsdir.CellsFile + ": " + strings.Join(parts, "; "), nil
}
