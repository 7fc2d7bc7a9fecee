package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

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
	store, err := openStore(g, "ump show")
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := findManifest(store, hash)
	if err != nil {
		return err
	}
	if manifestOnly {
		data, _ := json.MarshalIndent(reg.Plan.Manifest, "", "  ")
		fmt.Fprintln(w, string(data))
		return nil
	}
	rep, err := store.Report(reg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "manifest %s (%s): %s\n", reg.Plan.Hash, reg.Plan.Manifest.Name, countLine(rep))
	for i, cell := range rep.Cells {
		fmt.Fprintf(w, "\ncell %d %s\n  key %s\n  status %s\n", i+1, reg.Plan.Cells[i].LabelString(), cell.Key, cell.Status)
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
			}
			if st.Error != "" {
				fmt.Fprintf(w, "    error %s\n", st.Error)
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
