package manifests

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDeparturesFromThePapersProtocol: a paper manifest run as written, or
// on a column of its table, departs from nothing; with --scale, fewer
// seeds or one lr, another data set, model or topology it departs in
// each, named with the manifest's own.
func TestDeparturesFromThePapersProtocol(t *testing.T) {
	for _, c := range []struct {
		overrides []string
		want      []string
	}{
		{nil, nil},
		{[]string{"sweep.partition.alpha=[0.1]"}, nil},
		{[]string{"scale=0.05", "sweep.seed=[1]", "sweep.lr=[0.1]"}, []string{"5 rounds (the manifest's 100)",
			"seeds [1] (the manifest's [1,2,3])",
			"lr grid [0.1] (the manifest's [0.01,0.03162277660168379,0.1,0.31622776601683794])"}},
		{[]string{"workers=16", "local_steps=5"}, []string{"workers [16] (the manifest's [10])", "local steps [5] " +
			"(the manifest's [10])"}},
		{[]string{"add=[{seed: 4, lr: 0.01, partition.alpha: 0.1, algorithm: {name: d-sum}}]"}, []string{"cells " +
			"added beyond the sweep 1 (the manifest's 0)"}},
		{[]string{"task={dataset: synthetic, model: mlp}", "topology={kind: ring}"}, []string{"data set synthetic " +
			"(the manifest's mnist)", "model mlp (the manifest's lenet)",
			`topology [{"kind":"ring","weights":"metropolis-hastings"}] (the manifest's ` +
				`[{"kind":"mesh-to-ring","weights":"metropolis-hastings"}])`}},
		{[]string{"weight_decay=0.0001", "lr_schedule={kind: cosine}", "compression={codec: fp16}",
			"validation={fraction: 0.1}"}, []string{
			"lr_schedule {\"kind\":\"cosine\"} (the manifest's none)", "weight_decay 0.0001 (the manifest's none)",
			`compression {"codec":"fp16","gamma":0.5,"memory":"residual"} (the manifest's none)`,
			`validation {"fraction":0.1} (the manifest's none)`}},
		// two of the table's rows; a row the table does not have
		{[]string{"sweep.algorithm=[{name: slowmo}, {name: d-sum, alpha: 2, beta: 0.9}]"}, nil},
		{[]string{"sweep.algorithm=[{name: d-sum, alpha: 2, beta: 0.5}]"}, []string{
			`algorithm {"alpha":2,"beta":0.5,"name":"d-sum"} (not one of the manifest's 7)`}},
		{[]string{"sweep.partition.alpha=[0.5]"}, []string{"partition.alpha 0.5 (not one of the manifest's 3)"}},
	} {
		plan, err := Open("paper/table1-mnist", c.overrides...)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.ChangesFromEmbedded(); !slices.Equal(got, c.want) {
			t.Errorf("%v: departures %q, want %q", c.overrides, got, c.want)
		}
	}
	if got := (&Plan{Manifest: Manifest{Name: "mine"}, Hash: "x"}).ChangesFromEmbedded(); got != nil {
		t.Errorf("a manifest of the user's own: departures %q", got)
	}
}

// TestDeparturesCoverEveryField: departureFields names every field of the
// manifest schema once, each compared or with the reason it is not.
func TestDeparturesCoverEveryField(t *testing.T) {
	listed := map[string]int{}
	for _, f := range departureFields {
		listed[f.field]++
		if (f.compare == nil) == (f.why == "") {
			t.Errorf("%s: compared, or a reason why not; not both, not neither", f.field)
		}
	}
	for f := range reflect.TypeFor[Manifest]().Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if listed[key] != 1 {
			t.Errorf("manifest field %s (%s) is in departureFields %d times; want once", f.Name, key, listed[key])
		}
		delete(listed, key)
	}
	for key := range listed {
		t.Errorf("departureFields names %q, which is not a manifest field", key)
	}
}
