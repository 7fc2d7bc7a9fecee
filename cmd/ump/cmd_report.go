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
	"strings"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/render"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/paper"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write one reproduction report of manifests: each table beside the paper's with the claims decided, the figures (PNG and PDF), the commands and hashes, the ump version and engine, and the results as Parquet and CSV",
		ArgsUsage: "HASH|DIR ...",
		Description: "Each argument is a manifest in the store (a hash or unique prefix) or a directory an earlier\n" +
			"report wrote for one (it holds " + resultsdir.RegistrationFile + ", " + resultsdir.FinalFile + " and " + resultsdir.RoundsFile + "): a report\n" +
			"regenerates from committed results without the store; a directory a whole report was written to\n" +
			"stands for every manifest directory its " + resultsdir.RootFile + " lists. Writes --out/report.md and, per\n" +
			"manifest, --out/NAME-HASH12/: the results and the figures (curves-N-COLUMN.png and .pdf), and the\n" +
			"records of their digests. Your key (--key) signs results from your store, and the figures; results read\n" +
			"from a directory keep their signature, whose key must be one you trust (`ump trust list`, --trust).\n" +
			"Only finished cells are reported; entries not run show –.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "ump-report", Usage: "the output `DIR` (not a repository's root or a directory of source code)"},
			&cli.StringSliceFlag{Name: "trust", Usage: "also accept results directories signed by `KEY` (NAME:BASE64, as `ump key show` prints it), beside the keys of `ump trust list`"},
			&cli.BoolFlag{Name: "trust-unsigned", Usage: "accept results directories signed by keys you do not trust, as if unsigned (the report says so)"},
			&cli.StringFlag{Name: "as", Usage: "report the one DIR's results as those of `MANIFEST` (an embedded name or a file, with DIR's overrides): the same cells under another table block, such as a paper manifest whose layout changed after the results were computed"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return badInput{fmt.Errorf("ump report needs one or more manifest hashes (or directories an earlier report wrote)")}
			}
			if c.String("as") != "" && (c.NArg() != 1 || !resultsdir.IsExported(c.Args().First())) {
				return badInput{fmt.Errorf("--as %s takes one directory of results (one that an earlier report wrote)", c.String("as"))}
			}
			return runReport(c.Context, globalsOf(c), reportOptions{args: c.Args().Slice(), out: c.String("out"), as: c.String("as"),
				trust: c.StringSlice("trust"), trustUnsigned: c.Bool("trust-unsigned")}, c.App.Writer)
		},
	}
}

// reportOptions are the arguments and flags of `ump report`.
type reportOptions struct {
	args, trust   []string
	out, as       string
	trustUnsigned bool
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
	var args []string // a report's directory stands for the manifest directories it lists
	for _, arg := range o.args {
		if !resultsdir.IsRoot(arg) || resultsdir.IsExported(arg) {
			args = append(args, arg)
			continue
		}
		dirs, err := resultsdir.ReadRoot(arg)
		if err != nil {
			return err
		}
		args = append(args, dirs...)
	}
	var all []*resultsdir.Exported
	for _, arg := range args {
		read := rp.fromStore
		if info, serr := os.Stat(arg); resultsdir.IsExported(arg) || serr == nil && info.IsDir() { // a directory: exported results (it says what it lacks)
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
				return badInput{fmt.Errorf("%s and %s are the same manifest (%.12s): name each manifest once", args[slices.Index(all, y)], args[i], x.Registration.Plan.Hash)}
			}
		}
	}
	path, err := rp.write(all)
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
	if rp.vouch[x], err = trustOf(x, dir, rp.trust, rp.o.trustUnsigned); err != nil {
		return nil, err
	}
	if rp.o.as == "" {
		return x, nil
	}
	plan, err := manifests.Open(rp.o.as, x.Registration.Overrides...)
	if err != nil {
		return nil, badInput{fmt.Errorf("--as: %w", err)}
	}
	from := "unsigned"
	if x.Signer != "" {
		from = "signed by " + display.Markdown(x.Signer)
	}
	if x, err = x.As(plan); err != nil {
		return nil, err
	}
	rp.vouch[x] = "no: laid out anew as " + display.Markdown(plan.Manifest.Name) + " (new files, which no signature covers) from results " + from
	return x, nil
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
	rp.vouch[x] = unsignedResults
	switch {
	case rep.ImportedUnsigned > 0: // no key vouches for them, the user's neither
		rp.vouch[x] = fmt.Sprintf("unsigned: %d of its cells were pulled with --trust-unsigned, so no key vouches for their results", rep.ImportedUnsigned)
	case rp.key != nil: // the results come from the user's own store
		x.Signer = rp.key.Public()
		rp.vouch[x] = "by " + display.Markdown(x.Signer) + ", your key: computed in your store, or pulled into it from keys you trust"
	}
	return x, nil
}

// write writes the report: one directory per manifest with its results,
// figures and record, report.md and the root record; it returns
// report.md's path. Each directory is written beside its destination and
// swapped in, and each file beside it and renamed over it
// (resultsdir.Publish), so that a report regenerated in place and killed
// leaves each old or new, and the next one finishes it.
func (rp *reporting) write(all []*resultsdir.Exported) (string, error) {
	out := rp.o.out
	var dirs []string
	for _, x := range all {
		dirs = append(dirs, fmt.Sprintf("%s-%.12s", x.Registration.Plan.Manifest.Name, x.Registration.Plan.Hash))
	}
	if err := checkReportOut(out, dirs, rp.o.args); err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	if err := resultsdir.ClearStaging(out); err != nil {
		return "", err
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "# Reproduction report\n\nWritten by `ump report` (ump %s) from %d manifest(s). Each directory beside this file holds a manifest's\n"+
		"results; `ump report DIR... --out OUT` (or `ump report THIS-DIRECTORY --out OUT`) writes this report again from them, without the store;\n"+
		"its "+resultsdir.RootFile+" holds the digests of each directory's record. This file and the figures are drawn from the results, and drawn again by every report.\n", state.Version(), len(all))
	for i, x := range all {
		section, err := rp.writeDir(x, dirs[i])
		if err != nil {
			return "", err
		}
		doc.WriteString(section)
	}
	if err := resultsdir.WriteFileAtomic(out, "report.md", []byte(doc.String())); err != nil {
		return "", err
	}
	return filepath.Join(out, "report.md"), resultsdir.WriteRoot(out, dirs, rp.key)
}

// checkReportOut refuses an --out that is a symbolic link, and one that
// holds a report of other manifests than dirs (the directories this
// report writes, of args), which this report's index would no longer list.
func checkReportOut(out string, dirs, args []string) error {
	if info, err := os.Lstat(out); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return badInput{fmt.Errorf("--out %s is a symbolic link; ump writes a report into a real directory only", out)}
	}
	if !resultsdir.IsRoot(out) {
		return nil
	}
	listed, err := resultsdir.ReadRoot(out)
	if err != nil {
		return err
	}
	var others []string
	for _, dir := range listed {
		if !slices.Contains(dirs, filepath.Base(dir)) {
			others = append(others, filepath.Base(dir))
		}
	}
	if len(others) > 0 {
		together := absolutePaths(append([]string{out}, args...)) // so that the hint runs from any directory
		return badInput{fmt.Errorf("--out %s holds a report of other manifests too (%s), which this report would no longer list: "+
			"report them together (`ump report %s --out %s`), or choose another --out", out, strings.Join(others, ", "),
			strings.Join(quotedEach(together), " "), fleet.ShellQuote(together[0]))}
	}
	return nil
}

// absolutePaths is args with each that names a file or directory made
// absolute (a hash stays as it is).
func absolutePaths(args []string) []string {
	out := slices.Clone(args)
	for i, arg := range out {
		if _, err := os.Stat(arg); err == nil {
			if abs, err := filepath.Abs(arg); err == nil {
				out[i] = abs
			}
		}
	}
	return out
}

// writeDir writes a manifest's directory dir of the report (its results,
// figures and record) beside it and swaps it in, and returns its section
// of report.md.
func (rp *reporting) writeDir(x *resultsdir.Exported, dir string) (string, error) {
	out := rp.o.out
	dest := filepath.Join(out, dir)
	switch info, err := os.Lstat(dest); {
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		return "", badInput{fmt.Errorf("%s is a symbolic link; ump writes its results into real directories only", dest)}
	case err == nil && !info.IsDir():
		return "", badInput{fmt.Errorf("%s is in the way (not a directory); remove it or choose another --out", dest)}
	}
	if err := resultsdir.CheckOwn(dest); err != nil {
		return "", err
	}
	staged, err := resultsdir.Staging(out, dir)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staged) // gone once published
	into := filepath.Join(staged, "results")
	if err := x.WriteResults(into); err != nil {
		return "", err
	}
	section, err := reportSection(x, rp.vouch[x], into, dir)
	if err != nil {
		return "", fmt.Errorf("manifest %.12s: %w", x.Registration.Plan.Hash, err)
	}
	if err := x.WriteRecord(into, rp.key); err != nil {
		return "", err
	}
	return section, resultsdir.Publish(into, dest)
}

// unsignedResults is what a report says of results no key vouches for.
const unsignedResults = "no: nothing vouches for these results. The digests in " + resultsdir.RecordFile + " catch accidents, not edits: " +
	"whoever edits a file can write its new digest"

// trustOf says who vouches for results read from dir: their signer when
// trust holds the key, or no one; a signer not trusted is refused (exit
// 3), unless trustUnsigned takes the results as unsigned.
func trustOf(x *resultsdir.Exported, dir string, trust *signing.Trust, trustUnsigned bool) (string, error) {
	switch {
	case x.Signer == "":
		return unsignedResults, nil
	case trust.Trusts(x.Signer):
		return "by " + display.Markdown(x.Signer) + ", a key you trust", nil
	case trustUnsigned:
		return "no: signed by " + display.Markdown(x.Signer) + ", a key you do not trust, taken as unsigned (--trust-unsigned)", nil
	}
	return "", fmt.Errorf("%w: %s is signed by %s, a key you do not trust: `ump trust add %s` if it is a collaborator's, "+
		"--trust KEY for this report alone, or --trust-unsigned to take the results as unsigned", signing.ErrUntrusted, dir, x.Signer, x.Signer)
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

// reportSection is a manifest's part of the report, which says who vouches
// for its results (vouch); its figures are drawn into into, the directory
// that becomes out/dir.
func reportSection(x *resultsdir.Exported, vouch, into, dir string) (string, error) {
	plan := &x.Registration.Plan
	var b strings.Builder
	counts := x.Counts()
	cells := fmt.Sprintf("%d: %d completed, %d diverged", len(plan.Cells), counts[eventlog.Completed], counts[eventlog.Diverged])
	if left := len(plan.Cells) - counts[eventlog.Completed] - counts[eventlog.Diverged]; left > 0 {
		cells += fmt.Sprintf(", %d not finished (not reported)", left)
	}
	link := func(name string) string { return fmt.Sprintf("[%s](%s/%s)", name, dir, name) }
	fmt.Fprintf(&b, "\n## %s\n\n| | |\n|---|---|\n", display.Markdown(plan.Manifest.Name))
	run := "`" + x.Command(dir) + "`"
	if strings.HasSuffix(run, resultsdir.ManifestFile+"`") {
		run += " (from this report's directory)"
	}
	fmt.Fprintf(&b, "| manifest | `%s` |\n| run it | %s |\n| check it | `ump verify %.12s` (recomputes every cell and compares each output's digest) |\n",
		plan.Hash, run, plan.Hash)
	fmt.Fprintf(&b, "| cells | %s |\n| engine | %s |\n| computed by | %s |\n| results signed | %s |\n| figures | drawn by `ump report` from the results, and drawn again by `ump report` of the directory; %s lists the results' digests |\n",
		cells, display.Markdown(x.Engines()), display.Markdown(x.Versions()), vouch, resultsdir.RecordFile)
	results := []string{link(resultsdir.FinalFile), link(resultsdir.RoundsFile)}
	for _, name := range resultsdir.CSVFiles {
		if _, err := os.Stat(filepath.Join(into, name)); err == nil {
			results = append(results, link(name))
		}
	}
	fmt.Fprintf(&b, "| results | %s, %s |\n", strings.Join(results, ", "), link(resultsdir.RegistrationFile))
	grid, tables, err := reportTables(x)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\n### Table\n\n%s", tables["grid"])
	if beside, ok := tables["paper"]; ok {
		fmt.Fprintf(&b, "\n### Beside the paper's\n\n%s", beside)
	}
	for _, scope := range grid.Spec.SelectPer[min(1, len(grid.Spec.SelectPer)):] {
		what := fmt.Sprintf("%s chosen %s", grid.Spec.Select, scopeWords[scope])
		fmt.Fprintf(&b, "\n### Table with %s (a declared variant: `ump table %.12s --select-per %s`)\n\n%s", what, plan.Hash, scope, tables["grid "+scope])
		if beside, ok := tables["paper "+scope]; ok {
			fmt.Fprintf(&b, "\n### Beside the paper's, with %s\n\n%s", what, beside)
		}
	}
	if fig, ok := grid.SweepFigure(report.FigureTitle(plan)); ok {
		name := fileSafe(fig.Name)
		if err := drawFigure(&fig, into, name); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n### Against %s\n\n![%s against %s](%s/%s.png)\n\n%s of the final round against %s: a line per row at its tuned learning rate, the mean over seeds with ± 1 std as error bars ([PDF](%s/%s.pdf)).\n",
			fig.X, fig.Y, fig.X, dir, name, fig.Y, fig.X, dir, name)
	}
	figs, err := x.Curves(grid, report.CurveOptions{X: "round", Y: grid.Spec.Value})
	if err != nil {
		return "", err
	}
	b.WriteString("\n### Figures\n")
	for c, fig := range figs {
		if !slices.ContainsFunc(fig.Series, func(s report.Series) bool { return len(s.X) > 0 }) {
			continue
		}
		name := fmt.Sprintf("curves-%d-%s", c+1, fileSafe(fig.Name))
		if err := drawFigure(&fig, into, name); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n![%s](%s/%s.png)\n\n%s: every row at its tuned learning rate, mean over seeds with a ±1 std band ([PDF](%s/%s.pdf)).\n",
			fig.Title, dir, name, fig.Title, dir, name)
	}
	return b.String(), nil
}

// drawFigure draws fig as dir/name.png (300 dpi) and .pdf.
func drawFigure(fig *report.Figure, dir, name string) error {
	for _, ext := range []string{".png", ".pdf"} {
		path, err := resultsdir.PathInside(dir, name+ext)
		if err != nil {
			return err
		}
		if err := render.Figure(fig, path); err != nil {
			return err
		}
	}
	return nil
}

// reportTables lays out an exported manifest's table and renders it in
// Markdown: "grid" as `ump table` prints it and, where the paper publishes
// a table for the manifest, "paper" beside it (`ump table --paper`); the
// same as "grid SCOPE" and "paper SCOPE" for each other scope the table
// declares (`ump table --select-per SCOPE`).
func reportTables(x *resultsdir.Exported) (*report.Grid, map[string]string, error) {
	plan := &x.Registration.Plan
	layout := report.Layout(plan)
	grid, err := x.Grid(layout)
	if err != nil {
		return nil, nil, err
	}
	pub, err := report.Paper()
	if err != nil {
		return nil, nil, err
	}
	published := pub.Table(plan.Manifest.Name)
	tables := map[string]string{}
	for i, scope := range append([]string{""}, layout.SelectPer[min(1, len(layout.SelectPer)):]...) {
		g, key := grid, ""
		if i > 0 {
			if g, err = x.Grid(layout.Scoped(scope)); err != nil {
				return nil, nil, err
			}
			key = " " + scope
		}
		tables["grid"+key] = g.Markdown()
		if published != nil {
			curves, err := x.Curves(g, report.CurveOptions{X: "round", Y: g.Spec.Value})
			if err != nil {
				return nil, nil, err
			}
			tables["paper"+key] = paper.ComparePaper(pub, plan, g, published, curves).Markdown()
		}
	}
	return grid, tables, nil
}

// scopeWords say how a select scope tunes.
var scopeWords = map[string]string{manifests.PerEntry: "per entry", manifests.PerRow: "once per row"}

// checkOutDir refuses an --out directory that is empty, a file, a link to
// nothing, a repository's root (go.mod or .git) or a directory of Go
// source (run from ump's own tree, `--out report` would write into the
// package of that name).
func checkOutDir(out string) error {
	if out == "" {
		return badInput{errors.New("--out '': name the output directory")}
	}
	if link, err := os.Readlink(out); err == nil {
		if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
			return badInput{fmt.Errorf("--out %s is a link to %s, which does not exist: name a directory", out, link)}
		}
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
			return badInput{fmt.Errorf("--out %s is a repository's root (it holds %s): name a directory of its own", out, root)}
		}
	}
	if code, _ := filepath.Glob(filepath.Join(out, "*.go")); len(code) > 0 {
		return badInput{fmt.Errorf("--out %s holds Go source (%s): name another directory", out, filepath.Base(code[0]))}
	}
	return nil
}
