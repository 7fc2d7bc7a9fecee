package resultsdir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ump-lab/ump/internal/bounded"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// RootFile is the record `ump report` writes beside its report.md: the
// digest of each manifest directory's record, signed by who drew the
// report. `ump report OUT` of that directory checks it and reports every
// directory it lists again. report.md is derived from the directories, as
// their figures are, and drawn again by every report; a root of an ump
// before that also holds report.md's digest, which is not checked.
const RootFile = "report-record.json"

// Root is a report's RootFile.
type Root struct {
	Report    string      `json:"report,omitempty"` // report.md's sha256:HEX, in roots of an ump before it was derived
	Manifests []RootEntry `json:"manifests"`        // in the report's order
	Signer    string      `json:"signer,omitempty"`
	Signature string      `json:"signature,omitempty"`
}

// RootEntry is a manifest directory of a report and its record's digest.
type RootEntry struct {
	Dir    string `json:"dir"`
	Record string `json:"record"`
}

func (r *Root) signed() []byte {
	if r.Report != "" {
		return manifests.CanonicalJSON(struct {
			Kind      string      `json:"kind"`
			Report    string      `json:"report"`
			Manifests []RootEntry `json:"manifests"`
			Signer    string      `json:"signer"`
		}{"ump report root 1", r.Report, r.Manifests, r.Signer})
	}
	return manifests.CanonicalJSON(struct {
		Kind      string      `json:"kind"`
		Manifests []RootEntry `json:"manifests"`
		Signer    string      `json:"signer"`
	}{"ump report root 2", r.Manifests, r.Signer})
}

// WriteRoot writes out's RootFile over the records of dirs (directories
// in out, in the report's order), signed with key unless it is nil, in
// one step (WriteFileAtomic).
func WriteRoot(out string, dirs []string, key *signing.Key) error {
	var r Root
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(out, dir, RecordFile))
		if err != nil {
			return err
		}
		r.Manifests = append(r.Manifests, RootEntry{Dir: dir, Record: digestOf(data)})
	}
	if key != nil {
		r.Signer = key.Public()
		r.Signature = key.Sign(r.signed())
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(out, RootFile, append(data, '\n'))
}

// IsRoot reports whether dir holds a report's RootFile.
func IsRoot(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RootFile))
	return err == nil
}

// ReadRoot checks dir's RootFile (each record it lists unchanged, its
// signature) and returns the manifest directories it lists in the
// report's order, as paths from where ump runs.
func ReadRoot(dir string) ([]string, error) {
	rootPath := filepath.Join(dir, RootFile)
	data, err := bounded.ReadFile(rootPath, limitOf(RecordFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", state.ErrBadArgument, err)
	}
	var r Root
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, rootPath, err)
	}
	if (r.Signer != "" || r.Signature != "") && !signing.Verifies(r.Signer, r.signed(), r.Signature) {
		return nil, fmt.Errorf(
			"%w: %s carries a signature by %s that does not verify: it was changed after signing",
			state.ErrBadArgument,
			rootPath,
			display.Terminal(r.Signer),
		)
	}
	var dirs []string
	for _, m := range r.Manifests {
		if !filepath.IsLocal(m.Dir) || filepath.Base(m.Dir) != m.Dir {
			return nil, fmt.Errorf(
				"%w: %s lists %q, not a directory beside it",
				state.ErrBadArgument,
				rootPath,
				display.Terminal(m.Dir),
			)
		}
		name := filepath.Join(m.Dir, RecordFile)
		got, err := bounded.ReadFile(filepath.Join(dir, name), limitOf(RecordFile))
		if err != nil {
			return nil, fmt.Errorf("%w: %s lists %s: %w", state.ErrBadArgument, rootPath, name, err)
		}
		if digestOf(got) != m.Record {
			return nil, fmt.Errorf(
				"%w: %s was changed after ump report wrote it: its digest is not the one %s records",
				state.ErrBadArgument,
				filepath.Join(dir, name),
				rootPath,
			)
		}
		dirs = append(dirs, filepath.Join(dir, m.Dir))
	}
	return dirs, nil
}

// Expand replaces each report's directory among args (one that holds a
// RootFile and is not itself a manifest's directory) by the manifest
// directories it lists (ReadRoot); other arguments stay as they are.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, arg := range args {
		if !IsRoot(arg) || IsExported(arg) {
			out = append(out, arg)
			continue
		}
		dirs, err := ReadRoot(arg)
		if err != nil {
			return nil, err
		}
		out = append(out, dirs...)
	}
	return out, nil
}
