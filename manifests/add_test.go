package manifests

import (
	"bytes"
	"strings"
	"testing"
)

const addBase = "version: 1\nname: a\ntask: {dataset: quadratic}\nrounds: 2\nlr: 0.1\nalgorithm: {name: d-sum}\n" +
	"sweep: {lr: [0.1, 0.2], seed: [1, 2]}\n"

// TestAddedCellsFollowTheProduct: the add block's cells come after the
// product's, labelled by the swept paths like them, enter the hash, and
// survive the normalised manifest's round trip (as a results directory
// reads it back); without an add block the hash is the one it was.
func TestAddedCellsFollowTheProduct(t *testing.T) {
	without, err := Parse("a.yaml", []byte(addBase))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Parse("a.yaml", []byte(addBase+"add:\n  - {lr: 0.1, seed: 3}\n  - {seed: 4, lr: 0.20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cells) != 6 || plan.Hash == without.Hash || without.Manifest.Add != nil {
		t.Fatalf(
			"%d cells, hash %.12s (without add %.12s); want 6 and another hash",
			len(plan.Cells),
			plan.Hash,
			without.Hash,
		)
	}
	for i, want := range []string{"lr=0.1 seed=3", "lr=0.2 seed=4"} {
		c := plan.Cells[4+i]
		if c.Index != 4+i || c.LabelString() != want || c.Config.Seed != 3+i || c.Config.Add != nil {
			t.Errorf(
				"added cell %d: index %d, label %q, seed %d; want %q",
				i+1,
				c.Index,
				c.LabelString(),
				c.Config.Seed,
				want,
			)
		}
	}
	again, err := Parse("again.yaml", YAML(plan.Manifest))
	if err != nil || again.Hash != plan.Hash || !bytes.Equal(CanonicalJSON(again.Cells), CanonicalJSON(plan.Cells)) {
		t.Errorf("the normalised manifest reads back as %v (%v); want the same plan", again, err)
	}
	if over, err := Parse("a.yaml", []byte(addBase), "add=[{lr: 0.1, seed: 3}, {seed: 4, lr: 0.2}]"); err != nil ||
		over.Hash != plan.Hash {
		t.Errorf("the add block as an override: %v; want hash %.12s", err, plan.Hash)
	}
}

// TestAddRefusesCellsItCannotPlace: an added cell names every swept path
// and nothing else, and is no cell the manifest has already.
func TestAddRefusesCellsItCannotPlace(t *testing.T) {
	for _, tc := range []struct{ add, want string }{
		{"add: {lr: 0.1}\n", `a.yaml:8: field "add": expected a list of cells`},
		{"add:\n  - {seed: 3}\n", `field "add": entry 1 gives seed; give a value of every swept path: lr, seed`},
		{"add:\n  - {lr: 0.1, seed: 3, workers: 4}\n", `field "add": "workers" is not a swept path`},
		{"add:\n  - {lr: 0.2, seed: 2}\n", `field "add": entry 1 (lr=0.2 seed=2) is a cell of the sweep already`},
		{"add:\n  - {lr: 0.1, seed: 3}\n  - {lr: 0.1, seed: 3}\n",
			`field "add": entry 2 (lr=0.1 seed=3) repeats entry 1`},
		{"add:\n  - {lr: -1, seed: 3}\n", `added cell: a.yaml:9: field "lr": -1 is out of range`},
	} {
		_, err := Parse("a.yaml", []byte(addBase+tc.add))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v\nwant %s", tc.add, err, tc.want)
		}
	}
	if _, err := Parse("a.yaml", []byte(strings.Replace(addBase, "sweep: {lr: [0.1, 0.2], seed: [1, 2]}\n", "", 1)+
		"add:\n  - {seed: 3}\n")); err == nil ||
		!strings.Contains(err.Error(), "the manifest sweeps nothing") {
		t.Errorf("add without a sweep: %v", err)
	}
}
