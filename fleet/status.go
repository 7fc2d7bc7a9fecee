package fleet

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ump-lab/ump/eventlog"
)

// WriteStatus writes a manifest's cells as the store holds them, a line
// each (committed and by whom, running or interrupted, missing, or a
// commit that does not check) under a count of each; a commit that does
// not check is also an ErrRejected.
func (r *Remote) WriteStatus(ctx context.Context, hash string, w io.Writer) error {
	reg, cells, err := r.RemoteStatus(ctx, hash)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	var lines []string
	for i, c := range cells {
		cell := &reg.Plan.Cells[i]
		switch {
		case c.Refused != "":
			counts["refused"]++
			lines = append(lines, fmt.Sprintf("cell %d/%d %s: its commit is refused: %s", i+1, len(cells), cell.LabelString(), c.Refused))
		case c.Commit != nil:
			counts[c.Commit.Status]++
			lines = append(lines, fmt.Sprintf("cell %d/%d %s: %s, committed by %s, signed by %s", i+1, len(cells), cell.LabelString(), c.Commit.Status, c.Commit.Attempt, keyName(c.Commit.Signer)))
		case c.Attempts > 0:
			counts["running"]++
			lines = append(lines, fmt.Sprintf("cell %d/%d %s: running or interrupted (%d attempts), round %d/%d reached, last upload %s",
				i+1, len(cells), cell.LabelString(), c.Attempts, c.Round, cell.Config.Rounds, c.Uploaded.Format(time.RFC3339)))
		default:
			counts["missing"]++
			lines = append(lines, fmt.Sprintf("cell %d/%d %s: missing", i+1, len(cells), cell.LabelString()))
		}
		for _, u := range c.Unreadable {
			lines = append(lines, fmt.Sprintf("cell %d/%d: an attempt's upload does not check (skipped): %s", i+1, len(cells), u))
		}
	}
	fmt.Fprintf(w, "%.12s  %-24s %d cells on %s: %d completed, %d diverged committed, %d running or interrupted, %d missing",
		hash, reg.Plan.Manifest.Name, len(cells), r.Bucket, counts[eventlog.Completed], counts[eventlog.Diverged], counts["running"], counts["missing"])
	if counts["refused"] > 0 {
		fmt.Fprintf(w, ", %d with a commit refused", counts["refused"])
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	if counts["refused"] > 0 {
		return fmt.Errorf("%w: %d commits on %s do not check (listed above); pull refuses the manifest until they do", ErrRejected, counts["refused"], r.Bucket)
	}
	return nil
}

// keyName is a public key NAME:BASE64 cut short (NAME and the first 8
// digits), or "nobody" for an unsigned commit.
func keyName(public string) string {
	if public == "" {
		return "nobody (unsigned)"
	}
	return public[:min(len(public), strings.IndexByte(public, ':')+9)] + "…"
}
