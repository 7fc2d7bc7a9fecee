package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/train"
)

var updateKeys = flag.Bool(
	"update-keys",
	false,
	"rewrite testdata/keys.golden.json (only when an issue changes cache keys)",
)

// pinnedManifests sweep every kind of every block with and without its
// parameters: the algorithms, codecs, topologies and partitions, as they
// were when their keys were first pinned.
var pinnedManifests = []string{`version: 1
name: algorithms
task: {dataset: synthetic}
rounds: 10
lr: 0.1
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: gt-dsum, tracker_init: unbiased}, {name: dpsgd}, {name: dsgdm, nesterov: true},
    {name: local-sgd-m}, {name: qg-dsgdm, beta: 0.5}, {name: slowmo, slow_alpha: 2}, {name: dsgt}, {name: d2}]
`, `version: 1
name: codecs
task: {dataset: quadratic}
workers: 8
rounds: 10
lr: 0.1
algorithm: {name: d-sum}
sweep:
  compression: [{codec: none}, {codec: fp16}, {codec: topk}, {codec: randomk, ratio: 0.1}, {codec: threshold, tau: 0.01},
    {codec: qsgd, levels: 4}, {codec: terngrad}, {codec: sign, memory: none}, {codec: efsign}, {codec: onebit, gamma: 0.2},
    {codec: natural}, {codec: powersgd, rank: 2}]
`, `version: 1
name: topologies
task: {dataset: quadratic}
workers: 16
rounds: 10
lr: 0.1
algorithm: {name: gt-dsum}
sweep:
  topology: [{kind: ring}, {kind: ring, weights: uniform}, {kind: torus}, {kind: torus, rows: 2}, {kind: full}, {kind: star},
    {kind: exponential}, {kind: erdos-renyi, p: 0.4}, {kind: random-regular, degree: 3}, {kind: mesh-to-ring},
    {kind: time-varying-ring}, {kind: one-peer-exponential}]
`, `version: 1
name: partitions
task: {dataset: synthetic, model: logreg}
rounds: 10
lr: 0.1
algorithm: {name: dsgdm}
sweep:
  partition: [{kind: iid}, {kind: dirichlet, alpha: 0.1}, {kind: dirichlet, alpha: 1, min_size: 5}, {kind: shards}, {kind: shards, shards: 3}]
`}

// keyManifests are the pinned manifests and, generated from
// algorithms.Family, one manifest per algorithm sweeping its defaults and
// each parameter away from its default (so a new algorithm's keys are
// pinned with no edit here: -update-keys adds them).
func keyManifests() []string {
	out := slices.Clone(pinnedManifests)
	for _, k := range algorithms.Family.Kinds {
		entries := []string{"{name: " + k.Name + "}"}
		for _, p := range k.Params {
			var v any
			switch p.Type {
			case kinds.String:
				v = p.Choices[len(p.Choices)-1]
			case kinds.Bool:
				v = true
			case kinds.Int:
				v = 2
			case kinds.Float:
				if d, ok := p.Default.(float64); ok && d != 0 {
					v = d / 2
				} else {
					v = 0.5
				}
			}
			entries = append(entries, fmt.Sprintf("{name: %s, %s: %v}", k.Name, p.Name, v))
		}
		out = append(
			out,
			fmt.Sprintf("version: 1\nname: algorithm-%s\ntask: {dataset: synthetic}\nrounds: 10\nlr: 0.1\n"+
				"algorithm: {name: %s}\nsweep:\n  algorithm: [%s]\n", k.Name, k.Name, strings.Join(entries, ", ")),
		)
	}
	return out
}

// TestCacheKeysAreStable pins what enters every cell key and stage cache
// key besides the data digest and the engine (which depend on the
// machine): each cell's spec and each stage's canonical params. Users'
// stores hold results under these keys, so they change only when an issue
// says so (go test ./pipeline -run CacheKeys -update-keys).
func TestCacheKeysAreStable(t *testing.T) {
	type cell struct {
		Spec   string            `json:"spec_sha256"`
		Params map[string]string `json:"stage_params"`
		// Former are the params of the stages whose keys an earlier ump
		// hashed otherwise (stages.FormerlyKeyed): its results serve under them.
		Former map[string]string `json:"former_stage_params,omitempty"`
	}
	got := map[string][]cell{}
	for _, src := range keyManifests() {
		plan, err := manifests.Parse("keys.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var cells []cell
		for i := range plan.Cells {
			sum := sha256.Sum256(plan.Cells[i].Spec())
			c := cell{Spec: hex.EncodeToString(sum[:]), Params: map[string]string{}, Former: map[string]string{}}
			for _, st := range cellStages(nil) {
				c.Params[st.Name()] = string(st.Params(&plan.Cells[i].Config))
				if former := st.FormerParams(&plan.Cells[i].Config); former != nil {
					c.Former[st.Name()] = string(former)
				}
			}
			cells = append(cells, c)
		}
		got[plan.Manifest.Name+" "+plan.Hash] = cells
	}
	data, _ := json.MarshalIndent(got, "", "  ")
	const golden = "testdata/keys.golden.json"
	if *updateKeys {
		if err := os.WriteFile(golden, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(data)+"\n" {
		t.Errorf("cache keys changed; users' stores would stop matching. Now:\n%s", data)
	}
}

// TestCellKeyValue pins a whole cell key: how a cell's spec and its inputs
// (data digest and engine) are combined. A change would orphan every
// user's cached results, as a change of spec would.
func TestCellKeyValue(t *testing.T) {
	plan, err := manifests.Parse("keys.yaml", []byte(pinnedManifests[0]))
	if err != nil {
		t.Fatal(err)
	}
	got := cellKey(&plan.Cells[0], "sha256:0123456789abcdef\ngo-cpu-float32/v3")
	if want := "5a5b2881cf57bf6d26bf8cb199c2b3a5f7305a79a17536c7e3f5e11d5dc92500"; got != want {
		t.Errorf("cell key %s, pinned %s", got, want)
	}
}

// TestStageKeyValue pins a whole stage key: the stage's name and version,
// its params, the cell's inputs (data digest and engine) and each upstream
// output by its digest, its size aside. Each of those changes the key;
// a change to how they combine would orphan every user's cached stages.
func TestStageKeyValue(t *testing.T) {
	plan, err := manifests.Parse("keys.yaml", []byte(pinnedManifests[0]))
	if err != nil {
		t.Fatal(err)
	}
	st := cellStages(nil)[2] // train
	params := st.Params(&plan.Cells[0].Config)
	const inputs = "sha256:0123456789abcdef\ngo-cpu-float32/v3"
	upstream := func(digest string, size int64) map[string]*stages.Result {
		return map[string]*stages.Result{
			"partition": {Outputs: map[string]artifacts.Ref{"assignment": {Digest: digest, Size: size}}},
		}
	}
	const a, b = "sha256:" + "aa", "sha256:" + "bb"
	got, former := stageKeys(st, &plan.Cells[0].Config, inputs, upstream(a, 10))
	if want := "ca8ed65657f0f81468dcb874263c1517f05df3518665c49858fa61244b0dde05"; got != want {
		t.Errorf("stage key %s, pinned %s", got, want)
	}
	// The key the train stage had before it declared exactly what it
	// reads: results recorded under it serve (TestFormerKeysServe).
	if want := "8d8328b88afa512c960e6d9956623baafc7ffe67c81ad1e8ee8cff2ecaddf5eb"; former != want {
		t.Errorf("former stage key %s, pinned %s", former, want)
	}
	if k := stageKey(st, params, inputs, upstream(a, 11)); k != got {
		t.Errorf("an upstream output's size changed the stage key: %s, not %s", k, got)
	}
	other := plan.Cells[1].Config
	for what, k := range map[string]string{
		"another stage":           stageKey(cellStages(nil)[3], params, inputs, upstream(a, 10)),
		"other params":            stageKey(st, st.Params(&other), inputs, upstream(a, 10)),
		"another data digest":     stageKey(st, params, "sha256:fedcba9876543210\ngo-cpu-float32/v3", upstream(a, 10)),
		"another engine":          stageKey(st, params, "sha256:0123456789abcdef\ngomlx-float32/v4", upstream(a, 10)),
		"another upstream digest": stageKey(st, params, inputs, upstream(b, 10)),
		"no upstream output":      stageKey(st, params, inputs, nil),
	} {
		if k == got {
			t.Errorf("%s left the stage key as it was", what)
		}
	}
}

// TestCellInputsNameTheEngine: a data-set cell's inputs end with the
// engine that computes it (its version, and nothing about the machine), so
// that its key changes with the engine's numerics.
func TestCellInputsNameTheEngine(t *testing.T) {
	plan, err := manifests.Parse("keys.yaml", []byte(pinnedManifests[3]))
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := cellInputs(&plan.Cells[0].Config, datasets.NewLibrary(t.TempDir()), engines.Set{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(inputs, "sha256:") || !strings.HasSuffix(inputs, "\n"+cpu.Name()) {
		t.Errorf("cell inputs %q; want the data digest, then the engine %q", inputs, cpu.Name())
	}
}

// everyManifest is a two-cell manifest evaluated and checkpointed as
// often as asked.
func everyManifest(evaluate, checkpoint int) string {
	return fmt.Sprintf(`version: 1
name: every
task: {dataset: synthetic, model: mlp}
workers: 4
rounds: 4
local_steps: 2
batch_size: 16
lr: 0.05
algorithm: {name: d-sum}
evaluate: {every: %d}
checkpoint: {every: %d}
sweep:
  seed: [1, 2]
`, evaluate, checkpoint)
}

// TestEvaluateAndCheckpointEveryKeepTheCell: how often a cell evaluates
// and saves checkpoints cannot change its trained model's bits, so it is
// not in the cell key. Run in fresh stores, two values of each give
// bit-identical trained models; run in one store after another, the
// second manifest finds every cell cached under the same keys.
func TestEvaluateAndCheckpointEveryKeepTheCell(t *testing.T) {
	ctx := context.Background()
	trained := func(s *Store) map[string][][]float32 {
		t.Helper()
		evs, err := s.Log.ByKind(eventlog.StageCompleted)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][][]float32{}
		for _, ev := range evs {
			if ev.Stage != stages.Train {
				continue
			}
			data, err := s.Blobs.Get(ctx, ev.Outputs[stages.LastCheckpoint.Name])
			if err != nil {
				t.Fatal(err)
			}
			st, err := train.DecodeTrainState(data)
			if err != nil {
				t.Fatal(err)
			}
			if st.Round != 4 {
				t.Fatalf("cell %s trained %d rounds of 4", ev.Cell, st.Round)
			}
			out[ev.Cell] = st.Vectors["x"]
		}
		return out
	}
	var first map[string][][]float32
	var keys []string
	shared, lib := openTestStore(t), datasets.NewLibrary(t.TempDir())
	for i, every := range [][2]int{{1, 10}, {3, 2}, {2, 1}} {
		plan := parse(t, everyManifest(every[0], every[1]))
		s := openTestStore(t)
		if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{},
			Data: lib}).Run(ctx, plan); err != nil {
			t.Fatal(err)
		}
		got := trained(s)
		if len(got) != 2 {
			t.Fatalf("evaluate.every %d, checkpoint.every %d: %d trained cells, want 2", every[0], every[1], len(got))
		}
		r := &Runner{
			Log:     shared.Log,
			Blobs:   shared.Blobs,
			Dir:     shared.Path,
			Stages:  cellStages(nil),
			Engines: engines.Set{},
			Data:    lib,
		}
		out, err := r.Run(ctx, plan)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := r.Register(ctx, plan)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, keys = got, reg.CellKeys
			continue
		}
		if !slices.Equal(reg.CellKeys, keys) {
			t.Errorf(
				"evaluate.every %d, checkpoint.every %d: cell keys %v, first %v",
				every[0],
				every[1],
				reg.CellKeys,
				keys,
			)
		}
		if out.Cached != 2 {
			t.Errorf(
				"evaluate.every %d, checkpoint.every %d after another value: %d of 2 cells cached",
				every[0],
				every[1],
				out.Cached,
			)
		}
		for cell, x := range got {
			for w := range x {
				if !slices.Equal(x[w], first[cell][w]) {
					t.Errorf(
						"evaluate.every %d, checkpoint.every %d: cell %s worker %d trained other bits",
						every[0],
						every[1],
						cell,
						w,
					)
				}
			}
		}
	}
}
