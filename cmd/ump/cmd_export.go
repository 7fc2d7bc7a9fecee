package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/durable"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write a table of a manifest's cells (parameter columns + figures) as CSV, Arrow IPC or Parquet",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{
				Name:     "manifest",
				Required: true,
				Usage:    "manifest `HASH` or unique prefix; repeat it to export several manifests into one table",
			},
			&cli.StringFlag{
				Name:  "table",
				Value: "rounds",
				Usage: "rounds (per-round metrics), final (one row per cell), partition (worker, class, count), " +
					"topology (round, i, j, weight, spectral_gap) or summary (one row per entry of the manifest's " +
					"table: n, mean, std, 95% interval, chosen lr, status, and the paper's value where published)",
			},
			&cli.StringFlag{
				Name: "format",
				Usage: "csv, arrow (IPC file) or parquet (default: --out's extension, " +
					".csv, .arrow or .parquet; else csv)",
			},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file, or - for stdout"},
			&cli.BoolFlag{
				Name: "include-incomplete",
				Usage: "with --table rounds, also the rounds that cells still training (or interrupted, or failed) " +
					"have reported so far, to watch curves while a sweep runs",
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return badInput{
					fmt.Errorf(
						"export takes no arguments (got %q): name manifests with --manifest HASH",
						c.Args().Slice(),
					),
				}
			}
			return runExport(c.Context, globalsOf(c), exportOptions{manifests: c.StringSlice("manifest"),
				table: c.String(
					"table",
				), format: c.String("format"), out: c.String("out"), incomplete: c.Bool(
					"include-incomplete")}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

type exportOptions struct {
	manifests          []string
	table, format, out string
	incomplete         bool
}

func runExport(ctx context.Context, g globals, o exportOptions, stdout, stderr io.Writer) error {
	format, err := exportFormat(o.format, o.out)
	if err != nil {
		return err
	}
	o.format = format
	if !slices.Contains(report.TableNames(), o.table) {
		return badInput{fmt.Errorf("--table %q: use one of %s", o.table, strings.Join(report.TableNames(), ", "))}
	}
	if dir := filepath.Dir(o.out); o.out != "-" {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return badInput{
				fmt.Errorf(
					"--out %s: the directory %s does not exist; create it, or name a file in an existing one",
					o.out,
					dir,
				),
			}
		}
	}
	store, err := openStore(ctx, g, "ump export", true)
	if err != nil {
		return err
	}
	defer store.Close()
	var reps []*state.Report
	seen := map[string]bool{}
	for _, hash := range o.manifests {
		reg, err := store.Source().FindManifest(hash)
		if err != nil {
			return err
		}
		if seen[reg.Plan.Hash] {
			return badInput{fmt.Errorf("--manifest %s names manifest %.12s a second time", hash, reg.Plan.Hash)}
		}
		seen[reg.Plan.Hash] = true
		rep, err := store.Source().Report(reg)
		if err != nil {
			return err
		}
		if err := report.WriteOtherEngine(stderr, "", g.ump, store.Source(), rep); err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if o.incomplete && o.table != "rounds" {
		return badInput{
			fmt.Errorf("--include-incomplete: only the rounds table has rows before a cell finishes (not %s)", o.table),
		}
	}
	table, skipped, err := report.Export(ctx, store.Source(), reps, o.table, o.incomplete)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "export: left out %s\n", s)
	}
	data, err := artifacts.Encode(table, o.format)
	if err != nil {
		return err
	}
	if o.out == "-" {
		_, err = stdout.Write(data)
		return err
	}
	if err := durable.WriteOut(o.out, data); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d rows of %s to %s\n", table.Rows(), o.table, o.out)
	return nil
}

// exportFormat is the format to write: --format, else the one --out's
// extension names (.csv, .arrow, .parquet), else csv. A --format that
// another known extension contradicts is refused, as a file named for one
// format holding another would be.
func exportFormat(format, out string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	named := slices.Contains(artifacts.Formats, ext)
	switch {
	case format == "" && named:
		return ext, nil
	case format == "":
		return "csv", nil
	case !slices.Contains(artifacts.Formats, format):
		return "", badInput{fmt.Errorf("--format %q: use csv, arrow or parquet", format)}
	case named && ext != format:
		return "", badInput{
			fmt.Errorf(
				"--format %s with --out %s: the file's extension says %s; name the file .%s, or drop --format",
				format,
				out,
				ext,
				format,
			),
		}
	}
	return format, nil
}
