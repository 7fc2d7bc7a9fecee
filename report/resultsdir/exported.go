package resultsdir

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"

	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/internal/bounded"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/signing"
)

// Exported is a manifest's results as files, without a store: its
// registration (the plan, its hash, cell keys and the run's overrides)
// and its final and rounds exports. `ump report` writes one directory of
// them per manifest and reads such directories back, so that a report
// (its tables and figures) can be regenerated from committed results.
type Exported struct {
	Registration  state.Registration
	Final, Rounds *artifacts.Table
	// Signer is who vouches for the numbers: the key that signed the
	// results of the record of the directory they were read from, or, for
	// results from the user's store, the user's; "" when no one does.
	Signer string
	// Absent are results files the record lists that ReadExportedFinals
	// did not need and did not find (the CSV copies, the manifest: the
	// tables give them).
	Absent []string
	// fromStore: computed or pulled into this user's store (ExportOf), so
	// the user's key may vouch for them. record and results are what a
	// directory held (readExported): written again byte for byte, with
	// their signature, so that regenerating never re-signs them.
	fromStore bool
	record    *Record
	results   map[string][]byte
	// cellRecords are the finished cells a store holds (ExportOf), written
	// as CellsFile; cellsData is that file as a directory held it, and dir
	// the directory (readExported), for Cells.
	cellRecords []CellRecord
	cellsData   []byte
	dir         string
}

// The files of an exported directory.
const (
	RegistrationFile = "registration.json"
	ManifestFile     = "manifest.yaml"
	FinalFile        = "final.parquet"
	RoundsFile       = "rounds.parquet"
	RecordFile       = "record.json"
)

// Record is what ump report writes into a directory: the digest of every
// results file in it (ResultFiles: the registration, the manifest, the
// final and rounds tables and their CSV copies), signed by who vouches
// for the numbers (Signer), the user whose store computed or pulled them,
// when a key is set up. The figures beside them are derived: ump report
// draws them again from the results, and the record does not list them.
// Records of an ump before that also hold Report, the figures' digests
// and who drew them: read, its signature verified, its files neither
// needed nor read. ReadExported refuses a directory whose results differ
// from the record or that holds a file that is neither a result, a figure
// nor the record.
type Record struct {
	Manifest  string            `json:"manifest"`
	Files     map[string]string `json:"files"` // the results: name -> sha256:HEX
	Signer    string            `json:"signer,omitempty"`
	Signature string            `json:"signature,omitempty"`
	Report    *ReportRecord     `json:"report,omitempty"`
}

// ReportRecord is the figures' part of a record of an ump before figures
// were derived.
type ReportRecord struct {
	Files     map[string]string `json:"files"` // name -> sha256:HEX
	Signer    string            `json:"signer,omitempty"`
	Signature string            `json:"signature,omitempty"`
}

// IsFigure reports whether name is a figure ump report draws into a
// results directory (curves-N-COLUMN and sweep-PATH, as PNG and PDF):
// derived from the results, drawn again by every report, never read.
func IsFigure(name string) bool { return figureName.MatchString(name) }

// isFigureFile reports whether a directory entry is a figure as a
// regular file (a directory or link named as one is not).
func isFigureFile(e fs.DirEntry) bool { return IsFigure(e.Name()) && e.Type().IsRegular() }

var figureName = regexp.MustCompile(`^(curves|sweep)-[^/]+\.(png|pdf)$`)

// ResultFiles are the files of the results part of a record, as
// WriteResults writes them from a store. The rounds' CSV copy is gzipped
// (RoundsCSVFile: a tenth of its size; pandas, DuckDB and R read it as
// it is); directories written before that hold rounds.csv, read and
// checked as well.
var ResultFiles = append(slices.Clone(uncarriedResultFiles), CellsFile)

// uncarriedResultFiles are the results of a directory written before ump
// carried the cells (CellsFile), or laid out anew (As): read, reported
// and written again as they are; such a directory cannot be imported.
var uncarriedResultFiles = []string{RegistrationFile, ManifestFile, FinalFile, FinalCSVFile, RoundsFile, RoundsCSVFile}

// The CSV copies of the tables.
const (
	FinalCSVFile  = "final.csv"
	RoundsCSVFile = "rounds.csv.gz"
)

// plainRoundsCSV is the rounds' CSV copy of a directory written before
// ump gzipped it.
const plainRoundsCSV = "rounds.csv"

// CSVFiles are the CSV copies a results directory may hold.
var CSVFiles = []string{FinalCSVFile, RoundsCSVFile, plainRoundsCSV}

// plainResultFiles are the results of a directory written before ump
// gzipped the rounds' CSV: read, and written again with the CSV gzipped
// where no signature covers the plain file (readExported), as they are
// where one does.
var plainResultFiles = []string{RegistrationFile, ManifestFile, FinalFile, FinalCSVFile, RoundsFile, plainRoundsCSV}

// signed is what the results' signature covers: the manifest, the files
// and the signer's key, its name included (so a look-alike name is
// another key).
func (r *Record) signed() []byte {
	return manifests.CanonicalJSON(struct {
		Kind     string            `json:"kind"`
		Manifest string            `json:"manifest"`
		Files    map[string]string `json:"files"`
		Signer   string            `json:"signer"`
	}{"ump results 2", r.Manifest, r.Files, r.Signer})
}

// signedV1 is what a record's signature covered before it named the
// signer (ump before records had a report part), still verified: the
// trust list holds whole keys, so a changed name is an untrusted key.
func (r *Record) signedV1() []byte {
	return manifests.CanonicalJSON(struct {
		Manifest string            `json:"manifest"`
		Files    map[string]string `json:"files"`
	}{r.Manifest, r.Files})
}

// reportSigned is what the figures' signature of a record of an ump
// before figures were derived covers: its files, the results they were
// drawn from and who vouches for those, and its signer.
func (r *Record) reportSigned() []byte {
	return manifests.CanonicalJSON(struct {
		Kind          string            `json:"kind"`
		Manifest      string            `json:"manifest"`
		Results       map[string]string `json:"results"`
		ResultsSigner string            `json:"results_signer"`
		Files         map[string]string `json:"files"`
		Signer        string            `json:"signer"`
	}{"ump report 2", r.Manifest, r.Files, r.Signer, r.Report.Files, r.Report.Signer})
}

func digestOf(data []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(data)) }

// ExportOf exports a manifest's results: the final and rounds tables of
// its finished cells.
func ExportOf(ctx context.Context, s state.Source, rep *state.Report) (*Exported, error) {
	final, _, err := report.Export(ctx, s, []*state.Report{rep}, "final", false)
	if err != nil {
		return nil, err
	}
	rounds, _, err := report.Export(ctx, s, []*state.Report{rep}, "rounds", false)
	if err != nil {
		return nil, err
	}
	records, err := cellRecords(ctx, s, rep)
	if err != nil {
		return nil, err
	}
	return &Exported{Registration: rep.Registration, Final: final, Rounds: rounds,
		fromStore: rep.ImportedUnsigned == 0, cellRecords: records}, nil
}

// WriteResults writes the registration and the exports into dir, a new
// directory (ump report fills one beside its destination and swaps it in:
// Publish): the Parquet files that ReadExported reads, CSV copies for
// readers without Parquet, and the manifest as YAML; results read from a
// directory are written as they were read.
func (x *Exported) WriteResults(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	files := x.results
	if files == nil {
		var err error
		if files, err = x.encode(); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path, err := PathInside(dir, name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// encode is the results files of x.
func (x *Exported) encode() (map[string][]byte, error) {
	reg, err := json.MarshalIndent(x.Registration, "", " ")
	if err != nil {
		return nil, err
	}
	manifest := fmt.Appendf(
		nil,
		"# The manifest ump ran (normalised: defaults written out); `ump run` of this\n# file runs it again, with "+
			"hash %s.\n",
		x.Registration.Plan.Hash,
	)
	files := map[string][]byte{
		RegistrationFile: append(reg, '\n'),
		ManifestFile:     append(manifest, manifests.YAML(x.Registration.Plan.Manifest)...),
	}
	for _, t := range []struct {
		parquet, csv string
		table        *artifacts.Table
	}{{FinalFile, FinalCSVFile, x.Final}, {RoundsFile, RoundsCSVFile, x.Rounds}} {
		var err error
		if files[t.parquet], err = artifacts.Encode(t.table, "parquet"); err != nil {
			return nil, err
		}
		if files[t.csv], err = artifacts.Encode(t.table, "csv"); err != nil {
			return nil, err
		}
		if strings.HasSuffix(t.csv, ".gz") {
			files[t.csv] = gzipped(files[t.csv])
		}
	}
	if x.cellRecords != nil {
		if files[CellsFile], err = encodeCells(x.cellRecords); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// gzipped is data gzipped at the best compression, with no name or time
// in its header: the same data gives the same bytes.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // errors only for a bad level
	w.Write(data)                                         // a bytes.Buffer takes all
	w.Close()
	return b.Bytes()
}

// gunzipped is the data a gzipped file holds, at most limit bytes of it.
func gunzipped(data []byte, limit int64) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("it holds more than the %d bytes an export of ump's holds", limit)
	}
	return out, nil
}

// CheckOwn refuses a directory that holds a file an earlier report did
// not write there (a result, a figure, a record or what its record
// lists), so that replacing it loses nothing of the user's; a directory
// that does not exist passes.
func CheckOwn(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	own := map[string]bool{RecordFile: true, plainRoundsCSV: true}
	for _, name := range ResultFiles {
		own[name] = true
	}
	if data, err := os.ReadFile(filepath.Join(dir, RecordFile)); err == nil {
		var r Record
		if json.Unmarshal(data, &r) == nil {
			for name := range r.Files {
				own[name] = true
			}
			if r.Report != nil {
				for name := range r.Report.Files {
					own[name] = true
				}
			}
		}
	}
	for _, e := range entries {
		if !own[e.Name()] && !isFigureFile(e) {
			return fmt.Errorf(
				"%w: %s holds %s, which no report of ump wrote there: name another --out, or move it away",
				state.ErrBadArgument,
				dir,
				e.Name(),
			)
		}
	}
	return nil
}

// WriteRecord writes dir's record (RecordFile) of the results
// WriteResults wrote. The results keep the record they were read with,
// their signature included (less the figures' part of an older ump's
// record: figures are derived); results from the user's store are signed
// with key (nil: none set up), unless some of their cells came from
// results directories another key signed (ump import): each cell then
// carries its own signature. Nothing else is signed with key: results
// read from a directory or laid out anew (As) are not the user's to vouch
// for.
func (x *Exported) WriteRecord(dir string, key *signing.Key) error {
	var r Record
	if x.record != nil {
		r = Record{
			Manifest:  x.record.Manifest,
			Files:     x.record.Files,
			Signer:    x.record.Signer,
			Signature: x.record.Signature,
		}
	} else {
		r = Record{Manifest: x.Registration.Plan.Hash, Files: map[string]string{}}
		for _, name := range ResultFiles {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) && name == CellsFile && x.cellRecords == nil {
				continue // laid out anew (As): its cells are another manifest's
			}
			if err != nil {
				return err
			}
			r.Files[name] = digestOf(data)
		}
		if x.fromStore && key != nil && len(x.ImportedSigners(key)) == 0 {
			r.Signer = key.Public()
			r.Signature = key.Sign(r.signed())
		}
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	path, err := PathInside(dir, RecordFile)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// PathInside is root/parts... for a file to write there: each part one
// local name (no separator, not ..), and nothing on the way a symbolic
// link, nor the file itself anything but a regular file, so that a write
// stays inside root and never goes through a link. Otherwise
// state.ErrBadArgument, naming the path.
func PathInside(root string, parts ...string) (string, error) {
	path := root
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			if p := parts[i]; !filepath.IsLocal(p) || filepath.Base(p) != p {
				return "", fmt.Errorf("%w: %q is not a name for a file inside %s", state.ErrBadArgument, p, root)
			}
			path = filepath.Join(path, parts[i])
		}
		info, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return filepath.Join(root, filepath.Join(parts...)), nil
		case err != nil:
			return "", err
		case info.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf(
				"%w: %s is a symbolic link; ump writes its results into real files only",
				state.ErrBadArgument,
				path,
			)
		case i == len(parts)-1 && len(parts) > 0 && !info.Mode().IsRegular():
			return "", fmt.Errorf(
				"%w: %s is in the way (not a regular file); remove it or choose another --out",
				state.ErrBadArgument,
				path,
			)
		}
	}
	return path, nil
}

// As is x as the results of plan: a manifest of the same cells (their
// configurations and order, hence their keys) whose table block differs,
// such as an embedded paper manifest whose layout changed after the
// results were computed. The exports name plan's hash; the registration
// keeps x's cell keys and overrides. Its files are new, so no signature
// covers them: y is unsigned. Another set of cells is bad input.
func (x *Exported) As(plan *manifests.Plan) (*Exported, error) {
	old := &x.Registration.Plan
	if !bytes.Equal(manifests.CanonicalJSON(plan.Cells), manifests.CanonicalJSON(old.Cells)) {
		return nil, fmt.Errorf(
			"%w: %s (%.12s, %d cells) is not a layout of the same cells as %s (%.12s, %d cells): only its table "+
				"block may differ",
			state.ErrBadArgument,
			plan.Manifest.Name,
			plan.Hash,
			len(plan.Cells),
			old.Manifest.Name,
			old.Hash,
			len(old.Cells),
		)
	}
	y := &Exported{Registration: x.Registration}
	y.Registration.Plan = *plan
	for _, t := range []struct{ from, into **artifacts.Table }{{&x.Final, &y.Final}, {&x.Rounds, &y.Rounds}} {
		out := &artifacts.Table{Metadata: maps.Clone((*t.from).Metadata)}
		out.Metadata["ump.manifests"] = plan.Hash
		for _, c := range (*t.from).Columns {
			if c.Name == "manifest" {
				c.Strings = slices.Repeat([]string{plan.Hash}, len(c.Strings))
			}
			out.Columns = append(out.Columns, c)
		}
		*t.into = out
	}
	return y, nil
}

// exportLimits are the largest files ReadExported reads, by name: far
// beyond a full-scale paper manifest's (Table 1: 238 KB, 48 KB and
// 301 KB), and small enough to read whole.
var exportLimits = map[string]int64{
	RegistrationFile: 64 << 20,
	FinalFile:        64 << 20,
	RoundsFile:       512 << 20,
	RecordFile:       1 << 20,
}

// limitOf is the largest file of this name ReadExported reads (a CSV copy
// or the manifest that a record lists: as large as the rounds).
func limitOf(name string) int64 {
	if l, ok := exportLimits[name]; ok {
		return l
	}
	return exportLimits[RoundsFile]
}

// maxColumns bounds the columns of an export: its parameter columns and
// figures, about 60 today.
const maxColumns = 512

// maxValues bounds the values (rows × columns) of any export, whatever
// its plan claims: 400 times a full-scale paper table's rounds.
const maxValues = 1 << 27

// valueLimit is the most values (rows × columns) the export name of plan
// holds, checked against a Parquet footer before it is decoded: final,
// a row per cell; rounds, a row per evaluated round of each cell (every
// evaluate.every rounds, the first and the last).
func valueLimit(plan *manifests.Plan, name string) int64 {
	rows := int64(len(plan.Cells))
	if name == RoundsFile {
		rows = 0
		for i := range plan.Cells {
			c := &plan.Cells[i].Config
			rows += int64(c.ScaledRounds()/max(1, c.Evaluate.Every)) + 2
		}
	}
	return min(rows*maxColumns, maxValues)
}

// IsExported reports whether dir holds an exported manifest (its
// registration file).
func IsExported(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RegistrationFile))
	return err == nil
}

// ReadExported reads what Write wrote into dir, checking that the plan's
// hash is its manifest's and that the exports are this manifest's.
func ReadExported(dir string) (*Exported, error) { return readExported(dir, true) }

// ReadExportedFinals reads a directory's plan and figures as ReadExported
// does, checking every file it finds against the record; the files the
// record lists that it does not need and cannot find (the CSV copies, the
// figures, the report) are named in Absent, not refused.
func ReadExportedFinals(dir string) (*Exported, error) { return readExported(dir, false) }

// readExported reads dir; all: every file the record lists must be there.
func readExported(dir string, all bool) (*Exported, error) {
	files := &exportFiles{dir: dir, read: map[string][]byte{}}
	x, err := readRegistration(files)
	if err != nil {
		return nil, err
	}
	plan := &x.Registration.Plan
	for _, t := range []struct {
		name string
		into **artifacts.Table
	}{{FinalFile, &x.Final}, {RoundsFile, &x.Rounds}} {
		data, err := files.get(t.name)
		if err != nil {
			return nil, err
		}
		if *t.into, err = artifacts.ReadParquet(data, valueLimit(plan, t.name)); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, filepath.Join(dir, t.name), err)
		}
		if got := (*t.into).Metadata["ump.manifests"]; got != plan.Hash {
			return nil, fmt.Errorf(
				"%w: %s: exported from manifest %.12s, not %.12s of %s",
				state.ErrBadArgument,
				filepath.Join(dir, t.name),
				got,
				plan.Hash,
				RegistrationFile,
			)
		}
	}
	if err := x.checkFinal(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, filepath.Join(dir, FinalFile), err)
	}
	for _, t := range []struct {
		name  string
		table *artifacts.Table
	}{{FinalFile, x.Final}, {RoundsFile, x.Rounds}} {
		if err := checkMagnitudes(t.table); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, filepath.Join(dir, t.name), err)
		}
	}
	if err := x.checkRecord(dir, files.get, all); err != nil {
		return nil, err
	}
	x.dir, x.cellsData = dir, files.read[CellsFile]
	for _, name := range CSVFiles {
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		data, err := files.get(name)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(name, ".gz") {
			data, err = gunzipped(data, limitOf(RoundsFile))
		}
		table, parquet := x.Final, FinalFile
		if strings.HasPrefix(name, "rounds.") {
			table, parquet = x.Rounds, RoundsFile
		}
		if err == nil {
			err = sameAsCSV(table, data)
		}
		if err != nil {
			return nil, fmt.Errorf(
				"%w: %s does not hold what %s holds: %v",
				state.ErrBadArgument,
				filepath.Join(dir, name),
				parquet,
				err,
			)
		}
	}
	return x, nil
}

// exportFiles reads a results directory's files, each once: the tables,
// the record's digests and the CSV check share it.
type exportFiles struct {
	dir  string
	read map[string][]byte
}

// get is a file's contents: a plain file of at most its limit.
func (f *exportFiles) get(name string) ([]byte, error) {
	if data, ok := f.read[name]; ok {
		return data, nil
	}
	path := filepath.Join(f.dir, name)
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf(
			"%w: %s: not found; a directory of exported results holds %s, %s and %s, as ump report --out writes them",
			state.ErrBadArgument,
			path,
			RegistrationFile,
			FinalFile,
			RoundsFile,
		)
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, path, err)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf(
			"%w: %s is not a regular file (a directory, link, pipe or device); exported results are plain files",
			state.ErrBadArgument,
			path,
		)
	case info.Size() > limitOf(name):
		return nil, fmt.Errorf(
			"%w: %s is %d bytes, more than the %d an export of ump's holds",
			state.ErrBadArgument,
			path,
			info.Size(),
			limitOf(name),
		)
	}
	data, err := bounded.ReadFile(path, limitOf(name)) // what the checks above saw may have changed since
	if err != nil {
		return nil, fmt.Errorf("%w: %w", state.ErrBadArgument, err)
	}
	f.read[name] = data
	return data, nil
}

// readRegistration reads the registration of a results directory: its
// manifest must be one (its name, ranges and sweep as a file's are
// checked), hash to the plan's hash and expand to the plan's cells.
func readRegistration(files *exportFiles) (*Exported, error) {
	path := filepath.Join(files.dir, RegistrationFile)
	data, err := files.get(RegistrationFile)
	if err != nil {
		return nil, err
	}
	x := &Exported{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x.Registration); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, path, err)
	}
	plan := &x.Registration.Plan
	again, err := manifests.Parse(path, manifests.YAML(plan.Manifest))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: its manifest is not valid: %v", state.ErrBadArgument, path, err)
	}
	if again.Hash != plan.Hash ||
		!bytes.Equal(manifests.CanonicalJSON(again.Cells), manifests.CanonicalJSON(plan.Cells)) ||
		len(plan.Cells) != len(x.Registration.CellKeys) {
		return nil, fmt.Errorf(
			"%w: %s: the plan does not match its hash %.12s (its manifest hashes to %.12s and expands to %d cells; "+
				"the plan has %d cells, %d keys): the file was edited",
			state.ErrBadArgument,
			path,
			plan.Hash,
			again.Hash,
			len(again.Cells),
			len(plan.Cells),
			len(x.Registration.CellKeys),
		)
	}
	return x, nil
}

// sameAsCSV checks that data is t as CSV (artifacts.WriteCSV: the
// exact values), naming the first row and column that differ.
func sameAsCSV(t *artifacts.Table, data []byte) error {
	want, err := artifacts.Encode(t, "csv")
	if err != nil || bytes.Equal(data, want) {
		return err
	}
	got, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return err
	}
	rows, _ := csv.NewReader(bytes.NewReader(want)).ReadAll()
	if len(got) != len(rows) {
		return fmt.Errorf("%d rows, not %d", len(got)-1, len(rows)-1)
	}
	for r := range rows {
		if len(got[r]) != len(rows[r]) {
			return fmt.Errorf("row %d has %d fields, not %d", r, len(got[r]), len(rows[r]))
		}
		for c := range rows[r] {
			if got[r][c] != rows[r][c] {
				if r == 0 {
					return fmt.Errorf("column %d is named %q, not %q", c+1, display.Terminal(got[r][c]), rows[r][c])
				}
				where := fmt.Sprintf("row %d", r)
				if k := slices.Index(rows[0], "cell"); k >= 0 {
					where += " (cell " + rows[r][k] + ")"
				}
				return fmt.Errorf("%s, %s: %q, not %q", where, rows[0][c], display.Terminal(got[r][c]), rows[r][c])
			}
		}
	}
	return fmt.Errorf("its bytes differ (quoting or line ends)")
}

// Engines names the engines that computed the exported cells, as the
// export recorded them (text from a file: escape it where it is printed).
func (x *Exported) Engines() string { return x.Final.Metadata["ump.engines"] }

// Versions names the builds of ump that started the exported cells (text
// from a file, as Engines), each
// with its number of cells, in order of first appearance ("not recorded"
// for cells from before ump recorded its build, or an export without the
// ump_version column).
func (x *Exported) Versions() string {
	col := x.Final.Column("ump_version")
	var names []string
	count := map[string]int{}
	for r := range x.Final.Rows() {
		v := "not recorded"
		if col != nil && col.Strings != nil && (col.Null == nil || !col.Null[r]) && col.Strings[r] != "" {
			v = col.Strings[r]
		}
		if count[v] == 0 {
			names = append(names, v)
		}
		count[v]++
	}
	for i, v := range names {
		names[i] = fmt.Sprintf("%s (%d cells)", v, count[v])
	}
	return strings.Join(names, "; ")
}

// cellRows maps each cell (by plan index) to its rows of an export.
func (x *Exported) cellRows(t *artifacts.Table) (map[int][]int, error) {
	if t.Rows() == 0 { // no cell finished: the export has no columns either
		return map[int][]int{}, nil
	}
	cells := t.Column("cell")
	if cells == nil || cells.Ints == nil {
		return nil, fmt.Errorf("%w: the export has no cell column", state.ErrBadArgument)
	}
	rows := map[int][]int{}
	for r, c := range cells.Ints {
		if c < 1 || int(c) > len(x.Registration.Plan.Cells) {
			return nil, fmt.Errorf(
				"%w: the export names cell %d of a plan of %d",
				state.ErrBadArgument,
				c,
				len(x.Registration.Plan.Cells),
			)
		}
		rows[int(c)-1] = append(rows[int(c)-1], r)
	}
	return rows, nil
}

// Finals is each cell's final figures (by plan index) as the final export
// holds them: the figure columns (the float columns that are not
// parameters) of its row, a null as the NaN the cell's final table holds
// (Export writes a one-row table's NaN as null); cells without a row have
// no status.
func (x *Exported) Finals() ([]report.Final, error) {
	rows, err := x.cellRows(x.Final)
	if err != nil {
		return nil, err
	}
	status := x.Final.Column("status")
	params := report.ParamColumns()
	finals := make([]report.Final, len(x.Registration.Plan.Cells))
	for i, rs := range rows {
		r := rs[0]
		finals[i] = report.Final{Status: status.Strings[r], Figures: map[string]float64{}}
		for _, c := range x.Final.Columns {
			switch {
			case c.Floats == nil || slices.Contains(params, c.Name):
			case c.Null != nil && c.Null[r]:
				finals[i].Figures[c.Name] = math.NaN()
			default:
				finals[i].Figures[c.Name] = c.Floats[r]
			}
		}
	}
	return finals, nil
}

// Counts is how many exported cells have each status (completed,
// diverged); the cells the export lacks did not finish.
func (x *Exported) Counts() map[string]int {
	counts := map[string]int{}
	if x.Final.Rows() > 0 {
		for _, s := range x.Final.Column("status").Strings {
			counts[s]++
		}
	}
	return counts
}

// Grid lays out the exported results as spec says (NewGrid).
func (x *Exported) Grid(spec manifests.Table) (*report.Grid, error) {
	if err := report.CheckTable(&x.Registration.Plan, spec); err != nil {
		return nil, err
	}
	finals, err := x.Finals()
	if err != nil {
		return nil, err
	}
	return report.NewGrid(&x.Registration.Plan, spec, finals)
}

// Curves builds the figures of the exported results, laid out as grid
// (Exported.Grid), from the rounds export, as Source.Curves does from a
// store's blobs.
func (x *Exported) Curves(grid *report.Grid, o report.CurveOptions) ([]figure.Figure, error) {
	if o.Live {
		return nil, fmt.Errorf(
			"%w: exported results hold finished cells only; a live figure needs the store",
			state.ErrBadArgument,
		)
	}
	rows, err := x.cellRows(x.Rounds)
	if err != nil {
		return nil, err
	}
	finals, err := x.Finals()
	if err != nil {
		return nil, err
	}
	return report.CurvesFrom(
		&x.Registration.Plan,
		grid,
		grid.Spec,
		o,
		nil,
		func(i int) (*artifacts.Table, bool, bool, error) {
			if len(rows[i]) == 0 {
				return nil, false, false, nil
			}
			return x.Rounds.Select(rows[i]), true, finals[i].Status == eventlog.Diverged, nil
		},
	)
}

// Command is the command that runs the exported manifest again: `ump run`
// of the embedded manifest it is (with the run's overrides), else of its
// ManifestFile in dir (as a path from where the command runs).
func (x *Exported) Command(dir string) string {
	reg := x.Registration
	if name, ok := manifests.EmbeddedOf(reg.Plan.Hash, reg.Overrides); ok {
		return strings.Join(append([]string{"ump run", name}, quoted(reg.Overrides)...), " ")
	}
	path := filepath.Join(dir, ManifestFile)
	if !plainWord.MatchString(path) {
		path = quoted([]string{path})[0]
	}
	return "ump run " + path
}

// plainWord is a word a shell takes as it is.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./=:,+-]+$`)

// quoted quotes overrides for a shell.
func quoted(overrides []string) []string {
	out := make([]string, len(overrides))
	for i, o := range overrides {
		out[i] = "'" + strings.ReplaceAll(o, "'", `'\''`) + "'"
	}
	return out
}
