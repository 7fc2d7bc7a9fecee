package dirimport

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
	"github.com/ump-lab/ump/state"
)

// otherEngine computes as this machine's engines do but is named as
// another engine, as a machine of another engine version would be.
type otherEngine struct{ engines.Set }

func (otherEngine) Name(*manifests.Manifest) (string, error) { return "go-cpu-float32/v0", nil }

// runnerOn is a runner of every stage on a new store, with engines e.
func runnerOn(t *testing.T, e pipeline.Engines) *pipeline.Runner {
	t.Helper()
	store, err := pipeline.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	steps := []stages.Stage{stages.Of(partition.Stage{}), stages.Of(topology.Stage{}),
		stages.Of(train.Stage{Engines: engines.Set{}}), stages.Of(evaluate.Stage{})}
	return &pipeline.Runner{Log: store.Log, Blobs: store.Blobs, Stages: steps, Engines: e,
		Data: datasets.NewLibrary(t.TempDir())}
}

// TestACellOfAnotherEngineIsRefusedByName: a directory computed under
// one engine does not import where cells compute under another; the
// error names both engines and the cell.
func TestACellOfAnotherEngineIsRefusedByName(t *testing.T) {
	ctx := context.Background()
	plan, err := manifests.Parse("m.yaml", []byte("version: 1\nname: m\n"+
		"task: {dataset: quadratic, quadratic: {dim: 8}}\n"+
		"workers: 4\nrounds: 4\nlr: 0.05\nalgorithm: {name: d-sum}\nsweep:\n  seed: [1, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	here := runnerOn(t, engines.Set{})
	if _, err := here.Run(ctx, plan); err != nil {
		t.Fatal(err)
	}
	src := state.Source{Events: here.Log, Blobs: here.Blobs}
	rep, err := src.FindReport(plan.Hash)
	if err != nil {
		t.Fatal(err)
	}
	x, err := resultsdir.ExportOf(ctx, src, rep)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := signing.LoadOrCreate(filepath.Join(t.TempDir(), "key"))
	if err != nil {
		t.Fatal(err)
	}
	x.SignCells(key)
	dir := filepath.Join(t.TempDir(), "m")
	if err := x.WriteResults(dir); err != nil {
		t.Fatal(err)
	}
	if err := x.WriteRecord(dir, key); err != nil {
		t.Fatal(err)
	}
	trust, err := signing.NewTrust(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(ctx, runnerOn(t, engines.Set{}), trust, dir); err != nil {
		t.Fatalf("a directory of this machine's engine: %v", err)
	}
	_, err = Check(ctx, runnerOn(t, otherEngine{}), trust, dir)
	named := err != nil && strings.Contains(err.Error(), "cell 1 (seed=1)") &&
		strings.Contains(err.Error(), `"go-cpu-float32/v0"`) &&
		strings.Contains(err.Error(), `under engine "go-cpu-float32/v1"`)
	if !errors.Is(err, pipeline.ErrOtherEngine) || !named {
		t.Errorf("a directory of another engine: %v; want pipeline.ErrOtherEngine naming the cell and both engines",
			err)
	}
}
