package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/document"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/urfave/cli/v2"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name: "report",
		Usage: "write one reproduction report of manifests: each table beside the paper's with the claims " +
			"decided, the figures (PNG and PDF), the commands and hashes, the ump version and engine, and the " +
			"results as Parquet and CSV",
		ArgsUsage: "HASH|DIR ...",
		Description: "Each argument is a manifest in the store (a hash or unique prefix) or a directory an earlier\n" +
			"report wrote for one (it holds " + resultsdir.RegistrationFile + ", " + resultsdir.FinalFile +
			" and " + resultsdir.RoundsFile + "): a report regenerates\n" +
			"from committed results without the store; a directory a whole report was written to\n" +
			"stands for every manifest directory its " + resultsdir.RootFile + " lists.\n" +
			"Writes --out/report.md and, per manifest, --out/NAME-HASH12/: the results and the figures\n" +
			"(curves-N-COLUMN.png and .pdf), and the records of their digests. Your key (--key) signs\n" +
			"results from your store, and the figures; results read from a directory keep their signature,\n" +
			"and the report says whether you trust its key (`ump trust list`, --trust).\n" +
			"Only finished cells are reported; entries not run show –.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:  "out",
				Value: "ump-report",
				Usage: "the output `DIR` (not a repository's root or a directory of source code)",
			},
			&cli.StringSliceFlag{Name: "trust", Usage: "also trust results directories signed by `KEY` (NAME:BASE64, " +
				"as `ump key show` prints it), beside the keys of `ump trust list`"},
			&cli.StringFlag{
				Name: "as",
				Usage: "report the one DIR's results as those of `MANIFEST` (an embedded name or a file, with DIR's " +
					"overrides): the same cells under another table block, such as a paper manifest whose layout " +
					"changed after the results were computed",
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return badInput{
					fmt.Errorf("ump report needs one or more manifest hashes (or directories an earlier report wrote)"),
				}
			}
			if c.String("as") != "" && (c.NArg() != 1 || !resultsdir.IsExported(c.Args().First())) {
				return badInput{
					fmt.Errorf(
						"--as %s takes one directory of results (one that an earlier report wrote)",
						c.String("as"),
					),
				}
			}
			return runReport(
				c.Context,
				globalsOf(c),
				reportOptions{args: c.Args().Slice(), out: c.String("out"), as: c.String("as"),
					trust: c.StringSlice("trust")},
				c.App.Writer,
			)
		},
	}
}

// reportOptions are the arguments and flags of `ump report`.
type reportOptions struct {
	args, trust []string
	out, as     string
}

func runReport(ctx context.Context, g globals, o reportOptions, w io.Writer) error {
	if err := checkOutDir(o.out); err != nil {
		return err
	}
	rp := &reporting{g: g, o: o, vouch: map[*resultsdir.Exported]string{}}
	defer func() {
		if rp.store != nil {
			rp.store.Close()
		}
	}()
	var err error
	if rp.key, err = reportKey(g); err != nil {
		return err
	}
	if rp.trust, err = g.trust(false); err != nil {
		return err
	}
	if rp.trust, err = signing.NewTrust(append(rp.trust.Keys(), o.trust...)...); err != nil {
		return badInput{fmt.Errorf("--trust: %w", err)}
	}
	args, err := resultsdir.Expand(o.args) // a report's directory stands for the manifest directories it lists
	if err != nil {
		return err
	}
	var all []*resultsdir.Exported
	for _, arg := range args {
		read := rp.fromStore
		if info, serr := os.Stat(arg); resultsdir.IsExported(arg) ||
			serr == nil && info.IsDir() { // a directory: exported results (it says what it lacks)
			read = func(_ context.Context, dir string) (*resultsdir.Exported, error) { return rp.fromDir(dir) }
		}
		x, err := read(ctx, arg)
		if err != nil {
			return err
		}
		all = append(all, x)
	}
	for i, x := range all { // one section and one directory per manifest
		for _, y := range all[:i] {
			if x.Registration.Plan.Hash == y.Registration.Plan.Hash {
				return badInput{
					fmt.Errorf(
						"%s and %s are the same manifest (%.12s): name each manifest once",
						args[slices.Index(all, y)],
						args[i],
						x.Registration.Plan.Hash,
					),
				}
			}
		}
	}
	path, err := (&document.Report{Out: o.out, Args: o.args, Results: all, Vouch: rp.vouch, Key: rp.key}).Write()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, path)
	return nil
}

// reporting is a run of ump report: its options, key and trust, the
// store it opened (for a manifest hash), and what it says of who vouches
// for each manifest's results.
type reporting struct {
	g     globals
	o     reportOptions
	key   *signing.Key
	trust *signing.Trust
	store *pipeline.Store
	vouch map[*resultsdir.Exported]string
}

// fromDir reads a directory of exported results, checks who vouches for
// them and, with --as, lays them out anew.
func (rp *reporting) fromDir(dir string) (*resultsdir.Exported, error) {
	x, err := resultsdir.ReadExported(dir)
	if err != nil {
		return nil, err
	}
	if rp.vouch[x], err = document.TrustedSigner(x, dir, rp.trust); err != nil {
		return nil, err
	}
	if rp.o.as == "" {
		return x, nil
	}
	plan, err := manifests.Open(rp.o.as, x.Registration.Overrides...)
	if err != nil {
		return nil, badInput{fmt.Errorf("--as: %w", err)}
	}
	as, err := x.As(plan)
	if err != nil {
		return nil, err
	}
	rp.vouch[as] = document.VouchLaidOut(x, plan.Manifest.Name)
	return as, nil
}

// fromStore exports a manifest of the store (opened on first use); the
// user's key, if any, vouches for it.
func (rp *reporting) fromStore(ctx context.Context, hash string) (*resultsdir.Exported, error) {
	if rp.store == nil {
		var err error
		if rp.store, err = openStore(ctx, rp.g, "ump report", true); err != nil {
			return nil, err
		}
	}
	rep, err := rp.store.Source().FindReport(hash)
	if err != nil {
		return nil, err
	}
	x, err := resultsdir.ExportOf(ctx, rp.store.Source(), rep)
	if err != nil {
		return nil, err
	}
	rp.vouch[x] = document.VouchForStore(x, rep.ImportedUnsigned, rp.key)
	return x, nil
}

// reportKey is the user's signing key, which signs each directory's
// record, or nil when none is set up (the report is then unsigned; ump
// creates the key for S3, or ump key show).
func reportKey(g globals) (*signing.Key, error) {
	if _, err := os.Stat(g.key); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return signing.Load(g.key)
}

// checkOutDir refuses an --out directory that is empty, a file, a
// symbolic link (report and plot alike), a repository's root (go.mod or .git) or a directory of Go
// source (run from ump's own tree, `--out report` would write into the
// package of that name).
func checkOutDir(out string) error {
	if out == "" {
		return badInput{errors.New("--out '': name the output directory")}
	}
	if link, err := os.Readlink(out); err == nil {
		return badInput{fmt.Errorf("--out %s is a symbolic link (to %s): ump writes into a real directory only; "+
			"name the directory itself", out, link)}
	}
	info, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.IsDir():
		return badInput{fmt.Errorf("--out %s is a file: name a directory", out)}
	}
	for _, root := range []string{"go.mod", ".git"} {
		if _, err := os.Lstat(filepath.Join(out, root)); err == nil {
			return badInput{
				fmt.Errorf("--out %s is a repository's root (it holds %s): name a directory of its own", out, root),
			}
		}
	}
	if code, _ := filepath.Glob(filepath.Join(out, "*.go")); len(code) > 0 {
		return badInput{
			fmt.Errorf("--out %s holds Go source (%s): name another directory", out, filepath.Base(code[0])),
		}
	}
	return nil
}
