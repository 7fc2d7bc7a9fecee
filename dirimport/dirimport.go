package dirimport

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// Stats counts what an import of one directory did.
type Stats struct {
	Hash     string // the manifest's
	Cells    int    // the cells the directory holds
	Imported int    // brought into the store
	Present  int    // already finished in the store: left as they were
	Plan     int    // the cells of the manifest
}

// Directory is a results directory checked for import (Check).
type Directory struct {
	Path    string
	x       *resultsdir.Exported
	records []resultsdir.CellRecord
	from    string // where the cells come from, as their provenance says
}

// Check reads the results directory dir and checks everything an import
// of its cells needs, before anything is written: the directory against
// its record (resultsdir.ReadExported) and its rows against its cells
// (resultsdir.Exported.Cells); each cell's key against the key this
// machine computes for it (runner's Engines and Data), so that a cell of
// another engine is refused by name (pipeline.ErrOtherEngine); its
// signature, by a key of trust (or none, with trust.Unsigned;
// signing.ErrUntrusted); its events as a pull checks them
// (pipeline.CheckPulled, with runner's Stages); its outputs and status
// against its events, and its tables against their digests.
func Check(ctx context.Context, runner *pipeline.Runner, trust *signing.Trust, dir string) (*Directory, error) {
	x, err := resultsdir.ReadExported(dir)
	if err != nil {
		return nil, err
	}
	records, err := x.Cells()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	plan := &x.Registration.Plan
	cellsPath := filepath.Join(dir, resultsdir.CellsFile)
	ours, err := runner.Keys(ctx, plan)
	if err != nil {
		return nil, err
	}
	evs := []eventlog.Event{*x.Registration.Event()}
	for _, c := range records {
		cell := &plan.Cells[c.Cell-1]
		what := fmt.Sprintf("cell %d (%s) of %s", c.Cell, cell.LabelString(), dir)
		if ours[c.Cell-1] != c.Key {
			engine, _ := runner.Engines.Name(&cell.Config)
			return nil, fmt.Errorf("%w: %s was computed under engine %q (its cell key %.12s); "+
				"this machine computes it under %q (key %.12s), or its data differ: ump import takes cells "+
				"of this machine's engine and data only, and `ump report %s` reads them as they are",
				pipeline.ErrOtherEngine, what, engineOf(c.Events), c.Key, engine, ours[c.Cell-1], dir)
		}
		if err := trust.Verify(what, c.Signer, c.Signed(), c.Signature); err != nil {
			return nil, err
		}
		if err := agrees(&c); err != nil {
			return nil, fmt.Errorf("%w: %s, cell %d: %v", state.ErrBadArgument, cellsPath, c.Cell, err)
		}
		evs = append(evs, c.Events...)
	}
	if err := pipeline.CheckPulled(plan.Hash, evs, runner.Stages, runner.Data); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; nothing was imported", state.ErrBadArgument, cellsPath, err)
	}
	return &Directory{Path: dir, x: x, records: records, from: "results directory " + abs}, nil
}

// Import brings the directory's cells into the store that runner runs on
// (its Log and Blobs): each cell's tables, its events and a record of
// where it came from and who signed it (eventlog.Provenance), then the
// manifest's registration, so that the manifest is listed once its cells
// are in. A cell the store already holds finished is left as it is. A
// cell taken unsigned counts for this manifest alone.
func (d *Directory) Import(ctx context.Context, runner *pipeline.Runner) (Stats, error) {
	reg := &d.x.Registration
	plan := &reg.Plan
	st := Stats{Hash: plan.Hash, Cells: len(d.records), Plan: len(plan.Cells)}
	src := state.Source{Events: runner.Log, Blobs: runner.Blobs}
	have, err := runner.Log.ByManifest(plan.Hash)
	if err != nil {
		return st, err
	}
	var add []eventlog.Event
	for _, c := range d.records {
		view, err := src.Cell(plan.Hash, c.Key)
		if err != nil {
			return st, err
		}
		if view.Status == eventlog.Completed || view.Status == eventlog.Diverged {
			st.Present++
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(c.Tables)) {
			if _, err := runner.Blobs.Put(ctx, c.Tables[name]); err != nil {
				return st, err
			}
		}
		from := eventlog.Provenance{From: d.from, Signer: c.Signer, Signature: c.Signature, TablesOnly: true}
		p := eventlog.New(eventlog.CellImported, from)
		p.Manifest, p.Cell, p.Time = plan.Hash, c.Key, time.Now().UTC()
		add = append(append(add, c.Events...), *p)
		st.Imported++
	}
	if regEv := reg.Event(); !registered(have, regEv) {
		regEv.Time = time.Now().UTC()
		add = append(add, *regEv)
	}
	_, err = pipeline.ImportAbsent(ctx, runner.Log, have, add)
	return st, err
}

// agrees checks a cell against its events and tables: every event is of
// its cell; its events record its outputs and its status; each table it
// carries is the output whose digest the cell records, and it carries
// each of those the cell has.
func agrees(c *resultsdir.CellRecord) error {
	for k := range c.Events {
		if ev := &c.Events[k]; ev.Cell != c.Key {
			return fmt.Errorf("its event %d is cell %.12s's, not its own (%.12s)", k+1, ev.Cell, c.Key)
		}
	}
	outputs := map[string]string{}
	for _, ev := range c.Events {
		if ev.Kind == eventlog.StageCompleted {
			for name, ref := range ev.Outputs {
				outputs[ev.Stage+"/"+name] = ref.Digest
			}
		}
	}
	if !maps.Equal(outputs, c.Outputs) {
		return fmt.Errorf("it records outputs %v, its events %v", c.Outputs, outputs)
	}
	view, err := state.FoldCell(c.Key, c.Events)
	if err != nil {
		return err
	}
	if view.Status != c.Status {
		return fmt.Errorf("its status is %s, its events say %s", c.Status, view.Status)
	}
	var carried []string
	for _, out := range resultsdir.CarriedTables {
		name := out.Stage + "/" + out.Name
		carried = append(carried, name)
		if _, ok := c.Outputs[name]; ok {
			if _, ok := c.Tables[name]; !ok {
				return fmt.Errorf("it has a %s output but does not carry its table", name)
			}
		}
	}
	for name, data := range c.Tables {
		switch digest, ok := c.Outputs[name]; {
		case !slices.Contains(carried, name) || !ok:
			return fmt.Errorf("it carries a table %q that is not one of its outputs %v", name, carried)
		case digest != fmt.Sprintf("sha256:%x", sha256.Sum256(data)):
			return fmt.Errorf("its table %s is not the one its digest %s names", name, digest)
		}
	}
	return nil
}

// engineOf is the engine a cell's events say computed it.
func engineOf(evs []eventlog.Event) string {
	if engine := (&state.CellView{Events: evs}).Fingerprint()["engine"]; engine != "" {
		return engine
	}
	return "(not recorded)"
}

// registered reports whether the manifest's latest registration in the
// store (have: its events) is ev's.
func registered(have []eventlog.Event, ev *eventlog.Event) bool {
	for i := len(have) - 1; i >= 0; i-- {
		switch have[i].Kind {
		case eventlog.ManifestForgotten:
			return false
		case eventlog.ManifestRegistered:
			return string(have[i].Payload) == string(ev.Payload)
		}
	}
	return false
}

// Say prints what an import did, one line.
func (st Stats) Say(w io.Writer, dir string) {
	fmt.Fprintf(w, "imported %s (manifest %.12s): %d of its %d finished cells brought in, %d already here; "+
		"%d of the manifest's %d cells finished there\n",
		dir, st.Hash, st.Imported, st.Cells, st.Present, st.Cells, st.Plan)
}
