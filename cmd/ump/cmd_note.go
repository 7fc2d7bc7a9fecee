package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

func noteCommand() *cli.Command {
	return &cli.Command{
		Name:      "note",
		Usage:     "attach a note to a manifest (what it tried, why); status and the dashboard show it. It is not part of the hash",
		ArgsUsage: "HASH TEXT...",
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return badInput{fmt.Errorf("note needs a manifest hash and the note's text (got %d arguments)", c.NArg())}
			}
			text := strings.Join(c.Args().Tail(), " ")
			if strings.TrimSpace(text) == "" || len(text) > 4096 || strings.ContainsAny(text, "\r\x00") {
				return badInput{fmt.Errorf("note: give a text of 1 to 4096 characters")}
			}
			return withManifest(c, "ump note", func(store *pipeline.Store, reg *pipeline.Registration) error {
				if err := store.AddNote(reg.Plan.Hash, text); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "noted on manifest %s (%s)\n", reg.Plan.Hash, reg.Plan.Manifest.Name)
				return nil
			})
		},
	}
}

func forgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "hide a manifest from status and the dashboard; its events and results stay, and running it again lists it again",
		ArgsUsage: "HASH",
		Action: func(c *cli.Context) error {
			if _, err := oneArg(c, "a manifest hash or unique prefix"); err != nil {
				return err
			}
			return withManifest(c, "ump forget", func(store *pipeline.Store, reg *pipeline.Registration) error {
				if err := store.Forget(reg.Plan.Hash); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "forgot manifest %s (%s): status and the dashboard no longer list it; `ump show %.12s` still shows it, and `ump gc` reclaims the blobs only it uses\n",
					reg.Plan.Hash, reg.Plan.Manifest.Name, reg.Plan.Hash)
				return nil
			})
		},
	}
}

// withManifest holds the store (a writer) and finds the manifest the
// first argument names.
func withManifest(c *cli.Context, command string, do func(*pipeline.Store, *pipeline.Registration) error) error {
	g := globalsOf(c)
	g.artifacts = "" // it writes an event, no blob
	store, err := openStore(c.Context, g, command, false)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := store.FindManifest(c.Args().First())
	if err != nil {
		return err
	}
	return do(store, reg)
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what differs between two manifests: every field of their normalised configurations, sweep values included, and the overrides they were run with",
		ArgsUsage: "HASH1 HASH2",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return badInput{fmt.Errorf("diff needs exactly two manifest hashes (got %d)", c.NArg())}
			}
			g := globalsOf(c)
			store, err := openStore(c.Context, g, "ump diff", true)
			if err != nil {
				return err
			}
			defer store.Close()
			a, err := store.FindManifest(c.Args().Get(0))
			if err != nil {
				return err
			}
			b, err := store.FindManifest(c.Args().Get(1))
			if err != nil {
				return err
			}
			return printDiff(c.App.Writer, a, b)
		},
	}
}

// printDiff prints the fields whose values differ, one line each.
func printDiff(w io.Writer, a, b *pipeline.Registration) error {
	fa, fb := map[string]string{}, map[string]string{}
	for _, x := range []struct {
		reg  *pipeline.Registration
		flat map[string]string
	}{{a, fa}, {b, fb}} {
		data, err := json.Marshal(x.reg.Plan.Manifest)
		if err != nil {
			return err
		}
		var tree any
		if err := json.Unmarshal(data, &tree); err != nil {
			return err
		}
		flatten(x.flat, "", tree)
		if len(x.reg.Overrides) > 0 {
			x.flat["(run with overrides)"] = strings.Join(x.reg.Overrides, " ")
		}
	}
	fmt.Fprintf(w, "- %s (%s)\n+ %s (%s)\n", a.Plan.Hash, a.Plan.Manifest.Name, b.Plan.Hash, b.Plan.Manifest.Name)
	paths := slices.Sorted(maps.Keys(fa))
	for p := range fb {
		if _, ok := fa[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	n := 0
	for _, p := range paths {
		va, oka := fa[p]
		vb, okb := fb[p]
		if oka && okb && va == vb {
			continue
		}
		n++
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		fmt.Fprintf(w, "  %s: %s -> %s\n", p, va, vb)
	}
	if n == 0 {
		fmt.Fprintln(w, "  the same configuration")
	}
	return nil
}

// flatten writes a JSON tree as dotted paths to scalar or list values.
// The sweep's paths are kept whole (sweep.partition.alpha).
func flatten(out map[string]string, prefix string, v any) {
	m, ok := v.(map[string]any)
	if !ok || prefix == "sweep" {
		if ok { // the sweep: path -> values
			for k, vals := range m {
				data, _ := json.Marshal(vals)
				out["sweep."+k] = string(data)
			}
			return
		}
		data, _ := json.Marshal(v)
		out[prefix] = string(data)
		return
	}
	for k, child := range m {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		flatten(out, path, child)
	}
}
