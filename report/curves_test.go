package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// TestShortenLabels drops the parameters at their declared defaults and
// those every row shares, keeping what tells the rows apart.
func TestShortenLabels(t *testing.T) {
	got := shorten(
		[]string{
			"d-sum(alpha=2,beta=0.9)",
			"d-sum(alpha=0,beta=0.9)",
			"gt-dsum(alpha=2,beta=0.9,lambda=0.8,momentum_restart=step,tracker_init=paper)",
			"dpsgd()",
			"ring",
		},
	)
	want := []string{"d-sum", "d-sum (alpha=0)", "gt-dsum (momentum_restart=step)", "dpsgd", "ring"}
	if !slices.Equal(got, want) {
		t.Errorf("shorten: %q, want %q", got, want)
	}
	if got := shorten([]string{"qg-dsgdm(beta=0.5,mu=0.8)", "qg-dsgdm(beta=0.5,mu=0.9)"}); !slices.Equal(
		got,
		[]string{"qg-dsgdm (mu=0.8)", "qg-dsgdm (mu=0.9)"},
	) {
		t.Errorf("shorten drops only what all rows share: %q", got)
	}
	// qg-dsgdm's mu defaults to its beta: at that default it is dropped,
	// elsewhere kept.
	got = shorten(
		[]string{
			"qg-dsgdm(beta=0.9,mu=0.9,nesterov=false)",
			"qg-dsgdm(beta=0.5,mu=0.9,nesterov=false)",
			"slowmo(base_beta=0,slow_alpha=1,slow_beta=0.5)",
		},
	)
	if want := []string{"qg-dsgdm", "qg-dsgdm (beta=0.5, mu=0.9)", "slowmo"}; !slices.Equal(got, want) {
		t.Errorf("shorten with a default computed from beta: %q, want %q", got, want)
	}
}

// TestFiguresNameWhatTheyVary: a row swept over a parameter without labels
// shows its name and value in the legend of every figure kind (the
// curves, the sweep figure), β = 0.5 and not 0.5; a label the layout gives
// wins, and algorithm rows keep their kind labels.
func TestFiguresNameWhatTheyVary(t *testing.T) {
	plan, err := manifests.Parse("b.yaml", []byte(`version: 1
name: b
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  algorithm.beta: [0.5, 0.9]
  topology.kind: [ring, full]
table: {rows: [algorithm.beta], columns: [topology.kind], value: objective_gap}
`))
	if err != nil {
		t.Fatal(err)
	}
	finals := make([]Final, len(plan.Cells))
	for i := range finals {
		finals[i] = Final{Status: eventlog.Completed, Figures: map[string]float64{"objective_gap": float64(i)}}
	}
	g, err := NewGrid(plan, Layout(plan), finals)
	if err != nil {
		t.Fatal(err)
	}
	rounds := func(i int) (*artifacts.Table, bool, bool, error) {
		return &artifacts.Table{
			Columns: []artifacts.Column{
				{Name: "round", Ints: []int64{1, 2}},
				{Name: "objective_gap", Floats: []float64{2, 1}},
			},
		}, true, false, nil
	}
	figs, err := CurvesFrom(plan, g, g.Spec, CurveOptions{X: "round", Y: "objective_gap"}, nil, rounds)
	if err != nil {
		t.Fatal(err)
	}
	sweep, ok := g.SweepFigure("b")
	if !ok {
		t.Fatal("no sweep figure")
	}
	for _, f := range append(figs, sweep) {
		var labels []string
		for _, s := range f.Series {
			labels = append(labels, s.Label)
		}
		if len(labels) != 2 || !strings.HasPrefix(labels[0], "β = 0.5") || !strings.HasPrefix(labels[1], "β = 0.9") {
			t.Errorf("figure %s: legend %q, want β = 0.5 and β = 0.9", f.Name, labels)
		}
	}
	g.Spec.Labels = map[string]string{"algorithm.beta": "momentum β", "0.9": "heavy"}
	if got := g.seriesLabels(); !slices.Equal(got, []string{"momentum β = 0.5", "heavy"}) {
		t.Errorf("with labels: %q", got)
	}
}

// TestSweptPathsAreNamedByWhatTheySay: a legend names a block's kind by
// the block (topology = ring, never kind = ring), a parameter by its
// name or Greek letter, and a label wins over both.
func TestSweptPathsAreNamedByWhatTheySay(t *testing.T) {
	for path, want := range map[string]string{
		"topology.kind": "topology", "partition.kind": "partition", "algorithm.name": "algorithm",
		"compression.codec": "compression", "algorithm.beta": "β", "partition.alpha": "α",
		"local_steps": "local steps K", "batch_size": "batch size", "workers": "workers",
	} {
		if got := paramName(manifests.Table{}, path); got != want {
			t.Errorf("%s is named %q, want %q", path, got, want)
		}
	}
	labelled := manifests.Table{Labels: map[string]string{"topology.kind": "graph"}}
	if got := paramName(labelled, "topology.kind"); got != "graph" {
		t.Errorf("a labelled topology.kind is named %q, want its label", got)
	}
}
