package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ump-lab/ump/datasets"
	"github.com/urfave/cli/v2"
)

func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "list and fetch the data sets (into --data-dir)",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the data sets, whether each is installed, and where fetch looks for it",
				Action: func(c *cli.Context) error {
					return runDataList(globalsOf(c), c.App.Writer)
				},
			},
			{
				Name:      "fetch",
				Usage:     "fetch data sets, verify them and store them in the data directory",
				ArgsUsage: "NAME...",
				Description: "Tries each source in turn (the official URL first); files are verified (sha256 where\n" +
					"pinned, then loaded and counted) before they are stored, so nothing partial is kept.",
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return badInput{fmt.Errorf("data fetch needs data set names (see ump data list)")}
					}
					return runDataFetch(c.Context, globalsOf(c), c.Args().Slice(), c.App.ErrWriter)
				},
			},
		},
	}
}

func runDataList(g globals, w io.Writer) error {
	fmt.Fprintf(w, "data directory %s\n", g.data.Dir)
	for _, name := range datasets.Names() {
		info, _ := datasets.Lookup(name)
		if info.Generate != nil {
			fmt.Fprintf(w, "\n%s: generated from the manifest; it needs no files\n  %s\n", name, info.Description)
			continue
		}
		state := "not installed"
		if info.Installed(g.data.Dir) {
			state = "installed in " + filepath.Join(g.data.Dir, name)
		}
		fmt.Fprintf(w, "\n%s: %s\n  %s\n  files: %s\n  sources: %s\n", name, state, info.Description, info.Files,
			strings.Join(info.Sources(), "; "))
	}
	fmt.Fprintf(w, "\nquadratic, the task without samples, is generated from the manifest too.\n")
	return nil
}

func runDataFetch(ctx context.Context, g globals, names []string, log io.Writer) error {
	for _, name := range names {
		info, ok := datasets.Lookup(name)
		if !ok {
			return badInput{fmt.Errorf("unknown data set %q; known: %s", name, strings.Join(datasets.Names(), ", "))}
		}
		if info.Generate != nil {
			return badInput{
				fmt.Errorf("%s is generated from the manifest (task.synthetic): there is nothing to fetch", name),
			}
		}
	}
	for _, name := range names {
		if err := datasets.Fetch(ctx, g.data.Dir, name, log); err != nil {
			return err
		}
	}
	return nil
}
