package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/optimizers"
	"github.com/ump-lab/ump/report"
)

// TestAddingAnAlgorithmParameterIsOneDeclaration makes the one edit a new
// algorithm parameter needs — a Param in its kind's declaration in
// optimizers.Family — and checks that everything else follows: manifests
// decode, default, sweep, range-check and explain it, other algorithms
// refuse it, the optimizer receives it, export has its column, and, as
// the parameter is quiet, manifests that do not set it keep their hashes.
func TestAddingAnAlgorithmParameterIsOneDeclaration(t *testing.T) {
	const src = `version: 1
name: restarts
task: {dataset: quadratic}
rounds: 10
lr: 0.1
algorithm: {name: gt-dsum}
`
	before := parse(t, src)

	k, _ := optimizers.Family.Lookup("gt-dsum")
	saved := k.Params
	k.Params = append(slices.Clone(saved), kinds.Param{Name: "restart_every", Type: kinds.Int, Range: "[0, inf)",
		Default: 0, Quiet: true, Doc: "rounds between momentum restarts (0: never)"})
	t.Cleanup(func() { k.Params = saved })

	if after := parse(t, src); after.Hash != before.Hash ||
		after.Cells[0].Config.Algorithm.Params["restart_every"] != 0 {
		t.Errorf("unset: hash %s (was %s), restart_every %v; want the old hash and the default 0",
			after.Hash, before.Hash, after.Cells[0].Config.Algorithm.Params["restart_every"])
	}
	swept := parse(t, src+"sweep:\n  algorithm.restart_every: [0, 5]\n")
	if got := swept.Cells[1].Config.Algorithm.Params["restart_every"]; len(swept.Cells) != 2 || got != 5 ||
		string(swept.Cells[0].Spec()) == string(swept.Cells[1].Spec()) {
		t.Errorf("swept: %d cells, the second with restart_every %v", len(swept.Cells), got)
	}
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(src, "{name: gt-dsum}", "{name: gt-dsum, restart_every: -1}", 1),
			`test.yaml:6: field "algorithm.restart_every": -1 is out of range; use an integer >= 0`},
		{strings.Replace(src, "{name: gt-dsum}", "{name: gt-dsum, restart_every: often}", 1),
			`expected rounds between momentum restarts (0: never), an integer >= 0, got the string "often"`},
		{strings.Replace(src, "{name: gt-dsum}", "{name: d-sum, restart_every: 5}", 1),
			"d-sum does not take restart_every; its parameters are: alpha, beta"},
	} {
		if _, err := manifests.Parse("test.yaml", []byte(c.yaml)); err == nil ||
			!strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want it to contain %q", err, c.want)
		}
	}
	cfg := swept.Cells[1].Config
	if _, err := algorithms.New(algorithms.Config{Name: "gt-dsum", Params: cfg.Algorithm.Params}, 2, make([]float32,
		3)); err != nil {
		t.Errorf("the optimizer refused the new parameter: %v", err)
	}
	if cols := report.ParamColumns(); !slices.Contains(cols, "restart_every") {
		t.Errorf("export's parameter columns %v lack restart_every", cols)
	}
}
