package state

import (
	"slices"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestDiffNamesEveryChangedField: diff lists, in path order, each field
// whose value differs (a nested parameter by its dotted path), a swept
// path's values whole, a field set on one side only, and the overrides;
// the same registration has no change (issue 102, item 11).
func TestDiffNamesEveryChangedField(t *testing.T) {
	registration := func(src string, overrides ...string) *Registration {
		t.Helper()
		head := "version: 1\nname: m\ntask: {dataset: quadratic}\nrounds: 10\n"
		plan, err := manifests.Parse("m.yaml", []byte(head+src))
		if err != nil {
			t.Fatal(err)
		}
		return &Registration{Plan: *plan, Overrides: overrides}
	}
	a := registration("lr: 0.1\nalgorithm: {name: d-sum, beta: 0.9}\nsweep: {seed: [1, 2]}\n")
	b := registration(
		"lr: 0.01\nalgorithm: {name: d-sum, beta: 0.5}\nsweep: {seed: [1, 2, 3]}\nweight_decay: 0.001\n", "lr=0.01")
	got, err := Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{"(run with overrides)", "", "lr=0.01"},
		{"algorithm.beta", "0.9", "0.5"},
		{"lr", "0.1", "0.01"},
		{"sweep.seed", "[1,2]", "[1,2,3]"},
		{"weight_decay", "", "0.001"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("diff:\n got %q\nwant %q", got, want)
	}
	if same, err := Diff(a, a); err != nil || len(same) != 0 {
		t.Errorf("diff of a registration with itself: %q, %v", same, err)
	}
}
