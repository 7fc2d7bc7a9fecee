package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func noteCommand() *cli.Command {
	return &cli.Command{
		Name: "note",
		Usage: "attach a note to a manifest (what it tried, why); status and the dashboard show " +
			"it. It is not part of the hash",
		ArgsUsage: "HASH TEXT...",
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return badInput{
					fmt.Errorf("note needs a manifest hash and the note's text (got %d arguments)", c.NArg()),
				}
			}
			text := strings.Join(c.Args().Tail(), " ")
			if strings.TrimSpace(text) == "" || len(text) > 4096 || strings.ContainsAny(text, "\r\x00") {
				return badInput{fmt.Errorf("note: give a text of 1 to 4096 characters")}
			}
			return withManifest(c, "ump note", func(store *pipeline.Store, reg *state.Registration) error {
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
		Name: "forget",
		Usage: "hide a manifest from status and the dashboard; its events and results stay, and " +
			"running it again lists it again",
		ArgsUsage: "HASH",
		Action: func(c *cli.Context) error {
			if _, err := oneArg(c, "a manifest hash or unique prefix"); err != nil {
				return err
			}
			return withManifest(c, "ump forget", func(store *pipeline.Store, reg *state.Registration) error {
				if err := store.Forget(reg.Plan.Hash); err != nil {
					return err
				}
				fmt.Fprintf(
					c.App.Writer,
					"forgot manifest %s (%s): status and the dashboard no longer list it; `%s show %.12s` still "+
						"shows it, and `%s gc` reclaims the blobs only it uses\n",
					reg.Plan.Hash,
					reg.Plan.Manifest.Name,
					globalsOf(c).ump,
					reg.Plan.Hash,
					globalsOf(c).ump,
				)
				return nil
			})
		},
	}
}

// withManifest holds the store (a writer) and finds the manifest the
// first argument names.
func withManifest(c *cli.Context, command string, do func(*pipeline.Store, *state.Registration) error) error {
	g := globalsOf(c)
	g.artifacts = "" // it writes an event, no blob
	store, err := openStore(c.Context, g, command, false)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := store.Source().FindManifest(c.Args().First())
	if err != nil {
		return err
	}
	return do(store, reg)
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name: "diff",
		Usage: "what differs between two manifests: every field of their normalised configurations, sweep values " +
			"included, and the overrides they were run with",
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
			a, err := store.Source().FindManifest(c.Args().Get(0))
			if err != nil {
				return err
			}
			b, err := store.Source().FindManifest(c.Args().Get(1))
			if err != nil {
				return err
			}
			return printDiff(c.App.Writer, a, b)
		},
	}
}

// printDiff prints the fields whose values differ (state.Diff), one line
// each.
func printDiff(w io.Writer, a, b *state.Registration) error {
	changes, err := state.Diff(a, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "- %s (%s)\n+ %s (%s)\n", a.Plan.Hash, a.Plan.Manifest.Name, b.Plan.Hash, b.Plan.Manifest.Name)
	for _, c := range changes {
		fmt.Fprintf(
			w,
			"  %s: %s -> %s\n",
			display.Terminal(c.Path),
			cmp.Or(c.Before, "(absent)"),
			cmp.Or(c.After, "(absent)"),
		) // the values are JSON: escaped
	}
	if len(changes) == 0 {
		fmt.Fprintln(w, "  the same configuration")
	}
	return nil
}
