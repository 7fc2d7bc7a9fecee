package resultsdir

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
)

// CellsFile holds a directory's finished cells as a store holds them: one
// CellRecord a line, in plan order, gzipped. ump import brings them into
// a store, so that a run there computes only the cells it lacks.
const CellsFile = "cells.jsonl.gz"

// CarriedTables are the outputs a CellRecord carries whole: the tables
// every report, export and plot reads (a partition's class histogram
// among them, for its heat map). The others (checkpoints, the samples'
// assignment, the mixing matrices) travel as digests only.
var CarriedTables = []stages.Output{stages.Histogram, stages.Rounds, stages.Final}

// CellRecord is a finished cell of a results directory: its events, the
// digests of its stages' outputs, its tables (CarriedTables, as the store
// holds them) and who signed it. The signature covers the manifest, the
// cell, its key, its status and its outputs' digests, the tables' among
// them, so it holds in any store, and any manifest, the cell is brought
// into.
type CellRecord struct {
	Cell      int               `json:"cell"` // from 1
	Key       string            `json:"cell_key"`
	Status    string            `json:"status"`  // completed or diverged
	Outputs   map[string]string `json:"outputs"` // stage/output -> digest, of its completed stages
	Tables    map[string][]byte `json:"tables"`  // stage/output -> the table's bytes
	Events    []eventlog.Event  `json:"events"`  // as they count for the manifest, each naming it
	Signer    string            `json:"signer,omitempty"`
	Signature string            `json:"signature,omitempty"`
	// kept: the cell was imported, and its signature (or its lack of one)
	// is the one it came with; no report signs it anew.
	kept bool
}

// Signed is what a cell's signature covers: its key (its spec, data and
// engine), status and outputs' digests, and the signer's name. No
// manifest: the cell is the same in every manifest that sweeps over it,
// so a sweep that extends another keeps its cells' signatures.
func (c *CellRecord) Signed() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "ump cell 1\ncell_key %s\nstatus %s\nsigner %s\n", c.Key, c.Status, c.Signer)
	for _, name := range slices.Sorted(maps.Keys(c.Outputs)) {
		fmt.Fprintf(&b, "output %s %s\n", name, c.Outputs[name])
	}
	return []byte(b.String())
}

// outputName is how a CellRecord names a stage's output.
func outputName(out stages.Output) string { return out.Stage + "/" + out.Name }

// cellRecords are the finished cells of a manifest, as the store holds
// them. A cell imported from a results directory keeps the signature it
// came with where it still covers the cell's outputs; a cell taken
// unsigned (pull or import with --trust-unsigned) stays unsigned.
func cellRecords(ctx context.Context, s state.Source, rep *state.Report) ([]CellRecord, error) {
	hash := rep.Plan.Hash
	records := []CellRecord{}
	for i, cell := range rep.Cells {
		if cell.Status != eventlog.Completed && cell.Status != eventlog.Diverged {
			continue
		}
		c := CellRecord{Cell: i + 1, Key: cell.Key, Status: cell.Status,
			Outputs: map[string]string{}, Tables: map[string][]byte{}}
		for _, st := range cell.Stages {
			if st.Status != eventlog.Completed || st.Result == nil {
				continue
			}
			for name, ref := range st.Result.Outputs {
				c.Outputs[st.Name+"/"+name] = ref.Digest
			}
		}
		for _, out := range CarriedTables {
			ref, ok := cell.Output(out)
			if !ok {
				continue
			}
			data, err := s.Blobs.Get(ctx, ref)
			if err != nil {
				return nil, fmt.Errorf("cell %d: %s: %w", i+1, outputName(out), err)
			}
			c.Tables[outputName(out)] = data
		}
		for _, ev := range cell.Events {
			if eventlog.Own(ev.Kind) {
				continue
			}
			ev.Manifest, ev.Seq = hash, uint64(len(c.Events)+1)
			c.Events = append(c.Events, ev)
		}
		for _, p := range cell.Imported {
			if p.Signer == "" { // taken unsigned: no key vouches for it
				c.kept = true
			}
		}
		if p := cell.DirImport(); p != nil && !c.kept {
			c.Signer, c.Signature = p.Signer, p.Signature
			c.kept = signing.Verifies(c.Signer, c.Signed(), c.Signature)
			if !c.kept { // recomputed here since, to other outputs: this store's own now
				c.Signer, c.Signature = "", ""
			}
		}
		records = append(records, c)
	}
	return records, nil
}

// SignCells signs, with key, the cells of x that its store computed (or
// pulled from S3 with a trusted signature); cells imported from a results
// directory keep the signature they came with, and cells taken unsigned
// stay unsigned.
func (x *Exported) SignCells(key *signing.Key) {
	for i := range x.cellRecords {
		if c := &x.cellRecords[i]; !c.kept {
			c.Signer = key.Public()
			c.Signature = key.Sign(c.Signed())
		}
	}
}

// ImportedSigners counts the cells of x that came into its store from
// results directories signed by another key than key, by their signer.
func (x *Exported) ImportedSigners(key *signing.Key) map[string]int {
	n := map[string]int{}
	for _, c := range x.cellRecords {
		if c.kept && c.Signer != key.Public() {
			n[c.Signer]++
		}
	}
	return n
}

// encodeCells is the cells file of records.
func encodeCells(records []CellRecord) ([]byte, error) {
	var b bytes.Buffer
	for i := range records {
		line, err := json.Marshal(&records[i])
		if err != nil {
			return nil, err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return gzipped(b.Bytes()), nil
}

// maxCellLine bounds one line of a cells file: a cell's events and
// tables, far beyond a full-scale cell's (some 30 KB).
const maxCellLine = 64 << 20

// ErrNoCells is returned (wrapped) for a results directory that does not
// carry its cells (CellsFile): one an ump before it wrote.
var ErrNoCells = errors.New("the directory does not carry its cells")

// Cells reads the cells file of a directory ReadExported read: every
// line a cell of the plan, in plan order, once, under the key the
// registration gives it; the rows of the final table exactly the cells
// it holds. What each cell's events say is for the importer to check.
func (x *Exported) Cells() ([]CellRecord, error) {
	path := x.dir + "/" + CellsFile
	if x.cellsData == nil {
		return nil, fmt.Errorf("%w: %s: not there; an ump from before results directories carried "+
			"their cells wrote %s, "+
			"and `ump report` of its store writes it again with them", ErrNoCells, path, x.dir)
	}
	zr, err := gzip.NewReader(bytes.NewReader(x.cellsData))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, path, err)
	}
	br := bufio.NewReaderSize(zr, 64<<10)
	plan := &x.Registration.Plan
	var records []CellRecord
	for n := 1; ; n++ {
		line, err := readLimitedLine(br, maxCellLine)
		if errors.Is(err, errLineTooLong) {
			return nil, fmt.Errorf("%w: %s: line %d is longer than the %d bytes a cell takes",
				state.ErrBadArgument, path, n, maxCellLine)
		}
		if len(line) == 0 && err != nil {
			if !errors.Is(err, errEnd) {
				return nil, fmt.Errorf("%w: %s: %v", state.ErrBadArgument, path, err)
			}
			break
		}
		var c CellRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", state.ErrBadArgument, path, n, err)
		}
		at := fmt.Sprintf("%s:%d", path, n)
		switch {
		case c.Cell < 1 || c.Cell > len(plan.Cells):
			return nil, fmt.Errorf("%w: %s names cell %d of a plan of %d",
				state.ErrBadArgument, at, c.Cell, len(plan.Cells))
		case len(records) > 0 && c.Cell <= records[len(records)-1].Cell:
			return nil, fmt.Errorf("%w: %s: cell %d after cell %d; the cells come once each, in plan order",
				state.ErrBadArgument, at, c.Cell, records[len(records)-1].Cell)
		case c.Key != x.Registration.CellKeys[c.Cell-1]:
			return nil, fmt.Errorf("%w: %s: cell %d's key is not the one %s gives it",
				state.ErrBadArgument, at, c.Cell, RegistrationFile)
		case c.Status != eventlog.Completed && c.Status != eventlog.Diverged:
			return nil, fmt.Errorf("%w: %s: cell %d has status %q; "+
				"a results directory holds completed and diverged cells",
				state.ErrBadArgument, at, c.Cell, c.Status)
		}
		records = append(records, c)
		if errors.Is(err, errEnd) {
			break
		}
	}
	finals, err := x.Finals()
	if err != nil {
		return nil, err
	}
	for i, f := range finals {
		has := slices.ContainsFunc(records, func(c CellRecord) bool { return c.Cell == i+1 })
		if (f.Status != "") != has {
			return nil, fmt.Errorf("%w: %s and %s do not hold the same cells (cell %d is in one of them only)",
				state.ErrBadArgument, path, FinalFile, i+1)
		}
	}
	for _, c := range records {
		if err := x.sameRows(&c, finals[c.Cell-1]); err != nil {
			return nil, fmt.Errorf("%w: %s: cell %d: %v", state.ErrBadArgument, path, c.Cell, err)
		}
	}
	return records, nil
}

// sameRows checks that the exports' rows of a cell are its tables: its
// status, and every figure of its final table and of each round of its
// rounds table, bit for bit, so that what signs the cell vouches for the
// rows a reader reads.
func (x *Exported) sameRows(c *CellRecord, final report.Final) error {
	if final.Status != c.Status {
		return fmt.Errorf("%s says %s, its record %s", FinalFile, final.Status, c.Status)
	}
	tables := map[string]*artifacts.Table{}
	for _, out := range []stages.Output{stages.Final, stages.Rounds} {
		data, ok := c.Tables[outputName(out)]
		if !ok {
			return fmt.Errorf("it carries no %s table", outputName(out))
		}
		t, err := artifacts.ReadArrow(data)
		if err != nil {
			return fmt.Errorf("its %s table: %v", outputName(out), err)
		}
		tables[out.Name] = t
	}
	if tables["final"].Rows() != 1 {
		return fmt.Errorf("its final table has %d rows, not one", tables["final"].Rows())
	}
	against := "its final table against " + FinalFile
	if err := sameFigures(against, figuresOf(tables["final"], 0), final.Figures); err != nil {
		return err
	}
	exported, err := x.roundFigures(c.Cell - 1)
	if err != nil {
		return err
	}
	rounds := tables["rounds"]
	round := rounds.Column("round")
	if round == nil || round.Ints == nil || rounds.Rows() != len(exported) {
		return fmt.Errorf("its rounds table has %d rows, %s %d", rounds.Rows(), RoundsFile, len(exported))
	}
	for r, n := range round.Ints {
		where := fmt.Sprintf("round %d of its rounds table against %s", n, RoundsFile)
		if err := sameFigures(where, figuresOf(rounds, r), exported[n]); err != nil {
			return err
		}
	}
	return nil
}

var (
	errLineTooLong = errors.New("line too long")
	errEnd         = errors.New("end of file")
)

// readLimitedLine reads a line of at most limit bytes, without its
// newline; errEnd (with what it read) where the file ends.
func readLimitedLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > limit+1 {
			return nil, errLineTooLong
		}
		line = append(line, part...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return line, errEnd
		case err != nil:
			return line, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}
