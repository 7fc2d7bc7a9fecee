package resultsdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// checkRecord checks dir's files against its record, when it has one
// (directories written before ump recorded its reports have none, and
// read as unsigned): every results file it lists has its digest, no file
// but those, figures (IsFigure) and the record is in dir, and each
// signature verifies; the results' signer is x.Signer. A listed results
// file other than the registration and the two Parquet tables (the CSV
// copies, the manifest) may be absent: with all, it is written again from
// the tables and must give the recorded digest; without, it is named in
// x.Absent. With all, the record and the results' bytes are kept, to be
// written again as they were (WriteResults).
func (x *Exported) checkRecord(dir string, read func(name string) ([]byte, error), all bool) error {
	if _, err := os.Lstat(filepath.Join(dir, RecordFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	data, err := read(RecordFile)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, RecordFile)
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("%w: %s: %v", state.ErrBadArgument, path, err)
	}
	if r.Manifest != x.Registration.Plan.Hash {
		return fmt.Errorf(
			"%w: %s records manifest %.12s, not %.12s of %s",
			state.ErrBadArgument,
			path,
			r.Manifest,
			x.Registration.Plan.Hash,
			RegistrationFile,
		)
	}
	for _, name := range []string{RegistrationFile, FinalFile, RoundsFile} {
		if _, ok := r.Files[name]; !ok {
			return fmt.Errorf("%w: %s records no %s", state.ErrBadArgument, path, name)
		}
	}
	listed := maps.Clone(r.Files)
	if r.Report != nil {
		for name, digest := range r.Report.Files {
			if _, ok := listed[name]; ok {
				return fmt.Errorf("%w: %s records %s twice", state.ErrBadArgument, path, name)
			}
			listed[name] = digest
		}
	}
	for name := range listed {
		if !filepath.IsLocal(name) || filepath.Base(name) != name || name == RecordFile {
			return fmt.Errorf("%w: %s records %q, not a file of the directory", state.ErrBadArgument, path, name)
		}
	}
	if err := onlyListed(dir, listed); err != nil {
		return err
	}
	results := map[string][]byte{}
	derived := sync.OnceValues(x.encode)
	for _, name := range slices.Sorted(maps.Keys(r.Files)) {
		got, err := x.resultFile(dir, name, read, all, derived)
		if err != nil {
			return err
		}
		if got == nil {
			x.Absent = append(x.Absent, name)
			continue
		}
		if digestOf(got) != r.Files[name] {
			if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf(
					"%w: %s is not there, and written again from %s and %s it is not what %s records (another build "+
						"of ump wrote it): restore it from where the directory came from",
					state.ErrBadArgument,
					filepath.Join(dir, name),
					FinalFile,
					RoundsFile,
					RecordFile,
				)
			}
			return fmt.Errorf(
				"%w: %s was changed after ump report wrote it: its digest is not the one %s records",
				state.ErrBadArgument,
				filepath.Join(dir, name),
				RecordFile,
			)
		}
		results[name] = got
	}
	if r.Signer != "" || r.Signature != "" {
		if !signing.Verifies(r.Signer, r.signed(), r.Signature) &&
			!signing.Verifies(r.Signer, r.signedV1(), r.Signature) {
			return fmt.Errorf(
				"%w: %s carries a signature of its results by %s that does not verify: the record was changed after "+
					"signing",
				state.ErrBadArgument,
				path,
				display.Terminal(r.Signer),
			)
		}
		x.Signer = r.Signer
	}
	if rr := r.Report; rr != nil && (rr.Signer != "" || rr.Signature != "") &&
		!signing.Verifies(rr.Signer, r.reportSigned(), rr.Signature) {
		return fmt.Errorf(
			"%w: %s carries a signature of its report by %s that does not verify: the record was changed after signing",
			state.ErrBadArgument,
			path,
			display.Terminal(rr.Signer),
		)
	}
	if all {
		x.keep(&r, results)
	}
	return nil
}

// keep keeps a directory's record and results, to be written again as
// they were (WriteResults), where the record lists a set of results ump
// writes or wrote.
func (x *Exported) keep(r *Record, results map[string][]byte) {
	names := slices.Sorted(maps.Keys(r.Files))
	known := [][]string{ResultFiles, uncarriedResultFiles, plainResultFiles}
	same := func(files []string) bool { return slices.Equal(names, slices.Sorted(slices.Values(files))) }
	if !slices.ContainsFunc(known, same) {
		return
	}
	x.record, x.results = r, results
	if plain, ok := results[plainRoundsCSV]; ok && r.Signature == "" {
		// Nothing vouches for the plain file: written again as ump writes it now.
		delete(results, plainRoundsCSV)
		results[RoundsCSVFile] = gzipped(plain)
		x.record = nil
	}
}

// resultFile is a results file of dir that its record lists: read, or,
// where it is absent and derived from the tables (the CSV copies, the
// manifest), written again from them (derived: x.encode) when all is set
// (nil without).
func (x *Exported) resultFile(
	dir, name string,
	read func(name string) ([]byte, error),
	all bool,
	derived func() (map[string][]byte, error),
) ([]byte, error) {
	_, err := os.Lstat(filepath.Join(dir, name))
	needed := []string{RegistrationFile, FinalFile, RoundsFile, CellsFile} // not written again from the tables
	if !errors.Is(err, fs.ErrNotExist) || slices.Contains(needed, name) {
		return read(name)
	}
	if !all {
		return nil, nil
	}
	if name == plainRoundsCSV {
		return artifacts.Encode(x.Rounds, "csv")
	}
	files, err := derived()
	if err != nil {
		return nil, err
	}
	if data, ok := files[name]; ok {
		return data, nil
	}
	return nil, fmt.Errorf(
		"%w: %s: not found, and not a file ump report writes",
		state.ErrBadArgument,
		filepath.Join(dir, name),
	)
}

// onlyListed refuses a file in dir that the record does not list, but for
// the record and figures (IsFigure: derived, drawn again by every report).
func onlyListed(dir string, listed map[string]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", state.ErrBadArgument, err)
	}
	for _, e := range entries {
		if _, ok := listed[e.Name()]; !ok && e.Name() != RecordFile && !isFigureFile(e) {
			return fmt.Errorf(
				"%w: %s holds %s, which its %s does not list: a file ump report did not write",
				state.ErrBadArgument,
				dir,
				e.Name(),
				RecordFile,
			)
		}
	}
	return nil
}

// checkFinal checks the final export's structure: one row per cell of the
// plan, each finished (completed or diverged), and a completed cell's
// value (the figure its table shows) a number.
func (x *Exported) checkFinal() error {
	t := x.Final
	if t.Rows() == 0 {
		return nil
	}
	cells, status := t.Column("cell"), t.Column("status")
	switch {
	case cells == nil || cells.Ints == nil:
		return errors.New("no integer column cell")
	case status == nil || status.Strings == nil:
		return errors.New("no text column status")
	}
	value, keys := t.Column(report.Layout(&x.Registration.Plan).Value), t.Column("cell_key")
	seen := map[int64]bool{}
	for r, c := range cells.Ints {
		switch s := status.Strings[r]; {
		case c < 1 || int(c) > len(x.Registration.Plan.Cells):
			return fmt.Errorf("row %d names cell %d of a plan of %d", r+1, c, len(x.Registration.Plan.Cells))
		case keys == nil || keys.Strings == nil || keys.Strings[r] != x.Registration.CellKeys[c-1]:
			return fmt.Errorf("cell %d's cell_key is not the one %s gives it", c, RegistrationFile)
		case seen[c]:
			return fmt.Errorf("cell %d has a second row (row %d); a final table has one row per cell", c, r+1)
		case s != eventlog.Completed && s != eventlog.Diverged:
			return fmt.Errorf("cell %d has status %q; an export holds completed and diverged cells", c, s)
		case s == eventlog.Completed && (value == nil || value.Floats == nil || value.Null != nil && value.Null[r] ||
			math.IsNaN(value.Floats[r]) || math.IsInf(value.Floats[r], 0)):
			return fmt.Errorf("completed cell %d has no number for %s", c, report.Layout(&x.Registration.Plan).Value)
		}
		seen[c] = true
	}
	return x.checkLastRounds(cells.Ints, value)
}

// maxMagnitude bounds a finite number in a results table. ump's figures
// come from float32 models (|x| < 3.5e38; a distance over a billion
// parameters squares them: below 1e87), and a report squares and sums
// them again, which stays finite below this bound.
const maxMagnitude = 1e150

// checkMagnitudes refuses a finite number beyond maxMagnitude in any
// column of a results table, naming the row's cell (±Inf and NaN, which a
// diverged cell may record, pass).
func checkMagnitudes(t *artifacts.Table) error {
	cells := t.Column("cell")
	for _, c := range t.Columns {
		for r, v := range c.Floats {
			if math.Abs(v) > maxMagnitude && !math.IsInf(v, 0) && (c.Null == nil || !c.Null[r]) {
				cell := "?"
				if cells != nil && r < len(cells.Ints) {
					cell = strconv.FormatInt(cells.Ints[r], 10)
				}
				return fmt.Errorf(
					"row %d (cell %s) holds %s = %g, beyond any number ump records (|x| <= %g)",
					r+1,
					cell,
					c.Name,
					v,
					maxMagnitude,
				)
			}
		}
	}
	return nil
}

// checkLastRounds checks that each cell's final value is its last
// evaluated round's in the rounds export (a final table is its cell's
// last round): an edited final figure, or a rounds file of other cells,
// does not pass. NaN matches NaN (a diverged cell).
func (x *Exported) checkLastRounds(cells []int64, value *artifacts.Column) error {
	name := report.Layout(&x.Registration.Plan).Value
	rc, rr, rv := x.Rounds.Column("cell"), x.Rounds.Column("round"), x.Rounds.Column(name)
	if value == nil || value.Floats == nil {
		return nil // a table without the value (every cell diverged before a number): nothing to match
	}
	if rc == nil || rc.Ints == nil || rr == nil || rr.Ints == nil || rv == nil || rv.Floats == nil {
		return fmt.Errorf(
			"%s has no integer columns cell and round and no %s to check the final figures against",
			RoundsFile,
			name,
		)
	}
	last := map[int64]int{} // cell -> its row of the latest round
	for r, c := range rc.Ints {
		if l, ok := last[c]; !ok || rr.Ints[r] > rr.Ints[l] {
			last[c] = r
		}
	}
	for r, c := range cells {
		l, ok := last[c]
		if !ok {
			return fmt.Errorf("cell %d has no rows in %s", c, RoundsFile)
		}
		f, v := value.Floats[r], rv.Floats[l]
		if value.Null != nil && value.Null[r] {
			f = math.NaN()
		}
		if rv.Null != nil && rv.Null[l] {
			v = math.NaN()
		}
		if f != v && !(math.IsNaN(f) && math.IsNaN(v)) {
			return fmt.Errorf(
				"cell %d's %s is %v, but its last round (%d) in %s has %v: a final figure is its last round's",
				c,
				name,
				f,
				rr.Ints[l],
				RoundsFile,
				v,
			)
		}
	}
	return nil
}
