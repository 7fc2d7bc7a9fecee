package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// Referenced lists, sorted and once each, every blob an event refers to,
// less the superseded checkpoints.
func Referenced(evs []eventlog.Event) []artifacts.Ref {
	old := superseded(evs)
	seen := map[string]artifacts.Ref{}
	for _, ev := range evs {
		for _, ref := range ev.Outputs {
			if !old[ref.Digest] {
				seen[ref.Digest] = ref
			}
		}
	}
	refs := make([]artifacts.Ref, 0, len(seen))
	for _, ref := range seen {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b artifacts.Ref) int { return strings.Compare(a.Digest, b.Digest) })
	return refs
}

// superseded are the digests of the checkpoints that two later
// checkpoints of the same stage key, from runs that evaluate as often,
// replace (and that no other event refers to): training resumes from the furthest whose blob reads back,
// the one before it stands in for a damaged one, and a stage's final
// checkpoint is its output; older ones are not kept. The runner removes
// each as the next is recorded, gc collects any left, push and pull skip
// them and CheckBlobs does not read them; so a store holds at most two
// checkpoints per training stage and evaluation interval, whatever its
// rounds (a cell computed again for more evaluations keeps its own).
func superseded(evs []eventlog.Event) map[string]bool {
	type training struct {
		key      string
		evaluate int
	}
	rounds := map[training][]int{} // a stage key's runs, by how often they evaluate -> their checkpoints' rounds
	for _, ev := range evs {
		if _, ok := ev.Outputs[eventlog.RoundCheckpoint]; ok && ev.Kind == eventlog.RoundCompleted {
			t := training{ev.StageKey, evaluateEvery(&ev)}
			rounds[t] = append(rounds[t], ev.Round)
		}
	}
	kept := map[training]int{} // -> the round from which checkpoints are kept
	for t, rs := range rounds {
		slices.Sort(rs)
		rs = slices.Compact(rs)
		kept[t] = rs[max(0, len(rs)-keptCheckpoints)]
	}
	old, live := map[string]bool{}, map[string]bool{}
	for _, ev := range evs {
		for _, ref := range ev.Outputs {
			if ev.Kind == eventlog.RoundCompleted && ev.Round < kept[training{ev.StageKey, evaluateEvery(&ev)}] {
				old[ref.Digest] = true
			} else {
				live[ref.Digest] = true
			}
		}
	}
	for d := range live {
		delete(old, d)
	}
	return old
}

// evaluateEvery is how often the run that recorded a round evaluates (0
// where ump did not record it).
func evaluateEvery(ev *eventlog.Event) int {
	var rep struct {
		EvaluateEvery int `json:"evaluate_every"`
	}
	json.Unmarshal(ev.Payload, &rep) // a round without a payload (or an unreadable one) evaluates as ump did not record
	return rep.EvaluateEvery
}

// keptCheckpoints is how many of a training stage's furthest checkpoints
// the store keeps (superseded).
const keptCheckpoints = 2

// CellsOf groups events by cell, leaving out those of no cell.
func CellsOf(evs []eventlog.Event) map[string][]eventlog.Event {
	byCell := map[string][]eventlog.Event{}
	for _, ev := range evs {
		if ev.Cell != "" {
			byCell[ev.Cell] = append(byCell[ev.Cell], ev)
		}
	}
	return byCell
}

// ImportAbsent imports, in order and in chunks of importChunk, the events
// that have (the log l's own) lacks, and returns how many. Each chunk is one
// transaction, so an interruption between chunks leaves the log whole.
func ImportAbsent(ctx context.Context, l eventlog.Log, have, evs []eventlog.Event) (int, error) {
	known := map[string]bool{}
	for _, ev := range have {
		known[Identity(ev)] = true
	}
	missing := slices.DeleteFunc(slices.Clone(evs), func(ev eventlog.Event) bool { return known[Identity(ev)] })
	done := 0
	for done < len(missing) {
		if ctx.Err() != nil {
			return done, ErrInterrupted
		}
		n := min(len(missing)-done, importChunk)
		if err := l.Import(missing[done : done+n]); err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// importChunk is how many events ImportAbsent imports in one
// transaction, well under Badger's transaction limit.
const importChunk = 256

// CheckPulled accepts pushed events only if they are the manifest's own:
// every event names the manifest; its registrations hash to it; every
// other event belongs to one of its cells, whose key follows from the
// cell's spec and recorded inputs; every stage event's key follows from
// the stage's parameters, those inputs and the outputs the cell's earlier
// stages recorded; every payload decodes to its kind's type and every
// output is a well-formed ref. So a pulled file changes no other
// manifest's results and serves no other manifest's cache.
func CheckPulled(hash string, evs []eventlog.Event, stgs []stages.Stage, data *datasets.Library) error {
	cells := map[string]*manifests.Cell{}
	byCell := map[string][]eventlog.Event{}
	registered := false
	for i := range evs {
		ev := &evs[i]
		at := fmt.Sprintf("line %d (%s)", ev.Seq, ev.Kind)
		if ev.Manifest != hash {
			return fmt.Errorf("%s belongs to manifest %q, not %s", at, ev.Manifest, hash)
		}
		if err := ev.CheckForeign(); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if ev.Kind == eventlog.ManifestRegistered {
			reg, err := state.RegistrationOf(ev)
			if err != nil {
				return fmt.Errorf("%s: %v", at, err)
			}
			if reg.Plan.Hash != hash || manifests.HashOf(reg.Plan.Manifest) != hash ||
				len(reg.CellKeys) != len(reg.Plan.Cells) {
				return fmt.Errorf(
					"%s: the registration is not of manifest %s (its manifest hashes to %s)",
					at,
					hash,
					manifests.HashOf(reg.Plan.Manifest),
				)
			}
			if err := sameCells(&reg.Plan); err != nil {
				return fmt.Errorf("%s: %v", at, err)
			}
			for k, key := range reg.CellKeys {
				cells[key] = &reg.Plan.Cells[k]
			}
			registered = true
			continue
		}
		byCell[ev.Cell] = append(byCell[ev.Cell], *ev)
	}
	if !registered {
		return fmt.Errorf("no registration of manifest %s", hash)
	}
	for _, key := range slices.Sorted(maps.Keys(byCell)) {
		cell, ok := cells[key]
		if !ok {
			return fmt.Errorf("line %d: cell %q is not a cell of the manifest", byCell[key][0].Seq, key)
		}
		if err := CheckCell(key, cell, byCell[key], stgs, data); err != nil {
			return fmt.Errorf("cell %d: %v", cell.Index+1, err)
		}
	}
	return nil
}

// sameCells checks that a registered plan's cells are exactly its
// manifest's expansion, re-expanded here.
func sameCells(plan *manifests.Plan) error {
	data, err := json.Marshal(plan.Manifest)
	if err != nil {
		return err
	}
	again, err := manifests.Parse("the registered manifest", data)
	if err != nil {
		return err
	}
	if len(again.Cells) != len(plan.Cells) {
		return fmt.Errorf("the registration lists %d cells; its manifest has %d", len(plan.Cells), len(again.Cells))
	}
	for i := range again.Cells {
		if !bytes.Equal(manifests.CanonicalJSON(again.Cells[i].Config), manifests.CanonicalJSON(plan.Cells[i].Config)) {
			return fmt.Errorf(
				"the registration's cell %d (%s) is not its manifest's cell %d (%s)",
				i+1,
				plan.Cells[i].LabelString(),
				i+1,
				again.Cells[i].LabelString(),
			)
		}
	}
	return nil
}

// CheckCell checks a cell's key against its spec and inputs, and its
// stage events' keys against the chain of its stages.
func CheckCell(
	key string,
	cell *manifests.Cell,
	evs []eventlog.Event,
	stgs []stages.Stage,
	data *datasets.Library,
) error {
	inputs, err := pulledInputs(key, cell, evs, data)
	if err != nil {
		return err
	}
	// The stage keys as the runner computes them: each from the outputs
	// the earlier stages completed with.
	done := map[string]*stages.Result{}
	for _, ev := range evs {
		if ev.Kind == eventlog.StageCompleted {
			done[ev.Stage] = &stages.Result{Outputs: ev.Outputs}
		}
	}
	want := map[string][]string{} // today's key, and the former one (stages.FormerlyKeyed)
	upstream := map[string]*stages.Result{}
	for _, st := range stgs {
		key, former := stageKeys(st, &cell.Config, inputs, upstream)
		want[st.Name()] = []string{key}
		if former != "" {
			want[st.Name()] = append(want[st.Name()], former)
		}
		if res, ok := done[st.Name()]; ok {
			upstream[st.Name()] = res
		} else {
			break
		}
	}
	for _, ev := range evs {
		if ev.Stage == "" && ev.StageKey == "" {
			continue
		}
		if !slices.Contains(want[ev.Stage], ev.StageKey) {
			return fmt.Errorf(
				"line %d (%s of stage %q): stage key %.12s does not follow from the cell's spec, inputs and earlier "+
					"stages",
				ev.Seq,
				ev.Kind,
				ev.Stage,
				ev.StageKey,
			)
		}
	}
	return nil
}

// pulledInputs finds a pulled cell's inputs (cellInputs) and checks its
// key: from its CellStarted fingerprint, or, for events pushed before
// fingerprints recorded them, the local data's digest and the recorded
// engine.
func pulledInputs(key string, cell *manifests.Cell, evs []eventlog.Event, data *datasets.Library) (string, error) {
	fp := (&state.CellView{Events: evs}).Fingerprint()
	inputs, ok := fp["inputs"]
	if !ok {
		digest, err := datasetDigest(&cell.Config, data)
		if err != nil {
			return "", fmt.Errorf(
				"its events do not record its inputs (pushed by an older ump) and its data is not here to recompute "+
					"them: %v",
				err,
			)
		}
		inputs = digest + "\n" + fp["engine"]
	}
	if cellKey(cell, inputs) != key {
		return "", fmt.Errorf("its key %.12s does not follow from its spec and inputs %q", key, inputs)
	}
	return inputs, nil
}

// Identity tells events apart across stores (sequence numbers differ).
func Identity(ev eventlog.Event) string {
	return fmt.Sprintf(
		"%s|%s|%s|%s|%s|%d",
		ev.Time.Format("2006-01-02T15:04:05.000000000"),
		ev.Kind,
		ev.Manifest,
		ev.Cell,
		ev.StageKey,
		ev.Round,
	)
}
