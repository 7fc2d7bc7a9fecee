package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ump-lab/ump/dirimport"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/urfave/cli/v2"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name: "import",
		Usage: "bring the finished cells of results directories (those ump report writes) into the store, " +
			"so that ump run computes only the cells they lack",
		ArgsUsage: "DIR ...",
		Description: "Each DIR is a directory ump report wrote for one manifest (or a report's directory,\n" +
			"which stands for every manifest directory its " + resultsdir.RootFile + " lists). Each finished\n" +
			"cell comes in under its cell key, with its events, its outputs' digests and its tables;\n" +
			"checkpoints stay behind. A run of the manifest, or of one that extends its sweep, then\n" +
			"computes only the cells the store lacks. Each cell must be signed by a key the store trusts\n" +
			"(yours, `ump trust add`, --trust);\n" +
			"it stays signed by that key, never by yours. A cell computed under another engine, a directory\n" +
			"edited after ump report wrote it, or one whose cells are not its manifest's is refused (exit 2 or 3)\n" +
			"and nothing is imported. `ump show HASH` names where each imported cell came from; `ump verify\n" +
			"HASH` computes them again.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "trust", Usage: "also accept cells signed by `KEY` " +
				"(NAME:BASE64, as `ump key show` prints it), beside the keys of `ump trust list`"},
			&cli.BoolFlag{Name: "trust-unsigned", Usage: "also import cells that carry no signature; " +
				"their results then count for their manifest alone, " +
				"not as cache hits for other manifests"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return badInput{fmt.Errorf(
					"ump import needs one or more results directories (ump report --out writes them)")}
			}
			o := importOptions{dirs: c.Args().Slice(), trust: c.StringSlice("trust"),
				unsigned: c.Bool("trust-unsigned")}
			return runImport(c.Context, globalsOf(c), o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// importOptions are the arguments and flags of `ump import`.
type importOptions struct {
	dirs, trust []string
	unsigned    bool
}

func runImport(ctx context.Context, g globals, o importOptions, stdout, stderr io.Writer) error {
	trust, err := g.trust(o.unsigned)
	if err != nil {
		return err
	}
	if trust, err = signing.NewTrust(append(trust.Keys(), o.trust...)...); err != nil {
		return badInput{fmt.Errorf("--trust: %w", err)}
	}
	trust.Unsigned = o.unsigned
	dirs, err := resultsdir.Expand(o.dirs) // a report's directory stands for the manifest directories it lists
	if err != nil {
		return err
	}
	// The runner's stages, engines and data check each directory; its
	// store is opened once every directory has passed.
	runner := &pipeline.Runner{Stages: g.cellStages(), Engines: g.engines(), Data: g.data, Progress: stderr}
	var checked []*dirimport.Directory
	for _, dir := range dirs { // every directory checked before the store is touched
		d, err := dirimport.Check(ctx, runner, trust, dir)
		if err != nil {
			return fmt.Errorf("%s: %w; nothing was imported", dir, err)
		}
		checked = append(checked, d)
	}
	store, err := pipeline.Open(g.store, "ump import")
	if err != nil {
		return err
	}
	defer store.Close()
	runner.Log, runner.Blobs, runner.Dir = store.Log, store.Blobs, store.Path
	for _, d := range checked {
		st, err := d.Import(ctx, runner)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Path, err)
		}
		st.Say(stdout, d.Path)
		if st.Cells < st.Plan {
			abs, _ := filepath.Abs(filepath.Join(d.Path, resultsdir.ManifestFile))
			fmt.Fprintf(stdout, "  the other %d cells: %s run %s\n", st.Plan-st.Cells, g.ump, display.Shell(abs))
		}
	}
	return nil
}
