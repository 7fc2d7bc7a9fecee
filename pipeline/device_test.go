package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/optimizers"
)

// TestGPURefusesWhatItsProgramCannotRun: an algorithm whose definition
// takes two gradients per local step (the device program takes one, on
// the step's batch) is refused for engine: gpu when the run registers,
// before anything runs, naming the cell, the algorithm and what to use, as
// bad input; engine: cpu and compressed GPU cells (whose optimizer runs on
// the host) pass the check.
func TestGPURefusesWhatItsProgramCannotRun(t *testing.T) {
	const name = "test-two-gradients"
	twice := &algorithms.Rules{
		Vectors: []algorithms.Vector{{Name: "x", FromX0: true}},
		Round: func(s algorithms.Space, k int) {
			for tau := range k {
				g := s.Add(algorithms.Gradient(s, tau), algorithms.Gradient(s, tau))
				s.Set("x", s.Sub(s.Get("x"), g))
			}
		},
	}
	declared, bound := optimizers.Family.Kinds, algorithms.Family.Kinds
	optimizers.Family.Kinds = append(
		slices.Clip(declared),
		kinds.Kind[struct{}]{Name: name, Doc: "two gradients a step (a test's)"},
	)
	algorithms.Family.Kinds = append(slices.Clip(bound), kinds.Kind[*algorithms.Rules]{Name: name, New: twice})
	t.Cleanup(func() { optimizers.Family.Kinds, algorithms.Family.Kinds = declared, bound })

	src := "version: 1\nname: x\ntask: {dataset: synthetic}\nrounds: 5\nlocal_steps: 2\nlr: 0.1\nalgorithm: {name: " +
		"dpsgd}\n" +
		"sweep: {algorithm: [{name: dpsgd}, {name: " + name + "}]}\n"
	const want = `cell 2 (algorithm=test-two-gradients()): field "algorithm": test-two-gradients asks for gradients ` +
		`at local steps [0 0 1 1] of a round of 2; ` +
		`the GPU engine takes one per local step, in order (use engine: cpu)`
	s := openTestStore(t)
	_, err := (&Runner{Log: s.Log, Blobs: s.Blobs, Stages: cellStages(nil), Engines: engines.Set{}}).Register(
		context.Background(),
		parse(t, src+"engine: gpu\n"),
	)
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, new(*manifests.Error)) {
		t.Errorf("engine gpu: %v\nwant a *manifests.Error with %q", err, want)
	}
	for _, ok := range []string{src, src + "engine: gpu\ncompression: {codec: topk}\n"} {
		plan := parse(t, ok)
		for i := range plan.Cells {
			if err := (engines.Set{}).Check(&plan.Cells[i].Config); err != nil {
				t.Errorf("%s cell %d: %v", ok, i+1, err)
			}
		}
	}
}
