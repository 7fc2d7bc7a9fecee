package document

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// Report is a reproduction report to write into Out: a results
// directory per manifest, who vouches for each (Vouch, in words), and
// the user's key that signs the records (nil: unsigned). Args are the
// hashes and directories the user named, for the hint of a refusal.
type Report struct {
	Out     string
	Args    []string
	Results []*resultsdir.Exported
	Vouch   map[*resultsdir.Exported]string
	Key     *signing.Key
}

// Write writes the report: one directory per manifest with its results,
// figures and record, report.md and the root record; it returns
// report.md's path. Each directory is written beside its destination and
// swapped in, and each file beside it and renamed over it
// (resultsdir.Publish), so that a report regenerated in place and killed
// leaves each old or new, and the next one finishes it.
func (r *Report) Write() (string, error) {
	var dirs []string
	for _, x := range r.Results {
		dirs = append(dirs, fmt.Sprintf("%s-%.12s", x.Registration.Plan.Manifest.Name, x.Registration.Plan.Hash))
	}
	if err := r.checkOut(dirs); err != nil {
		return "", err
	}
	if err := os.MkdirAll(r.Out, 0o755); err != nil {
		return "", err
	}
	if err := resultsdir.ClearStaging(r.Out); err != nil {
		return "", err
	}
	var doc strings.Builder
	fmt.Fprintf(
		&doc,
		"# Reproduction report\n\nWritten by `ump report` (ump %s) from %d manifest(s). Each directory beside this "+
			"file holds a manifest's\n"+
			"results; `ump report DIR... --out OUT` (or `ump report THIS-DIRECTORY --out OUT`) writes this report "+
			"again from them, without the store;\n"+
			"its "+resultsdir.RootFile+" holds the digests of each directory's record. This file and the figures are "+
			"drawn from the results, and drawn again by every report.\n",
		state.Version(),
		len(r.Results),
	)
	for i, x := range r.Results {
		section, err := r.writeDir(x, dirs[i])
		if err != nil {
			return "", err
		}
		doc.WriteString(section)
	}
	if err := resultsdir.WriteFileAtomic(r.Out, "report.md", []byte(doc.String())); err != nil {
		return "", err
	}
	return filepath.Join(r.Out, "report.md"), resultsdir.WriteRoot(r.Out, dirs, r.Key)
}

// checkOut refuses an Out that is a symbolic link, and one that holds a
// report of other manifests than dirs (the directories this report
// writes), which this report's index would no longer list.
func (r *Report) checkOut(dirs []string) error {
	if info, err := os.Lstat(r.Out); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf(
			"%w: --out %s is a symbolic link; ump writes a report into a real directory only",
			state.ErrBadArgument,
			r.Out,
		)
	}
	if !resultsdir.IsRoot(r.Out) {
		return nil
	}
	listed, err := resultsdir.ReadRoot(r.Out)
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
		together := display.AbsolutePaths(
			append([]string{r.Out}, r.Args...),
		) // so that the hint runs from any directory
		return fmt.Errorf(
			"%w: --out %s holds a report of other manifests too (%s), which this report would no longer list: "+
				"report them together (`ump report %s --out %s`), or choose another --out",
			state.ErrBadArgument,
			r.Out,
			strings.Join(others, ", "),
			strings.Join(display.ShellWords(together), " "),
			display.Shell(together[0]),
		)
	}
	return nil
}

// writeDir writes a manifest's directory dir of the report (its results,
// figures and record) beside it and swaps it in, and returns its section
// of report.md.
func (r *Report) writeDir(x *resultsdir.Exported, dir string) (string, error) {
	dest := filepath.Join(r.Out, dir)
	switch info, err := os.Lstat(dest); {
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf(
			"%w: %s is a symbolic link; ump writes its results into real directories only",
			state.ErrBadArgument,
			dest,
		)
	case err == nil && !info.IsDir():
		return "", fmt.Errorf(
			"%w: %s is in the way (not a directory); remove it or choose another --out",
			state.ErrBadArgument,
			dest,
		)
	}
	if err := resultsdir.CheckOwn(dest); err != nil {
		return "", err
	}
	staged, err := resultsdir.Staging(r.Out, dir)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staged) // gone once published
	into := filepath.Join(staged, "results")
	if err := x.WriteResults(into); err != nil {
		return "", err
	}
	section, err := section(x, r.Vouch[x], into, dir)
	if err != nil {
		return "", fmt.Errorf("manifest %.12s: %w", x.Registration.Plan.Hash, err)
	}
	if err := x.WriteRecord(into, r.Key); err != nil {
		return "", err
	}
	return section, resultsdir.Publish(into, dest)
}
