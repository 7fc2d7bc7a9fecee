package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "list the store's manifests and their cells' status; during a run, show its progress",
		ArgsUsage: "[HASH]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "remote", Usage: "list what the S3 store of --artifacts holds of manifest HASH (the full hash): " +
				"each cell committed, in progress on some machine, or missing; nothing is pulled"},
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
		printSnapshot(w, snap)
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
			printSnapshot(w, snap)
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
			fmt.Fprintf(w, "%s  %-24s %s\n", regs[i].Plan.Hash[:12], regs[i].Plan.Manifest.Name, countLine(rep))
			if err := printSummary(ctx, w, "              ", g, store, rep); err != nil {
				return err
			}
			if err := printAbout(w, "              ", store, rep); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := store.Source().FindReport(hash)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", rep.Plan.Hash, rep.Plan.Manifest.Name, countLine(rep))
	if err := printSummary(ctx, w, "  ", g, store, rep); err != nil {
		return err
	}
	if err := printAbout(w, "  ", store, rep); err != nil {
		return err
	}
	for i, cell := range rep.Cells {
		fmt.Fprintf(w, "  cell %d  %-11s %s\n", i+1, cell.Status, rep.Plan.Cells[i].LabelString())
	}
	return nil
}

// printAbout prints what tells a manifest apart besides its hash: the
// engines its cells ran on, the overrides it was run with and the user's
// notes.
func printAbout(w io.Writer, indent string, store *pipeline.Store, rep *state.Report) error {
	var engines []string
	for _, c := range rep.Cells {
		if e := c.Fingerprint()["engine"]; e != "" && !slices.Contains(engines, e) {
			engines = append(engines, e)
		}
	}
	if len(engines) > 0 {
		fmt.Fprintf(w, "%sengine %s\n", indent, display.Terminal(strings.Join(engines, " and ")))
	}
	if len(rep.Overrides) > 0 {
		shown := slices.Clone(rep.Overrides)
		for i, ov := range shown {
			if strings.HasPrefix(ov, "add=") { // one cell per added seed: `ump show --manifest` lists them
				shown[i] = fmt.Sprintf("add=[%d cells]", len(rep.Plan.Manifest.Add))
			}
		}
		fmt.Fprintf(w, "%srun with %s\n", indent, display.Terminal(strings.Join(shown, " ")))
	}
	notes, err := store.Source().Notes(rep.Plan.Hash)
	for _, n := range notes {
		fmt.Fprintf(w, "%snote %s: %s\n", indent, n.Time.Local().Format("2006-01-02 15:04"), display.Terminal(n.Text))
	}
	return err
}

// noteOtherEngine says when cells of the manifest that have no result
// here have one recorded under another engine or data, and how to keep
// them: the
// whole command where the manifest is an embedded one (its file is not
// known otherwise).
func noteOtherEngine(w io.Writer, indent string, g globals, store *pipeline.Store, rep *state.Report) error {
	other, engines, err := store.Source().OtherResults(rep.Plan.Hash, rep.CellKeys)
	if err != nil || len(other) == 0 {
		return err
	}
	use, recompute := fmt.Sprintf("rerunning its manifest (%s) with --other-engine use", display.Terminal(rep.Plan.Manifest.Name)), "with --other-engine recompute"
	if name, ok := manifests.EmbeddedOf(rep.Plan.Hash, rep.Overrides); ok {
		args := strings.Join(append([]string{name}, quotedEach(rep.Overrides)...), " ")
		use = fmt.Sprintf("`%s run --other-engine use %s`", g.ump, args)
		recompute = fmt.Sprintf("`%s run --other-engine recompute %s`", g.ump, args)
	}
	fmt.Fprintf(w, "%snote: %d of its cells without a result here have one recorded with other inputs, by engine %s (a cell's key holds the engine and the data it ran on); "+
		"%s brings them back, %s computes them here\n", indent, len(other), strings.Join(engines, " and "), use, recompute)
	return nil
}

// printSummary prints when the manifest's cells ran and its table's best
// entry so far, and what another engine recorded.
func printSummary(ctx context.Context, w io.Writer, indent string, g globals, store *pipeline.Store, rep *state.Report) error {
	if err := noteOtherEngine(w, indent, g, store, rep); err != nil {
		return err
	}
	first, last := rep.Span()
	reused := ""
	if n := rep.Reused(); n > 0 {
		reused = fmt.Sprintf("; %d cells' results reused from other manifests' runs", n)
	}
	if first.IsZero() && reused == "" {
		fmt.Fprintf(w, "%snot started\n", indent)
		return nil
	}
	ran := "never ran itself"
	if !first.IsZero() {
		ran = fmt.Sprintf("ran %s to %s (%s)", first.Local().Format("2006-01-02 15:04"), last.Local().Format("15:04"), last.Sub(first).Round(time.Second))
	}
	grid, err := report.ReadGrid(ctx, store.Source(), rep, report.Layout(&rep.Plan))
	if errors.Is(err, state.ErrBadArgument) { // its table block cannot lay out its results: say so, list the rest
		fmt.Fprintf(w, "%s%s%s; no table: %v\n", indent, ran, reused, err)
		return nil
	}
	if err != nil {
		return err
	}
	best := "no result yet"
	if label, e, ok := grid.Best(); ok {
		best = fmt.Sprintf("best %s %.4g (%s", grid.Spec.Value, e.Mean, label)
		if e.Select != "" {
			best += ", " + grid.Spec.Select + "=" + e.Select
		}
		best += ")"
	}
	fmt.Fprintf(w, "%s%s%s; %s\n", indent, ran, reused, best)
	return nil
}

func countLine(rep *state.Report) string {
	c := rep.Counts()
	return fmt.Sprintf("%d cells: %d completed, %d diverged, %d failed, %d incomplete, %d pending",
		len(rep.Cells), c[eventlog.Completed], c[eventlog.Diverged], c[eventlog.Failed], c[eventlog.Incomplete], c[eventlog.Pending])
}

func printSnapshot(w io.Writer, s *eventlog.Snapshot) {
	fmt.Fprintf(w, "run %s by PID %d: manifest %s (%s)\n", s.State, s.PID, s.Manifest, s.Name)
	fmt.Fprintf(w, "  cells done %d/%d; ", s.CellsDone, s.Cells)
	if len(s.Running) > 1 {
		running := make([]string, len(s.Running))
		for i, c := range s.Running {
			running[i] = strconv.Itoa(c)
		}
		fmt.Fprintf(w, "cells %s running; last reported: ", strings.Join(running, ", "))
	}
	fmt.Fprintf(w, "cell %d %s", s.Cell, s.Label)
	if s.Stage != "" {
		fmt.Fprintf(w, ", stage %s", s.Stage)
	}
	if s.Stage == stages.Train {
		fmt.Fprintf(w, " round %d/%d", s.Round, s.Rounds)
	}
	fmt.Fprintln(w)
	if s.ETASeconds > 0 {
		fmt.Fprintf(w, "  ETA %s\n", (time.Duration(s.ETASeconds) * time.Second).Round(time.Second))
	}
	fmt.Fprintf(w, "  updated %s (started %s)\n", s.Updated.Format(time.RFC3339), s.Started.Format(time.RFC3339))
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
