package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/stages/train"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "list the store's manifests and their cells' status; during a run, show its progress",
		ArgsUsage: "[HASH]",
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return badInput{fmt.Errorf("status takes at most one argument, a manifest hash")}
			}
			return runStatus(c.Context, globalsOf(c), c.Args().First(), c.App.Writer)
		},
	}
}

func runStatus(ctx context.Context, g globals, hash string, w io.Writer) error {
	g.artifacts, g.notes = "", nil // status reads only the event log, and says itself who holds the store
	store, err := openStore(ctx, g, "ump status", true)
	if errors.Is(err, pipeline.ErrBusy) {
		// The holder publishes no events (an older ump): show its snapshot.
		snap, serr := pipeline.ReadSnapshot(g.store)
		if pid, _ := pipeline.Holder(g.store); serr != nil || snap.PID != pid {
			return err
		}
		printSnapshot(w, snap)
		return nil
	}
	if err != nil {
		return err
	}
	defer store.Close()
	if store.Beside == "" && store.Note != "" {
		fmt.Fprintln(w, store.Note)
	}
	if store.Beside != "" {
		// The holder may be a run (it publishes a snapshot) or a short
		// command such as gc (it does not).
		snap, serr := pipeline.ReadSnapshot(g.store)
		if pid, _ := pipeline.Holder(g.store); serr == nil && snap.PID == pid {
			printSnapshot(w, snap)
		} else {
			fmt.Fprintf(w, "store in use by %s\n", store.Beside)
		}
	}
	if hash == "" {
		regs, err := store.Manifests()
		if err != nil {
			return err
		}
		if len(regs) == 0 {
			fmt.Fprintf(w, "store %s holds no manifests yet\n", g.store)
		}
		for i := range regs {
			rep, err := store.Report(&regs[i])
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s  %-24s %s\n", regs[i].Plan.Hash[:12], regs[i].Plan.Manifest.Name, countLine(rep))
		}
		return nil
	}
	reg, err := findManifest(store, hash)
	if err != nil {
		return err
	}
	rep, err := store.Report(reg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", reg.Plan.Hash, reg.Plan.Manifest.Name, countLine(rep))
	for i, cell := range rep.Cells {
		fmt.Fprintf(w, "  cell %d  %-11s %s\n", i+1, cell.Status, reg.Plan.Cells[i].LabelString())
	}
	return nil
}

func countLine(rep *pipeline.Report) string {
	c := rep.Counts()
	return fmt.Sprintf("%d cells: %d completed, %d diverged, %d failed, %d incomplete, %d pending",
		len(rep.Cells), c[pipeline.Completed], c[pipeline.Diverged], c[pipeline.Failed], c[pipeline.Incomplete], c[pipeline.Pending])
}

func printSnapshot(w io.Writer, s *pipeline.Snapshot) {
	fmt.Fprintf(w, "run %s by PID %d: manifest %s (%s)\n", s.State, s.PID, s.Manifest, s.Name)
	fmt.Fprintf(w, "  cells done %d/%d; cell %d %s", s.CellsDone, s.Cells, s.Cell, s.Label)
	if s.Stage != "" {
		fmt.Fprintf(w, ", stage %s", s.Stage)
	}
	if s.Stage == train.Name {
		fmt.Fprintf(w, " round %d/%d", s.Round, s.Rounds)
	}
	fmt.Fprintln(w)
	if s.ETASeconds > 0 {
		fmt.Fprintf(w, "  ETA %s\n", (time.Duration(s.ETASeconds) * time.Second).Round(time.Second))
	}
	fmt.Fprintf(w, "  updated %s (started %s)\n", s.Updated.Format(time.RFC3339), s.Started.Format(time.RFC3339))
}
