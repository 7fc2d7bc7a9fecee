package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/report"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "list the store's manifests and their cells' status; during a run, show its progress",
		ArgsUsage: "[HASH]",
		Flags: []cli.Flag{
			&cli.BoolFlag{
				Name: "remote",
				Usage: "list what the S3 store of --artifacts holds of manifest HASH (the full hash): " +
					"each cell committed, in progress on some machine, or missing; nothing is pulled",
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return badInput{fmt.Errorf("status takes at most one argument, a manifest hash")}
			}
			if c.Bool("remote") {
				return runRemoteStatus(c.Context, globalsOf(c), c.Args().First(), c.App.Writer)
			}
			return runStatus(c.Context, globalsOf(c), c.Args().First(), c.App.Writer)
		},
	}
}

func runStatus(ctx context.Context, g globals, hash string, w io.Writer) error {
	g.artifacts, g.notes = "", nil // status reads only the event log, and says itself who holds the store
	store, err := openStore(ctx, g, "ump status", true)
	if errors.Is(err, eventlog.ErrBusy) {
		// The holder publishes no events (an older ump): show its snapshot.
		snap, serr := eventlog.ReadSnapshot(g.store)
		if pid, _ := eventlog.Holder(g.store); serr != nil || snap.PID != pid {
			return err
		}
		report.WriteSnapshot(w, snap)
		return nil
	}
	if err != nil {
		return err
	}
	defer store.Close()
	if store.Beside == "" && store.Note != "" {
		fmt.Fprintln(w, g.hinted(store.Note))
	}
	if store.Beside != "" {
		// The holder may be a run (it publishes a snapshot) or a short
		// command such as gc (it does not).
		snap, serr := eventlog.ReadSnapshot(g.store)
		if pid, _ := eventlog.Holder(g.store); serr == nil && snap.PID == pid {
			report.WriteSnapshot(w, snap)
		} else {
			fmt.Fprintf(w, "store in use by %s\n", store.Beside)
		}
	}
	if hash == "" {
		regs, err := store.Source().Manifests()
		if err != nil {
			return err
		}
		if len(regs) == 0 {
			fmt.Fprintf(w, "store %s holds no manifests yet\n", g.store)
		}
		for i := range regs {
			rep, err := store.Source().Report(&regs[i])
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s  %-24s %s\n", regs[i].Plan.Hash[:12], regs[i].Plan.Manifest.Name, report.CountLine(rep))
			if err := report.WriteSummary(ctx, w, "              ", g.ump, store.Source(), rep); err != nil {
				return err
			}
			if err := report.WriteAbout(w, "              ", store.Source(), rep); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := store.Source().FindReport(hash)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", rep.Plan.Hash, rep.Plan.Manifest.Name, report.CountLine(rep))
	if err := report.WriteSummary(ctx, w, "  ", g.ump, store.Source(), rep); err != nil {
		return err
	}
	if err := report.WriteAbout(w, "  ", store.Source(), rep); err != nil {
		return err
	}
	for i, cell := range rep.Cells {
		fmt.Fprintf(w, "  cell %d  %-11s %s\n", i+1, cell.Status, rep.Plan.Cells[i].LabelString())
	}
	return nil
}

// runRemoteStatus lists a manifest's cells as S3 holds them.
func runRemoteStatus(ctx context.Context, g globals, hash string, w io.Writer) error {
	if len(hash) != 64 {
		return badInput{fmt.Errorf("status --remote needs the full 64-digit manifest hash (got %q)", hash)}
	}
	remote, err := g.reader(ctx, false)
	if err != nil {
		return err
	}
	return remote.WriteStatus(ctx, hash, w)
}
