package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// WriteStatus writes a manifest's cells as the store holds them, a line
// each (committed and by whom, running or interrupted, missing, or a
// commit that does not check) under a count of each; a commit that does
// not check is also an ErrRejected.
func (r *Remote) WriteStatus(ctx context.Context, hash string, w io.Writer) error {
	if _, err := r.pinned(ctx, hash); errors.Is(err, artifacts.ErrNotFound) {
		if ok, err := r.writeSubmitted(ctx, hash, w); ok || err != nil {
			return err
		}
	}
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
			lines = append(
				lines,
				fmt.Sprintf("cell %d/%d %s: its commit is refused: %s", i+1, len(cells), cell.LabelString(), c.Refused),
			)
		case c.Commit != nil:
			counts[c.Commit.Status]++
			lines = append(
				lines,
				fmt.Sprintf(
					"cell %d/%d %s: %s, committed by %s, signed by %s",
					i+1,
					len(cells),
					cell.LabelString(),
					c.Commit.Status,
					c.Commit.Attempt,
					keyName(c.Commit.Signer),
				),
			)
		case c.Attempts > 0:
			counts["running"]++
			lines = append(
				lines,
				fmt.Sprintf(
					"cell %d/%d %s: running or interrupted (%d attempts), round %d/%d reached, last upload %s",
					i+1,
					len(cells),
					cell.LabelString(),
					c.Attempts,
					c.Round,
					cell.Config.Rounds,
					c.Uploaded.Format(time.RFC3339),
				),
			)
		default:
			counts["missing"]++
			lines = append(lines, fmt.Sprintf("cell %d/%d %s: missing", i+1, len(cells), cell.LabelString()))
		}
		for _, u := range c.Unreadable {
			lines = append(
				lines,
				fmt.Sprintf("cell %d/%d: an attempt's upload does not check (skipped): %s", i+1, len(cells), u),
			)
		}
	}
	fmt.Fprintf(
		w,
		"%.12s  %-24s %d cells on %s: %d completed, %d diverged committed, %d running or interrupted, %d missing",
		hash,
		reg.Plan.Manifest.Name,
		len(cells),
		r.Bucket,
		counts[eventlog.Completed],
		counts[eventlog.Diverged],
		counts["running"],
		counts["missing"],
	)
	if counts["refused"] > 0 {
		fmt.Fprintf(w, ", %d with a commit refused", counts["refused"])
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	if counts["refused"] > 0 {
		return fmt.Errorf(
			"%w: %d commits on %s do not check (listed above); pull refuses the manifest until they do",
			ErrRejected,
			counts["refused"],
			r.Bucket,
		)
	}
	return nil
}

// writeSubmitted writes, for a manifest that no machine has registered
// yet, the submitted runs of it (`ump submit` stores only the worklist; the
// first worker registers the manifest), and whether there are any.
func (r *Remote) writeSubmitted(ctx context.Context, hash string, w io.Writer) (bool, error) {
	names, err := r.Bucket.List(ctx, "runs/")
	if err != nil {
		return false, err
	}
	var runs []string
	var plan *manifests.Plan
	for _, name := range names {
		run, ok := strings.CutSuffix(strings.TrimPrefix(name, "runs/"), ".json")
		if !ok {
			continue
		}
		wl, err := r.Worklist(ctx, run)
		if err != nil {
			return false, err
		}
		if wl.Plan.Hash == hash {
			runs, plan = append(runs, run[:12]), &wl.Plan
		}
	}
	if plan == nil {
		return false, nil
	}
	fmt.Fprintf(w, "%.12s  %-24s %d cells on %s: submitted (run %s), no machine has started a cell yet\n",
		hash, plan.Manifest.Name, len(plan.Cells), r.Bucket, strings.Join(runs, ", "))
	return true, nil
}

// keyName is a public key NAME:BASE64 cut short (NAME and the first 8
// digits), or "nobody" for an unsigned commit.
func keyName(public string) string {
	if public == "" {
		return "nobody (unsigned)"
	}
	return public[:min(len(public), strings.IndexByte(public, ':')+9)] + "…"
}
