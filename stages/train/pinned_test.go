package train

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
)

// pinnedRuns are the digests of a 3-round run of every algorithm (and of
// D-SUM with a codec that draws random numbers), on every kernel path of
// every machine: the final state of every worker and every round's
// figures but the wall time. They change only with the CPU engine's Name
// (pinnedRunsEngine) or a stage's Version.
var pinnedRuns = map[string]string{
	"d-sum":          "db44c2e7f3e662cccdd706f5bb3b72535fc744f7acca4cb287f3f0c226abd87a",
	"d-sum powersgd": "08cf033d050391c83d9c7187c609edbf8873391fd5a697ba7ed453be73e5a920",
	"d2":             "0f5db422e66ed66182d47907c39d334f6a6f2423a858b74aeff3d7f836f7a930",
	"dpsgd":          "41462832a1cd185da28a74696a7ee1bb2b14210b937f2684c79fbb82465514a4",
	"dsgdm":          "b2848c300116467ea24e1c16e605aea561466d91e38871dd9f6f6a8a10a69099",
	"dsgt":           "d5213a1e92fdcda09f28c17572d73d5ce7454f31c304acac5d436577e334cfbc",
	"gt-dsum":        "1a4fe7749a70328cb4004b0ff0afb6b9b650f4e264a315ccec8ef15b6e3fb01d",
	"local-sgd-m":    "5cc02dd266fe3877a493f462b6888568f330c1a9c6f27af45fb32916f75b72be",
	"qg-dsgdm":       "3dafe852a12f8ce1b8bc5c1bc7bc4c36a4c64fe43d3b1f2eab229acd295b16f7",
	"slowmo":         "1c64cd1a428494f01ee8394e41e969a70e35d4d1d78887cba95047a47654fa3f",
}

const pinnedRunsEngine = "go-cpu-float32/v3"

// pinnedRunManifest is the run of one algorithm: an MLP on the synthetic
// data set over a Dirichlet partition, on a ring, evaluated every round.
func pinnedRunManifest(algorithm, compression string) string {
	steps := 2
	if oneStep[algorithm] {
		steps = 1
	}
	return fmt.Sprintf(`version: 1
name: pinned
task: {dataset: synthetic, model: mlp}
workers: 4
rounds: 3
local_steps: %d
batch_size: 16
lr: 0.05
partition: {kind: dirichlet, alpha: 0.5}
topology: {kind: ring}
algorithm: {name: %s}
%s`, steps, algorithm, compression)
}

// oneStep are the algorithms of one local step a round.
var oneStep = map[string]bool{"d2": true, "dsgt": true}

// TestRunsArePinned runs every algorithm for 3 rounds on every kernel path
// this CPU runs and checks each run's digest against the pinned one.
func TestRunsArePinned(t *testing.T) {
	if cpu.Name() != pinnedRunsEngine {
		t.Fatalf(
			"runs pinned for %s, the engine is %s: pin them again (the digests this test prints)",
			pinnedRunsEngine,
			cpu.Name(),
		)
	}
	runs := map[string]string{}
	for _, k := range algorithms.Family.Kinds {
		runs[k.Name] = pinnedRunManifest(k.Name, "")
	}
	runs["d-sum powersgd"] = pinnedRunManifest("d-sum", "compression: {codec: powersgd, rank: 2}\n")
	defer cpu.UseKernels("")
	for _, path := range cpu.PathsUnderTest() {
		if err := cpu.UseKernels(path); err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(runs)) {
			if got := runDigest(t, runs[name]); got != pinnedRuns[name] {
				t.Errorf("%s on kernel path %s: digest %s, pinned %q", name, path, got, pinnedRuns[name])
			}
		}
	}
}

// runDigest runs a one-cell manifest's partition, topology and train
// stages in memory and returns the digest of the trained state.
func runDigest(t *testing.T, src string) string {
	t.Helper()
	plan, err := manifests.Parse("pinned.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &plan.Cells[0].Config
	ctx, mem, lib := context.Background(), artifacts.NewMemory(), datasets.NewLibrary("")
	part, err := partition.Stage{}.Run(ctx, partition.Stage{}.Params(cfg), &stages.Env{Store: mem, Data: lib})
	if err != nil {
		t.Fatal(err)
	}
	mixing, err := topology.Stage{}.Run(ctx, topology.Stage{}.Params(cfg), &stages.Env{Store: mem})
	if err != nil {
		t.Fatal(err)
	}
	env := &stages.Env{Every: stages.Every{Evaluate: 1, Checkpoint: 10}, Store: mem, Data: lib,
		Upstream: map[string]*stages.Result{
			stages.Partition: part,
			stages.Topology:  mixing,
		}, Report: func(record.RoundReport) error { return nil }}
	st := finalState(t, ctx, mem, cfg, env)
	if st.Diverged || st.Round != cfg.Rounds {
		t.Errorf(
			"%s: diverged %v at round %d of %d: a pinned run should train",
			cfg.Algorithm.Name,
			st.Diverged,
			st.Round,
			cfg.Rounds,
		)
	}
	h := sha256.New()
	put := func(v float64) { binary.Write(h, binary.LittleEndian, math.Float64bits(v)) }
	for _, name := range slices.Sorted(maps.Keys(st.Vectors)) {
		h.Write([]byte(name))
		for _, w := range st.Vectors[name] {
			for _, v := range w {
				put(float64(v))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Counters)) {
		h.Write([]byte(name))
		put(st.Counters[name])
	}
	for _, row := range st.Rows {
		for c, v := range row {
			if st.Columns[c] != "wall_seconds" {
				put(v)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
