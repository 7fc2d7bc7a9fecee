package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
)

// WriteAbout writes what tells a manifest apart besides its hash: the
// engines its cells ran on, the overrides it was run with and the user's
// notes.
func WriteAbout(w io.Writer, indent string, src state.Source, rep *state.Report) error {
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
	notes, err := src.Notes(rep.Plan.Hash)
	for _, n := range notes {
		fmt.Fprintf(w, "%snote %s: %s\n", indent, n.Time.Local().Format("2006-01-02 15:04"), display.Terminal(n.Text))
	}
	return err
}

// WriteOtherEngine says when cells of the manifest that have no result
// here have one recorded under another engine or data, and how to keep
// them: the whole command (ump, as it was run) where the manifest is an
// embedded one (its file is not known otherwise).
func WriteOtherEngine(w io.Writer, indent, ump string, src state.Source, rep *state.Report) error {
	other, engines, err := src.OtherResults(rep.Plan.Hash, rep.CellKeys)
	if err != nil || len(other) == 0 {
		return err
	}
	use, recompute := fmt.Sprintf(
		"rerunning its manifest (%s) with --other-engine use",
		display.Terminal(rep.Plan.Manifest.Name),
	), "with --other-engine recompute"
	if name, ok := manifests.EmbeddedOf(rep.Plan.Hash, rep.Overrides); ok {
		args := strings.Join(append([]string{name}, display.ShellWords(rep.Overrides)...), " ")
		use = fmt.Sprintf("`%s run --other-engine use %s`", ump, args)
		recompute = fmt.Sprintf("`%s run --other-engine recompute %s`", ump, args)
	}
	fmt.Fprintf(
		w,
		"%snote: %d of its cells without a result here have one recorded with other inputs, by engine %s (a cell's "+
			"key holds the engine and the data it ran on); "+
			"%s brings them back, %s computes them here\n",
		indent,
		len(other),
		strings.Join(engines, " and "),
		use,
		recompute,
	)
	return nil
}

// WriteSummary writes when the manifest's cells ran and its table's best
// entry so far, and what another engine recorded (WriteOtherEngine).
func WriteSummary(ctx context.Context, w io.Writer, indent, ump string, src state.Source, rep *state.Report) error {
	if err := WriteOtherEngine(w, indent, ump, src, rep); err != nil {
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
		ran = fmt.Sprintf(
			"ran %s to %s (%s)",
			first.Local().Format("2006-01-02 15:04"),
			last.Local().Format("15:04"),
			last.Sub(first).Round(time.Second),
		)
	}
	grid, err := ReadGrid(ctx, src, rep, Layout(&rep.Plan))
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

// CountLine counts a manifest's cells by status.
func CountLine(rep *state.Report) string {
	c := rep.Counts()
	return fmt.Sprintf(
		"%d cells: %d completed, %d diverged, %d failed, %d incomplete, %d pending",
		len(
			rep.Cells,
		),
		c[eventlog.Completed],
		c[eventlog.Diverged],
		c[eventlog.Failed],
		c[eventlog.Incomplete],
		c[eventlog.Pending],
	)
}

// WriteSnapshot writes what a running `ump run` last reported of itself.
func WriteSnapshot(w io.Writer, s *eventlog.Snapshot) {
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

// ShowLimit caps the rows WriteHistogram and WriteMixings print.
const ShowLimit = 40

// Show writes to W a manifest's cells as ump show prints them (Cell),
// with the tables a user checks before training each once per store
// blob: one written for an earlier cell is named instead. Export is the
// export command that has every row ("ump export --manifest HASH"), for
// the hint where rows are left out.
type Show struct {
	W       io.Writer
	Src     state.Source
	Export  string
	printed map[artifacts.Ref]int // the cell (from 1) each blob was printed for
}

// Cell writes cell i of the manifest (rep) as ump show prints it: its
// key, status and provenance, each stage's status, cache key, inputs,
// outputs and summary, the tables a user checks before training, and its
// events (every one with events, else counted by kind).
func (s *Show) Cell(ctx context.Context, rep *state.Report, i int, events bool) error {
	w, cell := s.W, rep.Cells[i]
	fmt.Fprintf(w, "\ncell %d %s\n  key %s\n  status %s\n", i+1, rep.Plan.Cells[i].LabelString(), cell.Key, cell.Status)
	for _, p := range cell.Imported {
		signer := "signed by " + p.Signer
		if p.Signer == "" {
			signer = "unsigned (taken with --trust-unsigned: its results serve this manifest alone)"
		}
		if p.TablesOnly {
			fmt.Fprintf(w, "  imported from %s, %s: its tables came, its checkpoints stayed behind\n",
				display.Terminal(p.From), display.Terminal(signer))
			continue
		}
		fmt.Fprintf(
			w,
			"  imported from %s: committed by %s, %s\n",
			display.Terminal(p.From),
			display.Terminal(p.Attempt),
			display.Terminal(signer),
		)
	}
	if len(cell.Imported) == 0 && len(cell.Events) > 0 {
		fmt.Fprintln(w, "  computed in this store")
	}
	for _, st := range cell.Stages {
		fmt.Fprintf(w, "  stage %s: %s", st.Name, st.Status)
		if st.Cached {
			fmt.Fprint(w, " (reused an identical stage of another cell)")
		}
		if st.Restarts > 0 {
			fmt.Fprintf(w, " (started %d times)", st.Restarts+1)
		}
		if st.Rounds > 0 {
			fmt.Fprintf(w, ", round %d/%d", st.Round, st.Rounds)
		}
		fmt.Fprintf(w, "\n    cache key %s\n", st.Key)
		for _, in := range st.Inputs {
			fmt.Fprintf(w, "    input  %s\n", in)
		}
		if st.Result != nil {
			for _, name := range slices.Sorted(maps.Keys(st.Result.Outputs)) {
				fmt.Fprintf(w, "    output %s = %s\n", name, st.Result.Outputs[name])
			}
			if len(st.Result.Summary) > 0 {
				fmt.Fprintf(w, "    summary %s\n", st.Result.Summary)
			}
			if err := s.tables(ctx, cell, i+1, st.Name); err != nil {
				return err
			}
		}
		if st.Error != "" {
			fmt.Fprintf(w, "    error %s\n", display.Terminal(st.Error))
		}
	}
	if events {
		for _, ev := range cell.Events {
			line, _ := json.Marshal(ev)
			fmt.Fprintf(w, "  %s\n", line)
		}
		return nil
	}
	counts := map[string]int{}
	for _, ev := range cell.Events {
		counts[ev.Kind]++
	}
	var parts []string
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[kind], kind))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  events: %s (--events lists them)\n", strings.Join(parts, ", "))
	}
	return nil
}

// tables writes the class histogram of the partition, or the spectral
// gaps of the topology, of cell n, as its stage produced them.
func (ts *Show) tables(ctx context.Context, cell *state.CellView, n int, stage string) error {
	read := func(out stages.Output) (*artifacts.Table, error) {
		ref, _ := cell.Output(out)
		if first, ok := ts.printed[ref]; ok {
			fmt.Fprintf(ts.W, "    %s: the same as cell %d's\n", out.Name, first)
			return nil, nil
		}
		if ts.printed == nil {
			ts.printed = map[artifacts.Ref]int{}
		}
		ts.printed[ref] = n
		data, err := ts.Src.Blobs.Get(ctx, ref)
		if errors.Is(err, artifacts.ErrNotFound) && cell.DirImport() != nil {
			fmt.Fprintf(ts.W, "    %s: not in this store (the cell was imported with its tables alone)\n", out.Name)
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out, err)
		}
		return artifacts.ReadArrow(data)
	}
	switch _, ok := cell.Output(stages.Histogram); {
	case stage == stages.Partition && ok:
		t, err := read(stages.Histogram)
		if err != nil || t == nil {
			return err
		}
		ts.histogram(t)
	case stage == stages.Topology:
		t, err := read(stages.Mixing)
		if err != nil || t == nil {
			return err
		}
		ts.mixings(t)
	}
	return nil
}

// histogram prints a partition's class histogram, up to ShowLimit
// workers.
func (ts *Show) histogram(t *artifacts.Table) {
	w := ts.W
	workers, classes, counts := t.Column("worker").Ints, t.Column("class").Ints, t.Column("count").Ints
	nc := int(slices.Max(classes)) + 1
	fmt.Fprintf(w, "    class histogram (samples per worker and class):\n    %6s", "worker")
	for c := 0; c < nc; c++ {
		fmt.Fprintf(w, " %5d", c)
	}
	fmt.Fprintf(w, " %6s\n", "total")
	for r := 0; r < len(counts); r += nc {
		if r/nc == ShowLimit {
			fmt.Fprintf(
				w,
				"    ... %d more workers (%s --table partition --out partition.csv has them all)\n",
				len(counts)/nc-ShowLimit,
				ts.Export,
			)
			break
		}
		fmt.Fprintf(w, "    %6d", workers[r])
		total := int64(0)
		for c := 0; c < nc; c++ {
			fmt.Fprintf(w, " %5d", counts[r+c])
			total += counts[r+c]
		}
		fmt.Fprintf(w, " %6d\n", total)
	}
}

// mixings prints a topology's mixing matrices, up to ShowLimit: from
// which round each holds, its edges and spectral gap.
func (ts *Show) mixings(t *artifacts.Table) {
	w := ts.W
	rounds, gaps := t.Column("round").Ints, t.Column("spectral_gap").Floats
	is, js := t.Column("i").Ints, t.Column("j").Ints
	fmt.Fprintf(w, "    mixing matrices (spectral gap rho = 1 - max(|lambda_2|, |lambda_n|)^2):\n")
	shown := 0
	for r := 0; r < len(rounds); {
		end := r
		edges := 0
		for ; end < len(rounds) && rounds[end] == rounds[r]; end++ {
			if is[end] < js[end] {
				edges++
			}
		}
		if shown == ShowLimit {
			fmt.Fprintf(w, "    ... more matrices (%s --table topology --out topology.csv has them all)\n", ts.Export)
			break
		}
		fmt.Fprintf(w, "    from round %4d: %4d edges, spectral gap %.6f\n", rounds[r], edges, gaps[r])
		shown++
		r = end
	}
}
