package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a manifest's cells: stages, their cache keys, inputs, outputs and events",
		ArgsUsage: "HASH",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "events", Usage: "also print every event of every cell as JSON lines"},
			&cli.BoolFlag{Name: "manifest", Usage: "print only the normalised manifest (JSON)"},
		},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "a manifest hash or unique prefix")
			if err != nil {
				return err
			}
			return runShow(c.Context, globalsOf(c), hash, c.Bool("events"), c.Bool("manifest"), c.App.Writer)
		},
	}
}

func runShow(ctx context.Context, g globals, hash string, events, manifestOnly bool, w io.Writer) error {
	store, rep, err := openReport(ctx, g, hash, "ump show")
	if err != nil {
		return err
	}
	defer store.Close()
	if manifestOnly {
		data, _ := json.MarshalIndent(rep.Plan.Manifest, "", "  ")
		fmt.Fprintln(w, string(data))
		return nil
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", rep.Plan.Hash, rep.Plan.Manifest.Name, countLine(rep))
	if err := printAbout(w, "  ", store, rep); err != nil {
		return err
	}
	ts := &tableShow{w: w, store: store, printed: map[artifacts.Ref]int{}, export: fmt.Sprintf("%s export --manifest %.12s", g.ump, rep.Plan.Hash)}
	for i, cell := range rep.Cells {
		fmt.Fprintf(w, "\ncell %d %s\n  key %s\n  status %s\n", i+1, rep.Plan.Cells[i].LabelString(), cell.Key, cell.Status)
		for _, p := range cell.Imported {
			signer := "signed by " + p.Signer
			if p.Signer == "" {
				signer = "unsigned (taken with --trust-unsigned: its results serve this manifest alone)"
			}
			fmt.Fprintf(w, "  imported from %s: committed by %s, %s\n", display.Terminal(p.From), display.Terminal(p.Attempt), display.Terminal(signer))
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
				if err := ts.tables(ctx, cell, i+1, st.Name); err != nil {
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
			continue
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
	}
	return nil
}

// showLimit caps the rows printed for histograms and schedules.
const showLimit = 40

// tableShow prints the tables of a manifest's cells that a user checks
// before training (tables), each once per store blob: one printed for an
// earlier cell (printed) is named instead. export is the export command
// that has every row ("ump export --manifest HASH"), for the hint where
// rows are left out.
type tableShow struct {
	w       io.Writer
	store   *pipeline.Store
	printed map[artifacts.Ref]int // the cell (from 1) each blob was printed for
	export  string
}

// tables prints the class histogram of the partition, or the spectral
// gaps of the topology, of cell n, as its stage produced them.
func (ts *tableShow) tables(ctx context.Context, cell *state.CellView, n int, stage string) error {
	read := func(out stages.Output) (*artifacts.Table, error) {
		ref, _ := cell.Output(out)
		if first, ok := ts.printed[ref]; ok {
			fmt.Fprintf(ts.w, "    %s: the same as cell %d's\n", out.Name, first)
			return nil, nil
		}
		ts.printed[ref] = n
		data, err := ts.store.Blobs.Get(ctx, ref)
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

// histogram prints a partition's class histogram, up to showLimit
// workers.
func (ts *tableShow) histogram(t *artifacts.Table) {
	w := ts.w
	workers, classes, counts := t.Column("worker").Ints, t.Column("class").Ints, t.Column("count").Ints
	nc := int(slices.Max(classes)) + 1
	fmt.Fprintf(w, "    class histogram (samples per worker and class):\n    %6s", "worker")
	for c := 0; c < nc; c++ {
		fmt.Fprintf(w, " %5d", c)
	}
	fmt.Fprintf(w, " %6s\n", "total")
	for r := 0; r < len(counts); r += nc {
		if r/nc == showLimit {
			fmt.Fprintf(w, "    ... %d more workers (%s --table partition --out partition.csv has them all)\n", len(counts)/nc-showLimit, ts.export)
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

// mixings prints a topology's mixing matrices, up to showLimit: from
// which round each holds, its edges and spectral gap.
func (ts *tableShow) mixings(t *artifacts.Table) {
	w := ts.w
	rounds, gaps, is, js := t.Column("round").Ints, t.Column("spectral_gap").Floats, t.Column("i").Ints, t.Column("j").Ints
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
		if shown == showLimit {
			fmt.Fprintf(w, "    ... more matrices (%s --table topology --out topology.csv has them all)\n", ts.export)
			break
		}
		fmt.Fprintf(w, "    from round %4d: %4d edges, spectral gap %.6f\n", rounds[r], edges, gaps[r])
		shown++
		r = end
	}
}
