package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/manifests"
)

// TestExportNamesEachCellsParameters: every row of an exported table
// carries its cell's lr and seed, as the manifest's sweep set them.
func TestExportNamesEachCellsParameters(t *testing.T) {
	plan := parse(t, strings.Replace(smallManifest, "  algorithm: [{name: d-sum}, {name: gt-dsum}]",
		"  lr: [0.05, 0.02]\n  seed: [3, 4]", 1))
	s := openTestStore(t)
	if _, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
		Engines: engines.Set{}}).Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"final", "rounds"} {
		tab := exportTable(t, s, plan.Hash, table)
		cell, lr, seed := tab.Column("cell"), tab.Column("lr"), tab.Column("seed")
		if cell == nil || lr == nil || seed == nil {
			t.Fatalf("%s table lacks a cell, lr or seed column", table)
		}
		seen := map[[2]float64]bool{}
		for r := range tab.Rows() {
			cfg := plan.Cells[cell.Ints[r]-1].Config
			if lr.Floats[r] != cfg.LR || seed.Ints[r] != int64(cfg.Seed) {
				t.Fatalf(
					"%s row %d (cell %d): lr %v, seed %v; the cell's are lr %v, seed %d",
					table,
					r,
					cell.Ints[r],
					lr.Floats[r],
					seed.Ints[r],
					cfg.LR,
					cfg.Seed,
				)
			}
			seen[[2]float64{cfg.LR, float64(cfg.Seed)}] = true
		}
		if len(seen) != 4 {
			t.Errorf("%s table: %d (lr, seed) pairs; want the sweep's 4", table, len(seen))
		}
	}
}

// TestRegistrationCellsAreTheManifests: a registration whose cells are
// its manifest's expansion passes; one with a cell the sweep does not
// make (seed 99), or one fewer, is refused. Every embedded manifest's
// normalised form expands again to its own cells.
func TestRegistrationCellsAreTheManifests(t *testing.T) {
	for _, name := range manifests.Embedded() {
		plan, err := manifests.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameCells(plan); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	plan := parse(t, smallManifest)
	extra := *plan
	extra.Cells = append(slices.Clone(plan.Cells), plan.Cells[len(plan.Cells)-1])
	extra.Cells[len(extra.Cells)-1].Config.Seed = 99
	fewer := *plan
	fewer.Cells = plan.Cells[:1]
	changed := *plan
	changed.Cells = slices.Clone(plan.Cells)
	changed.Cells[0].Config.Seed = 99
	for what, p := range map[string]*manifests.Plan{"an extra cell": &extra, "one cell fewer": &fewer, "a cell " +
		"changed": &changed} {
		if err := sameCells(p); err == nil {
			t.Errorf("a registration with %s passed", what)
		}
	}
}
