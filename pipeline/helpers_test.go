package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
)

// Helpers shared by the package's tests.

func parse(t *testing.T, src string) *manifests.Plan {
	t.Helper()
	plan, err := manifests.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func countKind(t *testing.T, s *Store, kind string) int {
	t.Helper()
	evs, err := s.Log.ByKind(kind)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// withoutWall drops the one column that differs between runs.
func withoutWall(tab *artifacts.Table) *artifacts.Table {
	out := &artifacts.Table{}
	for _, c := range tab.Columns {
		if c.Name != "wall_seconds" {
			out.Columns = append(out.Columns, c)
		}
	}
	return out
}

func sameTables(t *testing.T, a, b *artifacts.Table) {
	t.Helper()
	da, err := artifacts.WriteArrow(withoutWall(a))
	if err != nil {
		t.Fatal(err)
	}
	db, err := artifacts.WriteArrow(withoutWall(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(da) != string(db) {
		t.Fatalf("tables differ:\n%+v\n%+v", a, b)
	}
}

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reportOf is the store's report of a manifest.
func reportOf(t *testing.T, s *Store, hash string) *state.Report {
	t.Helper()
	reg, err := s.Source().FindManifest(hash)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Source().Report(reg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func exportTable(t *testing.T, s *Store, hash, table string) *artifacts.Table {
	t.Helper()
	tab, skipped, err := report.Export(
		context.Background(),
		s.Source(),
		[]*state.Report{reportOf(t, s, hash)},
		table,
		false,
	)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("export %s: skipped %v, %v", table, skipped, err)
	}
	return tab
}

// outputDigests lists every stage output of every cell of a manifest.
func outputDigests(t *testing.T, s *Store, hash string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, cell := range reportOf(t, s, hash).Cells {
		if cell.Status != eventlog.Completed {
			t.Fatalf("cell %d is %s, want completed", i+1, cell.Status)
		}
		for _, st := range cell.Stages {
			for name, ref := range st.Result.Outputs {
				out[fmt.Sprintf("cell %d %s/%s", i+1, st.Name, name)] = ref.Digest
			}
		}
	}
	return out
}

// cellStages are the stages every cell runs, as cmd/ump composes them,
// on device (nil for none); engines.Set{Device: device} are theirs.
func cellStages(device *gpu.Device) []stages.Stage {
	return []stages.Stage{stages.Of(partition.Stage{}), stages.Of(topology.Stage{}),
		stages.Of(train.Stage{Engines: engines.Set{Device: device}}), stages.Of(evaluate.Stage{})}
}
