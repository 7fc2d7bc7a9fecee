package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/codecs"
	"github.com/ump-lab/ump/optimizers"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenExpansion compares each testdata manifest's normalised plan
// (manifest, hash and cells) with its golden file.
func TestGoldenExpansion(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata manifests")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			plan, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(plan, "", "  ")
			golden := strings.TrimSuffix(f, ".yaml") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./manifests -update to create it)", err)
			}
			if strings.TrimSpace(string(want)) != string(got) {
				t.Errorf("plan differs from %s:\n%s", golden, got)
			}
		})
	}
}

func TestExpansionOrderAndCount(t *testing.T) {
	plan, err := Load("testdata/quadratic-check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cells) != 4 {
		t.Fatalf("got %d cells, want 2 algorithms x 2 seeds = 4", len(plan.Cells))
	}
	want := []struct {
		alg  string
		seed int
	}{{"d-sum", 1}, {"d-sum", 2}, {"gt-dsum", 1}, {"gt-dsum", 2}}
	for i, c := range plan.Cells {
		if c.Config.Algorithm.Name != want[i].alg || c.Config.Seed != want[i].seed || c.Index != i {
			t.Errorf(
				"cell %d = %s seed %d, want %s seed %d",
				i,
				c.Config.Algorithm.Name,
				c.Config.Seed,
				want[i].alg,
				want[i].seed,
			)
		}
		if c.Config.Sweep != nil {
			t.Errorf("cell %d still has a sweep", i)
		}
	}
	gt := plan.Cells[2].Config.Algorithm
	if gt.Params.Float("beta") != 0.5 || gt.Params.Float("lambda") != 0.8 ||
		gt.Params.String("tracker_init") != "paper" {
		t.Errorf("gt-dsum cell algorithm = %+v, want beta 0.5, lambda 0.8, tracker_init paper", gt)
	}
}

func TestHashStability(t *testing.T) {
	a, err := Load("testdata/quadratic-check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("testdata/quadratic-check-reordered.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash != b.Hash {
		t.Errorf("reordered keys / explicit defaults changed the hash: %s vs %s", a.Hash, b.Hash)
	}
	for i := range a.Cells {
		if string(a.Cells[i].Spec()) != string(b.Cells[i].Spec()) {
			t.Errorf("cell %d spec differs:\n%s\n%s", i, a.Cells[i].Spec(), b.Cells[i].Spec())
		}
	}
	// A real change changes the hash.
	src, _ := os.ReadFile("testdata/quadratic-check.yaml")
	c, err := Parse("changed.yaml", []byte(strings.Replace(string(src), "lr: 0.05", "lr: 0.04", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash == a.Hash {
		t.Error("changing lr kept the hash")
	}
	// The normalised manifest parses to itself: same hash, same cells.
	again, err := Parse("normalised", CanonicalJSON(a.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash != a.Hash || len(again.Cells) != len(a.Cells) {
		t.Errorf(
			"reparsing the normalised manifest gave hash %s (%d cells), want %s (%d)",
			again.Hash,
			len(again.Cells),
			a.Hash,
			len(a.Cells),
		)
	}
	for i := range a.Cells {
		if string(again.Cells[i].Spec()) != string(a.Cells[i].Spec()) {
			t.Errorf("cell %d differs after reparsing the normalised manifest", i)
		}
	}
}

// TestAlgorithmDefaults checks each algorithm's defaults: mu follows the
// cell's beta (also when beta is swept), nesterov is false, SlowMo's
// parameters are the spec's, and an explicit constant schedule is the
// default (same hash).
func TestAlgorithmDefaults(t *testing.T) {
	plan, err := Parse("defaults.yaml", []byte(valid+`sweep:
  algorithm:
    - {name: qg-dsgdm, beta: 0.5}
    - {name: qg-dsgdm}
    - {name: slowmo}
    - {name: dsgdm}
    - {name: dpsgd}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := func(i int) Algorithm { return plan.Cells[i].Config.Algorithm }
	if a(0).Params["mu"] != 0.5 || a(1).Params["mu"] != 0.9 || a(1).Params["nesterov"] != false {
		t.Errorf("qg-dsgdm defaults: %+v / %+v, want mu = beta and nesterov false", a(0), a(1))
	}
	if s := a(2).Params; s["base_beta"] != 0.0 || s["slow_beta"] != 0.5 || s["slow_alpha"] != 1.0 || s["beta"] != nil {
		t.Errorf("slowmo defaults: %+v", s)
	}
	if d := a(3).Params; d["beta"] != 0.9 || d["nesterov"] != false || d["alpha"] != nil {
		t.Errorf("dsgdm defaults: %+v", d)
	}
	if got := string(CanonicalJSON(a(4))); got != `{"name":"dpsgd"}` {
		t.Errorf("dpsgd takes no parameters, got %s", got)
	}
	explicit, err := Parse("explicit.yaml", []byte(valid+"lr_schedule: {kind: constant}\n"))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Parse("plain.yaml", []byte(valid))
	if explicit.Hash != plain.Hash {
		t.Error("an explicit constant schedule changed the hash")
	}
	if none, _ := Parse("none.yaml", []byte(valid+"compression: {codec: none}\n")); none == nil ||
		none.Hash != plain.Hash {
		t.Error("an explicit compression {codec: none} changed the hash")
	}
	codecs, err := Parse(
		"codecs.yaml",
		[]byte(
			valid+"compression: {codec: none}\nsweep:\n  compression: [{codec: topk}, {codec: qsgd}, {codec: "+
				"powersgd}]\n",
		),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"codec":"topk","gamma":0.5,"memory":"residual","ratio":0.01}`,
		`{"bucket":512,"codec":"qsgd","gamma":0.5,"levels":16,"memory":"residual"}`,
		`{"codec":"powersgd","gamma":0.5,"memory":"residual","rank":1}`} {
		if got := string(CanonicalJSON(codecs.Cells[i].Config.Compression)); got != want {
			t.Errorf("compression defaults: %s, want %s", got, want)
		}
	}
	step, err := Parse("step.yaml", []byte(valid+"lr_schedule: {kind: step, milestones: [2, 4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := step.Cells[0].Config.LRSchedule.Gamma; g == nil || *g != 0.1 {
		t.Errorf("step gamma default: %v", g)
	}
}

const valid = `version: 1
name: errs
task: {dataset: quadratic}
rounds: 5
lr: 0.1
algorithm: {name: d-sum}
`

// TestErrors checks that each kind of bad input names the file, the line,
// the field and what is allowed.
func TestErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{
			"unknown key",
			valid + "wrkers: 4\n",
			[]string{"bad.yaml:7:", `"wrkers"`, `(did you mean "workers"?)`, "allowed keys here:", "workers"},
		},
		{
			"unknown nested key",
			strings.Replace(valid, "{name: d-sum}", "{name: d-sum, betta: 0.5}", 1),
			[]string{
				"bad.yaml:6:",
				`"algorithm.betta"`,
				`(did you mean "beta"?)`,
				"allowed keys here: alpha, beta, momentum_restart, name",
			},
		},
		{
			"misspelt algorithm",
			strings.Replace(valid, "{name: d-sum}", "{name: gt-dsm}", 1),
			[]string{"bad.yaml:6:", `"algorithm.name"`, `"gt-dsm" is not allowed (did you mean "gt-dsum"?)`},
		},
		{
			"unknown key far from any",
			valid + "colour: red\n",
			[]string{"bad.yaml:7:", `unknown key "colour"; allowed keys here:`},
		},
		{
			"wrong type int",
			valid + "workers: ten\n",
			[]string{"bad.yaml:7:", `"workers"`, "expected the number of workers", `"ten"`},
		},
		{"float for int", valid + "workers: 2.5\n", []string{"bad.yaml:7:", `"workers"`, "integer"}},
		{
			"wrong type float",
			strings.Replace(valid, "lr: 0.1", "lr: fast", 1),
			[]string{"bad.yaml:5:", `"lr"`, "positive number"},
		},
		{
			"mapping expected",
			strings.Replace(valid, "task: {dataset: quadratic}", "task: quadratic", 1),
			[]string{"bad.yaml:3:", `"task"`, "expected a mapping"},
		},
		{"out of range", valid + "workers: 0\n", []string{"bad.yaml:7:", `"workers"`, "out of range", "1 to 1024"}},
		{
			"beta range",
			strings.Replace(valid, "{name: d-sum}", "{name: d-sum, beta: 1}", 1),
			[]string{"bad.yaml:6:", `"algorithm.beta"`, "[0, 1)"},
		},
		{
			"lambda range",
			strings.Replace(valid, "{name: d-sum}", "{name: gt-dsum, lambda: 1.5}", 1),
			[]string{"bad.yaml:6:", `"algorithm.lambda"`, "[0, 1]"},
		},
		{"negative lr", strings.Replace(valid, "lr: 0.1", "lr: -0.1", 1), []string{"bad.yaml:5:", `"lr"`, "positive"}},
		{"infinite lr", strings.Replace(valid, "lr: 0.1", "lr: .inf", 1), []string{"bad.yaml:5:", `"lr"`}},
		{"scale zero", valid + "scale: 0\n", []string{"bad.yaml:7:", `"scale"`, "(0, 1]", "raise rounds"}},
		{"scale above one", valid + "scale: 2\n", []string{"bad.yaml:7:", `"scale"`, "(0, 1]"}},
		{
			"scale swept",
			valid + "sweep: {scale: [0.5, 1]}\n",
			[]string{"bad.yaml:7:", `"sweep.scale"`, "cannot be swept"},
		},
		{
			"table places no swept path",
			valid + "table: {rows: [algorithm], value: objective_gap}\nsweep:\n  lr: [0.1, 0.2]\n  seed: [1, 2]\n  " +
				"local_steps: [1, 2]\n",
			[]string{
				"bad.yaml:7:",
				`"table"`,
				"the sweep varies lr (bad.yaml:9) and local_steps (bad.yaml:11), but they are neither",
			},
		},
		{
			"table places a swept path",
			valid + "table: {rows: [algorithm], columns: [local_steps], select: lr, value: objective_gap}\nsweep:\n  " +
				"lr: [0.1, 0.2]\n  local_steps: [1, 2]\n  topology.kind: [ring, full]\n",
			[]string{"bad.yaml:7:", "the sweep varies topology.kind (bad.yaml:11), but it is neither"},
		},
		{
			"milestone beyond the scaled rounds",
			strings.Replace(
				valid,
				"rounds: 5",
				"rounds: 100",
				1,
			) + "scale: 0.1\nlr_schedule: {kind: step, milestones: [50]}\n",
			[]string{"bad.yaml:8:", `"lr_schedule.milestones"`, "rounds-1 (9 at scale 0.1)"},
		},
		{
			"unknown enum",
			valid + "topology: {kind: hypercube}\n",
			[]string{"bad.yaml:7:", `"topology.kind"`, "erdos-renyi, exponential, full"},
		},
		{
			"topology param not taken",
			valid + "topology: {kind: ring, p: 0.5}\n",
			[]string{"bad.yaml:7:", `"topology.p"`, "ring does not take p; its parameters are: weights"},
		},
		{
			"erdos-renyi needs p",
			valid + "topology: {kind: erdos-renyi}\n",
			[]string{"bad.yaml:7:", `"topology.p"`, "needs p"},
		},
		{
			"regular degree",
			valid + "workers: 5\ntopology: {kind: random-regular, degree: 3}\n",
			[]string{"bad.yaml:8:", `"topology.degree"`, "workers*degree even"},
		},
		{
			"torus rows",
			valid + "workers: 10\ntopology: {kind: torus, rows: 3}\n",
			[]string{"bad.yaml:8:", `"topology.rows"`, "does not divide 10"},
		},
		{
			"one-peer power of 2",
			valid + "workers: 10\ntopology: {kind: one-peer-exponential}\n",
			[]string{"bad.yaml:8:", "power of 2"},
		},
		{
			"uniform star",
			valid + "topology: {kind: star, weights: uniform}\n",
			[]string{"bad.yaml:7:", `"topology.weights"`, "not regular"},
		},
		{
			"unknown dataset",
			strings.Replace(valid, "dataset: quadratic", "dataset: imagenet", 1),
			[]string{"bad.yaml:3:", `"task.dataset"`, "mnist", "cifar10"},
		},
		{
			"quadratic partition",
			valid + "partition: {kind: iid}\n",
			[]string{"bad.yaml:7:", `"partition"`, "own objective"},
		},
		{
			"dirichlet alpha",
			strings.Replace(valid, "dataset: quadratic", "dataset: mnist", 1) + "partition: {kind: dirichlet}\n",
			[]string{"bad.yaml:7:", `"partition.alpha"`, "0.1, 1 and 10"},
		},
		{
			"partition param not taken",
			strings.Replace(valid, "dataset: quadratic", "dataset: mnist", 1) + "partition: {kind: iid, shards: 2}\n",
			[]string{"bad.yaml:7:", `"partition.shards"`, "iid does not take shards"},
		},
		{
			"model mismatch",
			strings.Replace(valid, "dataset: quadratic", "dataset: agnews, model: lenet", 1),
			[]string{"bad.yaml:3:", `"task.model"`, "embedding-bag"},
		},
		{
			"table path",
			valid + "table: {rows: [algorithm.betta], value: objective_gap}\n",
			[]string{"bad.yaml:7:", `"table.rows"`, "not a manifest path"},
		},
		{
			"table best",
			valid + "table: {rows: [algorithm], value: objective_gap, best: highest}\n",
			[]string{"bad.yaml:7:", `"table.best"`, "max, min"},
		},
		{
			"table path twice",
			valid + "table: {rows: [algorithm], columns: [algorithm], value: objective_gap}\n",
			[]string{"bad.yaml:7:", `"table.columns"`, `"algorithm" is in table.rows already`},
		},
		{
			"table rows type",
			valid + "table: {rows: algorithm, value: x}\n",
			[]string{"bad.yaml:7:", `"table.rows"`, "expected a list"},
		},
		{"sweep table", valid + "sweep: {table.value: [a, b]}\n", []string{"bad.yaml:7:", "cannot be swept"}},
		{
			"synthetic classes",
			strings.Replace(valid, "dataset: quadratic", "dataset: synthetic, synthetic: {classes: 1}", 1),
			[]string{"bad.yaml:3:", `"task.synthetic.classes"`, ">= 2"},
		},
		{
			"unknown algorithm",
			strings.Replace(valid, "d-sum}", "adam}", 1),
			[]string{"bad.yaml:6:", `"algorithm.name"`, sortedNames(optimizers.Family.Names())},
		},
		{
			"dsgt local steps",
			strings.Replace(valid, "{name: d-sum}", "{name: dsgt}\nlocal_steps: 5", 1),
			[]string{"bad.yaml:7:", `"local_steps"`, "dsgt takes exactly one local step", "use local_steps: 1"},
		},
		{
			"nesterov type",
			strings.Replace(valid, "{name: d-sum}", "{name: dsgdm, nesterov: yes please}", 1),
			[]string{"bad.yaml:6:", `"algorithm.nesterov"`, "true or false"},
		},
		{
			"nesterov not taken",
			strings.Replace(valid, "{name: d-sum}", "{name: slowmo, nesterov: true}", 1),
			[]string{"bad.yaml:6:", "slowmo does not take nesterov"},
		},
		{
			"mu range",
			strings.Replace(valid, "{name: d-sum}", "{name: qg-dsgdm, mu: 1}", 1),
			[]string{"bad.yaml:6:", `"algorithm.mu"`, "[0, 1)"},
		},
		{
			"slow_alpha range",
			strings.Replace(valid, "{name: d-sum}", "{name: slowmo, slow_alpha: 0}", 1),
			[]string{"bad.yaml:6:", `"algorithm.slow_alpha"`, "> 0"},
		},
		{"quadratic batch", valid + "batch_size: 32\n", []string{"bad.yaml:7:", `"batch_size"`, "no samples to batch"}},
		{
			"batch size",
			strings.Replace(valid, "dataset: quadratic", "dataset: synthetic", 1) + "batch_size: 0\n",
			[]string{"bad.yaml:7:", `"batch_size"`, "positive integer"},
		},
		{"weight decay", valid + "weight_decay: -0.1\n", []string{"bad.yaml:7:", `"weight_decay"`, ">= 0"}},
		{
			"schedule kind",
			valid + "lr_schedule: {kind: linear}\n",
			[]string{"bad.yaml:7:", `"lr_schedule.kind"`, "constant, cosine, step"},
		},
		{
			"schedule milestones",
			valid + "lr_schedule: {kind: step}\n",
			[]string{"bad.yaml:7:", `"lr_schedule.milestones"`, "e.g. [50, 75]"},
		},
		{
			"schedule order",
			valid + "lr_schedule: {kind: step, milestones: [3, 2]}\n",
			[]string{"bad.yaml:7:", `"lr_schedule.milestones"`, "increasing round numbers from 1 to rounds-1 (4)"},
		},
		{
			"schedule gamma",
			valid + "lr_schedule: {kind: step, milestones: [2], gamma: 2}\n",
			[]string{"bad.yaml:7:", `"lr_schedule.gamma"`, "(0, 1]"},
		},
		{
			"schedule warmup",
			valid + "lr_schedule: {kind: cosine, warmup: 5}\n",
			[]string{"bad.yaml:7:", `"lr_schedule.warmup"`, "0 to rounds-1 (4)"},
		},
		{
			"schedule param",
			valid + "lr_schedule: {kind: cosine, gamma: 0.5}\n",
			[]string{"bad.yaml:7:", "cosine does not take gamma"},
		},
		{
			"param not taken",
			strings.Replace(valid, "{name: d-sum}", "{name: d-sum, lambda: 0.5}", 1),
			[]string{"bad.yaml:6:", "d-sum does not take lambda"},
		},
		{
			"unknown codec",
			valid + "compression: {codec: gzip}\n",
			[]string{"bad.yaml:7:", `"compression.codec"`, "use one of: " + sortedNames(codecs.Family.Names())},
		},
		{
			"codec ratio",
			valid + "compression: {codec: topk, ratio: 0}\n",
			[]string{"bad.yaml:7:", `"compression.ratio"`, "(0, 1]"},
		},
		{
			"codec ratio high",
			valid + "compression: {codec: randomk, ratio: 1.5}\n",
			[]string{"bad.yaml:7:", `"compression.ratio"`, "(0, 1]"},
		},
		{
			"codec levels",
			valid + "compression: {codec: qsgd, levels: 0}\n",
			[]string{"bad.yaml:7:", `"compression.levels"`, "positive integer"},
		},
		{
			"codec rank",
			valid + "compression: {codec: powersgd, rank: 0}\n",
			[]string{"bad.yaml:7:", `"compression.rank"`, "positive integer"},
		},
		{
			"codec param not taken",
			valid + "compression: {codec: sign, ratio: 0.1}\n",
			[]string{"bad.yaml:7:", "sign does not take ratio; its parameters are: memory, gamma"},
		},
		{
			"none takes nothing",
			valid + "compression: {codec: none, gamma: 0.5}\n",
			[]string{"bad.yaml:7:", "none does not take gamma"},
		},
		{
			"threshold tau",
			valid + "compression: {codec: threshold}\n",
			[]string{"bad.yaml:7:", `"compression.tau"`, "threshold needs tau"},
		},
		{
			"efsign memory",
			valid + "compression: {codec: efsign, memory: none}\n",
			[]string{"bad.yaml:7:", `"compression.memory"`, "error feedback"},
		},
		{
			"codec gamma",
			valid + "compression: {codec: fp16, gamma: 1.5}\n",
			[]string{"bad.yaml:7:", `"compression.gamma"`, "(0, 1]"},
		},
		{
			"missing required",
			strings.Replace(valid, "rounds: 5\n", "", 1),
			[]string{"bad.yaml", `"rounds" is required`},
		},
		{
			"version",
			strings.Replace(valid, "version: 1", "version: 2", 1),
			[]string{"bad.yaml:1:", `"version"`, "version 1"},
		},
		{"bad yaml", "version: 1\n  name: x: y\n", []string{"bad.yaml", "not valid YAML", "line 2"}},
		{
			"a tab",
			"version: 1\nname: t\n\ttask: {dataset: quadratic}\n",
			[]string{"bad.yaml:3:", "a tab in the indentation"},
		},
		{"empty", "", []string{"bad.yaml", "empty"}},
		{"sweep not list", valid + "sweep: {seed: 3}\n", []string{"bad.yaml:7:", `"sweep.seed"`, "list"}},
		{
			"sweep unknown path",
			valid + "sweep:\n  algorithm.betta: [0.1]\n",
			[]string{"bad.yaml:8:", `"sweep.algorithm.betta"`, "not a manifest field"},
		},
		{
			"sweep bad value",
			valid + "sweep:\n  algorithm.beta:\n    - 0.5\n    - 1.5\n",
			[]string{"bad.yaml:10:", `"algorithm.beta"`, "[0, 1)"},
		},
		{"sweep name", valid + "sweep: {name: [a, b]}\n", []string{"bad.yaml:7:", "cannot be swept"}},
		{
			"sweep duplicate",
			valid + "sweep:\n  algorithm:\n    - {name: d-sum}\n    - {name: d-sum, alpha: 2}\n",
			[]string{"bad.yaml:10:", "repeats value 1"},
		},
		{"duplicate key", valid + "lr: 0.2\n", []string{"bad.yaml:7:", `key "lr" repeats the one on line 5`}},
		{
			"duplicate nested key",
			strings.Replace(valid, "{name: d-sum}", "{name: d-sum, beta: 0.5, beta: 0.6}", 1),
			[]string{"bad.yaml:6:", `key "beta" repeats`},
		},
		{"second document", valid + "---\nversion: 1\n", []string{"bad.yaml:7:", "second YAML document"}},
		{"too many cells", valid + "sweep:\n  seed: [" + numbers(1000, 1) + "]\n  lr: [" + numbers(1000, 0.001) + "]\n",
			[]string{"bad.yaml:8:", "more than 20000 cells", "lr (1000) × seed (1000)", "split the sweep"}},
		{
			"sweep overlap",
			valid + "sweep:\n  algorithm: [{name: d-sum}]\n  algorithm.beta: [0.1]\n",
			[]string{"bad.yaml:9:", "overlaps"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("no error for:\n%s", c.yaml)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// numbers lists n distinct multiples of step, comma-separated.
func numbers(n int, step float64) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.FormatFloat(float64(i+1)*step, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func TestEmbeddedManifests(t *testing.T) {
	names := Embedded()
	for _, want := range []string{"quickstart", "examples/quadratic", "examples/algorithms-mnist",
		"examples/one-step-mnist", "examples/compression-mnist", "examples/gt-dsum-stability",
		"examples/gt-dsum-readings", "examples/gt-dsum-readings-mnist-quick", "examples/quickstart-readings"} {
		if !slices.Contains(names, want) {
			t.Fatalf("embedded manifests = %v, want %s among them", names, want)
		}
	}
	for _, name := range names {
		plan, err := Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(plan.Cells) == 0 {
			t.Errorf("%s expands to no cells", name)
		}
	}
	if _, err := Open("no-such-manifest"); err == nil || !strings.Contains(err.Error(), "quickstart") {
		t.Errorf("unknown name: %v; want an error listing the embedded manifests", err)
	}
}

// TestTableBlockIsNotPartOfCells keeps presentation out of the cells: a
// table block changes the manifest hash but no cell's spec.
func TestTableBlockIsNotPartOfCells(t *testing.T) {
	plain, err := Parse("a.yaml", []byte(valid+"sweep: {seed: [1, 2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tabled, err := Parse(
		"b.yaml",
		[]byte(valid+"sweep: {seed: [1, 2]}\ntable: {rows: [algorithm], value: objective_gap}\n"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hash == tabled.Hash {
		t.Error("the table block did not change the manifest hash")
	}
	if tabled.Manifest.Table == nil || tabled.Manifest.Table.Best != "min" || tabled.Manifest.Table.Digits != 4 {
		t.Errorf("table defaults: %+v (objective_gap is best when smallest)", tabled.Manifest.Table)
	}
	for i := range plain.Cells {
		if string(plain.Cells[i].Spec()) != string(tabled.Cells[i].Spec()) || tabled.Cells[i].Config.Table != nil {
			t.Errorf("cell %d changed with the table block", i)
		}
	}
}

// TestScale checks that scale shrinks every cell's rounds and nothing else,
// enters the manifest hash, and that SetScale (ump run --scale) is the same
// as writing the field.
func TestScale(t *testing.T) {
	base := strings.Replace(
		valid,
		"rounds: 5",
		"rounds: 100",
		1,
	) + "topology: {kind: mesh-to-ring}\nsweep: {rounds: [100, 30]}\n"
	full, err := Parse("a.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := Parse("b.yaml", []byte(base+"scale: 0.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if scaled.Hash == full.Hash {
		t.Fatal("scale 0.1 left the manifest hash unchanged")
	}
	for i, want := range []int{10, 3} {
		c := scaled.Cells[i]
		if c.Config.Rounds != want || c.Config.Scale != nil {
			t.Errorf(
				"cell %d: rounds %d scale %v; want %d rounds and no scale",
				i,
				c.Config.Rounds,
				c.Config.Scale,
				want,
			)
		}
		// The cell is the unscaled cell with fewer rounds: same spec, so the
		// same cell key and cache entries.
		want := full.Cells[i].Config
		want.Rounds = c.Config.Rounds
		if got := c.Spec(); string(got) != string((Cell{Config: want}).Spec()) {
			t.Errorf("cell %d spec %s; want %s", i, got, (Cell{Config: want}).Spec())
		}
	}
	one, err := Parse("c.yaml", []byte(base+"scale: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if one.Hash != full.Hash {
		t.Error("scale: 1 (the default, written out) changed the hash")
	}
	if err := full.SetScale(0.1); err != nil {
		t.Fatal(err)
	}
	if full.Hash != scaled.Hash || full.Cells[1].Config.Rounds != 3 {
		t.Errorf(
			"SetScale(0.1): hash %s, rounds %d; want %s and 3 as with scale: 0.1 in the file",
			full.Hash,
			full.Cells[1].Config.Rounds,
			scaled.Hash,
		)
	}
	if err := full.SetScale(1); err != nil || full.Hash != one.Hash || full.Cells[0].Config.Rounds != 100 {
		t.Errorf(
			"SetScale(1) after SetScale(0.1): %v, hash %s rounds %d; want the unscaled manifest back",
			err,
			full.Hash,
			full.Cells[0].Config.Rounds,
		)
	}
	if err := full.SetScale(1.5); err == nil || !strings.Contains(err.Error(), "--scale 1.5") {
		t.Errorf("SetScale(1.5) = %v; want an error naming --scale", err)
	}
	stepped, err := Parse("d.yaml", []byte(base+"lr_schedule: {kind: step, milestones: [20]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := stepped.SetScale(0.1); err == nil || !strings.Contains(err.Error(), "--scale") ||
		!strings.Contains(err.Error(), "milestones") {
		t.Errorf("SetScale(0.1) with a milestone at round 20: %v; want an error naming --scale and the milestones", err)
	}
}

// TestPaperManifests lists the cell count of every paper manifest, checks
// the paper's settings in every cell (10 workers, K=10, batch 128 or 256
// on CIFAR-10, mesh-to-ring Metropolis-Hastings, the lr grid, seeds 1-3)
// unless the manifest sweeps that setting, and that the quickstart is
// Table 1's MNIST row at non-IID 0.1.
func TestPaperManifests(t *testing.T) {
	want := map[string]int{
		// 5 algorithms x 3 non-IID degrees x 4 learning rates x 3 seeds
		"paper/table1-emnist": 180, "paper/table1-cifar10": 180, "paper/table1-agnews": 180,
		// the same and D-SUM and GT-DSUM under the favoured reading (7 rows)
		"paper/table1-mnist": 252, "paper/table1-fashion-mnist": 252,
		// honest tuning: the same with a validation share
		"paper/table1-mnist-honest": 252, "paper/table1-emnist-honest": 180, "paper/table1-cifar10-honest": 180,
		"paper/table1-agnews-honest": 180,
		// 2 algorithms x 10 alphas x 4 x 3
		"paper/table2-mnist": 240, "paper/table2-emnist": 240, "paper/table2-cifar10": 240, "paper/table2-agnews": 240,
		// 3 algorithms x 5 K x 4 x 3
		"paper/fig-local-steps-mnist": 180, "paper/fig-local-steps-emnist": 180,
		"paper/fig-local-steps-cifar10": 180, "paper/fig-local-steps-agnews": 180,
		// 3 algorithms x 5 betas x 4 x 3
		"paper/fig-momentum-mnist": 180, "paper/fig-momentum-emnist": 180,
		"paper/fig-momentum-cifar10": 180, "paper/fig-momentum-agnews": 180,
		// 3 algorithms x 4 worker counts x 4 x 3
		"paper/fig-workers-mnist": 144, "paper/fig-workers-emnist": 144,
		"paper/fig-workers-cifar10": 144, "paper/fig-workers-agnews": 144,
		// 2 algorithms x 6 codecs x 4 x 3
		"paper/compression-mnist": 144,
		// (12 GT-DSUM readings + 3 D-SUM restarts) x 5 alphas x 4 x 3
		"paper/gt-dsum-readings-mnist": 900,
	}
	var got []string
	for _, name := range Embedded() {
		if strings.HasPrefix(name, "paper/") {
			got = append(got, name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("embedded paper manifests %v; want the %d of this test", got, len(want))
	}
	lrGrid := []float64{0.01, math.Pow(10, -1.5), 0.1, math.Pow(10, -0.5)}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		plan, err := Open(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		t.Logf("%-32s %4d cells, %3d rounds each (hash %.12s)", name, len(plan.Cells), plan.Manifest.Rounds, plan.Hash)
		if len(plan.Cells) != want[name] {
			t.Errorf("%s: %d cells, want %d", name, len(plan.Cells), want[name])
		}
		if plan.Manifest.Table == nil || plan.Manifest.Table.Select != "lr" {
			t.Errorf("%s: want a table block that tunes lr per entry", name)
		}
		swept := plan.Manifest.Sweep
		lrs, seeds := map[float64]bool{}, map[int]bool{}
		for _, c := range plan.Cells {
			m := c.Config
			lrs[m.LR], seeds[m.Seed] = true, true
			batch := 128
			if m.Task.Dataset == "cifar10" {
				batch = 256
			}
			if (swept["workers"] == nil && m.Workers != 10) || (swept["local_steps"] == nil && m.LocalSteps != 10) ||
				m.BatchSize != batch || m.Topology.Kind != "mesh-to-ring" ||
				m.Topology.Params["weights"] != "metropolis-hastings" ||
				m.Partition.Kind != "dirichlet" || m.Engine != "" {
				t.Errorf(
					"%s cell %d (%s): not the paper's settings: %s",
					name,
					c.Index,
					c.LabelString(),
					CanonicalJSON(m),
				)
			}
			if a := m.Algorithm; a.Name == "gt-dsum" &&
				(a.Params["lambda"] != 0.8 || a.Params["tracker_init"] != "paper") {
				t.Errorf(
					"%s cell %d: gt-dsum with lambda %v, tracker_init %v",
					name,
					c.Index,
					a.Params["lambda"],
					a.Params["tracker_init"],
				)
			}
		}
		for _, lr := range lrGrid {
			if !lrs[lr] {
				t.Errorf("%s: lr %g of the paper's grid is not swept (have %v)", name, lr, lrs)
			}
		}
		if len(lrs) != 4 || len(seeds) != 3 || !seeds[1] || !seeds[2] || !seeds[3] {
			t.Errorf("%s: lrs %v seeds %v; want the 4-point grid and seeds 1-3", name, lrs, seeds)
		}
	}

	// quickstart-readings is the quickstart and two more cells.
	qs, err := Open("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	qr, err := Open("examples/quickstart-readings")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range qs.Cells {
		if string(c.Spec()) != string(qr.Cells[i].Spec()) {
			t.Errorf("quickstart-readings cell %d is not the quickstart's", i+1)
		}
	}
	if len(qr.Cells) != len(qs.Cells)+2 {
		t.Errorf("quickstart-readings has %d cells; want the quickstart's 5 and 2", len(qr.Cells))
	}

	// The quick versions are cells of the paper's at scale 0.3.
	for quickName, c := range map[string]struct {
		paper string
		cells int
	}{"quickstart": {"paper/table1-mnist", 5}, "examples/gt-dsum-readings-mnist-quick": {
		"paper/gt-dsum-readings-mnist", 30}} {
		quick, err := Open(quickName)
		if err != nil {
			t.Fatal(err)
		}
		paper, err := Open(c.paper)
		if err != nil {
			t.Fatal(err)
		}
		if err := paper.SetScale(0.3); err != nil {
			t.Fatal(err)
		}
		specs := map[string]bool{}
		for _, cell := range paper.Cells {
			specs[string(cell.Spec())] = true
		}
		for _, cell := range quick.Cells {
			if !specs[string(cell.Spec())] {
				t.Errorf("%s cell %s is not a cell of %s at scale 0.3", quickName, cell.LabelString(), c.paper)
			}
		}
		if len(quick.Cells) != c.cells {
			t.Errorf("%s has %d cells; want %d", quickName, len(quick.Cells), c.cells)
		}
	}
}

// TestOverrides applies command-line overrides PATH=VALUE: each is
// validated like the file (messages name it), enters the hash exactly as
// writing it into the file would, and may set a sweep.
func TestOverrides(t *testing.T) {
	swept := valid + "sweep:\n  seed: [1, 2]\n"
	base, err := Parse("m.yaml", []byte(swept))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(
		"m.yaml",
		[]byte(swept),
		"lr=0.05",
		"algorithm.beta=0.5",
		"sweep.seed=[1, 2, 3]",
		"task.quadratic.dim=20",
	)
	if err != nil {
		t.Fatal(err)
	}
	written, err := Parse(
		"m.yaml",
		[]byte(strings.NewReplacer(
			"lr: 0.1",
			"lr: 0.05",
			"{name: d-sum}",
			"{name: d-sum, beta: 0.5}",
			"seed: [1, 2]",
			"seed: [1, 2, 3]",
			"{dataset: quadratic}",
			"{dataset: quadratic, quadratic: {dim: 20}}",
		).Replace(swept)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != written.Hash || got.Hash == base.Hash || len(got.Cells) != 3 || got.Cells[0].Config.LR != 0.05 {
		t.Errorf(
			"overrides: hash %.12s, %d cells; the same values written in the file: %.12s (without: %.12s)",
			got.Hash,
			len(got.Cells),
			written.Hash,
			base.Hash,
		)
	}
	for _, tc := range []struct {
		override string
		want     []string
	}{
		{"lr=fast", []string{"m.yaml, override 1", `"lr"`}},
		{"lr", []string{"m.yaml, override 1 (lr)", "PATH=VALUE"}},
		{"lr=", []string{"PATH=VALUE"}},
		{"learning_rate=0.1", []string{`"learning_rate" is not a manifest field`}},
		{"seed=3", []string{"the manifest sweeps seed", "sweep.seed=[...]"}},
		{"algorithm.beta=[0.5", []string{"not YAML"}},
		{"algorithm.beta=2", []string{"m.yaml, override 1", "algorithm.beta"}},
		// a misspelt key, at any depth, gets the closest allowed one
		{"algorithm.bta=0.5", []string{`"algorithm.bta" is not a manifest field (did you mean "algorithm.beta"?)`}},
		{"toplogy.kind=ring", []string{`(did you mean "topology.kind"?)`}},
		{"sweep.sed=[1]", []string{`(did you mean "sweep.seed"?)`}},
		// a swept list's entries are keyed by their kind's own parameters
		{"sweep.algorithm=[{name: d-sum, alhpa: 4}]", []string{
			`unknown key "alhpa" (did you mean "alpha"?); allowed keys here: alpha, beta, momentum_restart, name`}},
	} {
		_, err := Parse("m.yaml", []byte(swept), tc.override)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("override %q: %v; want it to name %q", tc.override, err, w)
			}
		}
	}
}

// TestSuggestionsWork applies each suggestion a misspelt override gets,
// with its value: it must parse, unless the message said how the field
// is overridden instead (a field the manifest sweeps).
func TestSuggestionsWork(t *testing.T) {
	didYouMean := regexp.MustCompile(`did you mean "([^"]+)"\?`)
	for _, tc := range []struct{ manifest, override, says string }{
		{"quickstart", "algorithm.bta=0.5", "the manifest sweeps algorithm, so that is " +
			"overridden as sweep.algorithm=[...]"},
		{"quickstart", "toplogy.kind=ring", ""},
		{"quickstart", "workrs=8", ""},
		{"quickstart", "sweep.sed=[1, 2]", ""},
	} {
		_, err := Open(tc.manifest, tc.override)
		m := didYouMean.FindStringSubmatch(fmt.Sprint(err))
		if m == nil {
			t.Errorf("%s %s: %v; want a suggestion", tc.manifest, tc.override, err)
			continue
		}
		_, value, _ := strings.Cut(tc.override, "=")
		_, applied := Open(tc.manifest, m[1]+"="+value)
		switch {
		case tc.says != "" && !strings.Contains(err.Error(), tc.says):
			t.Errorf("%s %s: %v; want it to say %q", tc.manifest, tc.override, err, tc.says)
		case tc.says == "" && applied != nil:
			t.Errorf("%s %s suggests %s, which fails: %v", tc.manifest, tc.override, m[1], applied)
		case tc.says != "" && applied == nil:
			t.Errorf(
				"%s %s: the suggestion %s parses; the message need not redirect it",
				tc.manifest,
				tc.override,
				m[1],
			)
		}
	}
}

// TestAValueInsideASweptListSaysHowToSetIt: sweep.algorithm.beta=0.5,
// where algorithm is swept as a list, is refused with the whole list
// written out with beta set in each entry whose algorithm takes it.
func TestAValueInsideASweptListSaysHowToSetIt(t *testing.T) {
	_, err := Open("quickstart", "sweep.algorithm.beta=0.5")
	want := "'sweep.algorithm=[{name: local-sgd-m, beta: 0.5}, {name: qg-dsgdm, beta: 0.5}, {name: slowmo}, {name: " +
		"d-sum, alpha: 2, beta: 0.5}, {name: gt-dsum, alpha: 2, beta: 0.5, lambda: 0.8}]'"
	if err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "sweep.algorithm.beta=[...]") {
		t.Errorf("sweep.algorithm.beta=0.5: %v; want the list %s", err, want)
	}
	if _, err := Open("quickstart", "sweep.algorithm=[{name: d-sum, beta: 0.5}]"); err != nil {
		t.Errorf("the list the message suggests, shortened: %v", err)
	}
}

// TestNullBlockIsAbsent: `compression: null`, as the normalised form
// writes "no compression", parses as no compression block at all.
func TestNullBlockIsAbsent(t *testing.T) {
	base := "version: 1\nname: n\ntask: {dataset: quadratic}\nworkers: 4\nrounds: 5\nlr: 0.1\nalgorithm: {name: " +
		"d-sum}\n"
	without, err := Parse("a.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	null, err := Parse("b.yaml", []byte(base+"compression: null\n"))
	if err != nil {
		t.Fatal(err)
	}
	if null.Hash != without.Hash || null.Cells[0].Config.Compression != nil {
		t.Errorf(
			"compression: null gave hash %.12s and block %v; want %.12s and none",
			null.Hash,
			null.Cells[0].Config.Compression,
			without.Hash,
		)
	}
}

// TestOverrideOfADottedSweepKey: sweep.FIELD sets the sweep's list for a
// dotted path (sweep.partition.alpha), as the file's `partition.alpha: [...]`
// key does, not a partition mapping inside the sweep.
func TestOverrideOfADottedSweepKey(t *testing.T) {
	plan, err := Open("paper/table1-mnist", "sweep.partition.alpha=[0.1]")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cells) != 84 {
		t.Fatalf("%d cells; want 84 (7 algorithms x 4 rates x 3 seeds at partition.alpha 0.1)", len(plan.Cells))
	}
	for _, c := range plan.Cells {
		if a := c.Config.Partition.Params.Float("alpha"); a != 0.1 {
			t.Fatalf("a cell at partition.alpha %v; want 0.1 only", a)
		}
	}
}

// TestMisspeltEmbeddedNamesGetASuggestion: a name that is no file and no
// embedded manifest suggests the closest embedded one, by its full name or
// its name without the folder, and nothing when none is close.
func TestMisspeltEmbeddedNamesGetASuggestion(t *testing.T) {
	for name, want := range map[string]string{
		"quickstrat":         `(did you mean "quickstart"?)`,
		"table1-mnist":       `(did you mean "paper/table1-mnist"?)`,
		"table1-mnsit":       `(did you mean "paper/table1-mnist"?)`,
		"paper/table1-mnits": `(did you mean "paper/table1-mnist"?)`,
		"zzz":                "",
	} {
		_, err := Open(name)
		if err == nil || (want != "" && !strings.Contains(err.Error(), want)) ||
			(want == "" && strings.Contains(err.Error(), "did you mean")) {
			t.Errorf("Open(%q): %v; want %q", name, err, want)
		}
	}
}

// TestSelectOnSeedsOfItsOwn: table.select's mapping form {by, seeds,
// per} parses, survives the normalised JSON both ways (the string form writes
// as before, so tables without seeds keep their hashes), and a seed the
// sweep lacks, or a list that leaves none to report, is refused naming
// table.select.seeds.
func TestSelectOnSeedsOfItsOwn(t *testing.T) {
	src := `version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  lr: [0.1, 0.2]
  seed: [1, 2, 3]
table: {rows: [algorithm], value: objective_gap, select: SELECT}
`
	plan, err := Parse("s.yaml", []byte(strings.Replace(src, "SELECT", "{by: lr, seeds: [1, 2]}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	tb := plan.Manifest.Table
	if tb.Select != "lr" || !slices.Equal(tb.SelectSeeds, []int{1, 2}) {
		t.Fatalf("select parsed as %q %v", tb.Select, tb.SelectSeeds)
	}
	data := CanonicalJSON(tb)
	if !strings.Contains(string(data), `"select":{"by":"lr","seeds":[1,2]}`) {
		t.Errorf("normalised: %s", data)
	}
	var back Table
	if err := json.Unmarshal(data, &back); err != nil || back.Select != "lr" ||
		!slices.Equal(back.SelectSeeds, []int{1, 2}) {
		t.Errorf("read back: %+v %v", back, err)
	}
	plain, err := Parse("s.yaml", []byte(strings.Replace(src, "SELECT", "lr", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if data := CanonicalJSON(plain.Manifest.Table); !strings.Contains(string(data), `"select":"lr"`) {
		t.Errorf("the string form normalises to %s", data)
	}
	for sel, want := range map[string][]string{
		"{by: lr, per: row}":                         {"row"},
		"{by: lr, per: [row, entry]}":                {"row", "entry"},
		"{by: lr, seeds: [1, 2], per: [entry, row]}": {"entry", "row"},
	} {
		p, err := Parse("s.yaml", []byte(strings.Replace(src, "SELECT", sel, 1)))
		if err != nil {
			t.Fatalf("select %s: %v", sel, err)
		}
		tb := p.Manifest.Table
		if !slices.Equal(tb.SelectPer, want) || tb.Scope() != want[0] {
			t.Errorf("select %s: per parsed as %v (scope %s)", sel, tb.SelectPer, tb.Scope())
		}
		var back Table
		if err := json.Unmarshal(CanonicalJSON(tb), &back); err != nil || !slices.Equal(back.SelectPer, want) ||
			!slices.Equal(back.SelectSeeds, tb.SelectSeeds) {
			t.Errorf("select %s: read back %+v %v", sel, back, err)
		}
		if p.Hash == plain.Hash || p.Hash == plan.Hash {
			t.Errorf("select %s has the hash of a table without it", sel)
		}
	}
	for sel, want := range map[string]string{
		"{by: lr, per: column}":      `"table.select.per": "column" is not a scope`,
		"{by: lr, per: [row, row]}":  `"row" is listed twice`,
		"{by: lr, per: []}":          "list the scopes",
		"{per: row}":                 `"table.select.by"`,
		"{by: lr, pre: row}":         `unknown key "pre" (did you mean "per"?)`,
		"{by: lr, seeds: [1, 4]}":    "seed 4 is not swept",
		"{by: lr, seeds: [1, 2, 3]}": "leaves no swept seed to report",
		"{by: lr, sedes: [1]}":       `unknown key "sedes" (did you mean "seeds"?)`,
		"{seeds: [1]}":               `"table.select.by"`,
	} {
		_, err := Parse("s.yaml", []byte(strings.Replace(src, "SELECT", sel, 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("select %s: %v; want %q", sel, err, want)
		}
	}
}

// TestYAMLRunsWithTheSameHash: the YAML of every embedded manifest's
// normalised form, with and without overrides, opens as a manifest of the
// same hash.
func TestYAMLRunsWithTheSameHash(t *testing.T) {
	for _, name := range Embedded() {
		for _, overrides := range [][]string{nil, {"scale=0.05", "checkpoint.every=7"}} {
			p, err := Open(name, overrides...)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "manifest.yaml")
			if err := os.WriteFile(file, YAML(p.Manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			q, err := Open(file)
			if err != nil {
				t.Fatalf("%s %v: %v", name, overrides, err)
			}
			if q.Hash != p.Hash {
				t.Errorf("%s %v: its YAML opens as %.12s, not %.12s", name, overrides, q.Hash, p.Hash)
			}
		}
	}
}

// TestEveryRangeProblemAtOnce: the manifest's own out-of-range values and
// its sweep's, every value of every axis and every combination, come in
// one error, each problem once.
func TestEveryRangeProblemAtOnce(t *testing.T) {
	data := strings.Replace(
		valid,
		"lr: 0.1",
		"lr: -0.1",
		1,
	) + "sweep:\n  seed: [1, 2]\n  algorithm.beta: [0.5, 1.5]\n  workers: [4, 0]\n  local_steps: [-1, 1]\n"
	_, err := Parse("bad.yaml", []byte(data))
	var bad *Error
	if !errors.As(err, &bad) {
		t.Fatalf("%v; want an Error", err)
	}
	want := []string{
		`bad.yaml:5: field "lr": -0.1`,
		`bad.yaml:9: field "algorithm.beta": 1.5`,
		`bad.yaml:10: field "workers": 0`,
		`bad.yaml:11: field "local_steps": -1`,
	}
	if len(bad.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(bad.Problems), len(want), err)
	}
	for _, w := range want {
		if n := strings.Count(err.Error(), w); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", w, n, err)
		}
	}
}

// TestValidationThatHoldsOutNothingIsRefused: a validation fraction that
// rounds to no sample in the largest worker the partition can give (an
// equal share of MNIST's 60,000 over 200 workers: 300) is refused with
// the least fraction that holds one out; one that does hold out passes.
func TestValidationThatHoldsOutNothingIsRefused(t *testing.T) {
	m := "version: 1\nname: v\ntask: {dataset: mnist}\nworkers: 200\nrounds: 2\nlr: 0.1\nalgorithm: {name: " +
		"d-sum}\npartition: {kind: iid}\nvalidation: {fraction: F}\n"
	_, err := Parse("v.yaml", []byte(strings.Replace(m, "F", "0.001", 1)))
	if err == nil ||
		!strings.Contains(err.Error(), `v.yaml:9: field "validation.fraction": 0.001 holds out no sample`) ||
		!strings.Contains(err.Error(), "at least 0.0017") {
		t.Errorf("0.001 of 300 samples: %v; want it refused", err)
	}
	if _, err := Parse("v.yaml", []byte(strings.Replace(m, "F", "0.002", 1))); err != nil {
		t.Errorf("0.002 of 300 samples holds one out: %v", err)
	}
}

// TestGPUEngineRefusesAValidationSplit: --engine gpu of a manifest that
// holds out a validation split is refused (the GPU engine does not score
// one), as engine: gpu in the file is; the CPU engine takes it.
func TestGPUEngineRefusesAValidationSplit(t *testing.T) {
	m := "version: 1\nname: v\ntask: {dataset: mnist}\nworkers: 4\nrounds: 2\nlr: 0.1\nalgorithm: {name: " +
		"d-sum}\npartition: {kind: iid}\nvalidation: {fraction: 0.1}\n"
	p, err := Parse("v.yaml", []byte(m))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetEngine("gpu"); err == nil ||
		!strings.Contains(err.Error(), "--engine gpu: the manifest holds out a validation split") {
		t.Errorf("--engine gpu with validation: %v; want it refused", err)
	}
	if err := p.SetEngine("cpu"); err != nil {
		t.Errorf("--engine cpu with validation: %v", err)
	}
	if _, err := Parse("v.yaml", []byte(m+"engine: gpu\n")); err == nil ||
		!strings.Contains(err.Error(), "the GPU engine does not score a validation split") {
		t.Errorf("engine: gpu with validation: %v; want it refused", err)
	}
}

// TestImpossibleMinSizeIsRefused: a Dirichlet min_size that the workers
// together cannot hold (100 workers of at least 700 of MNIST's 60,000) is
// refused when the manifest is read, saying the most it can be.
func TestImpossibleMinSizeIsRefused(t *testing.T) {
	m := "version: 1\nname: v\ntask: {dataset: mnist}\nworkers: 100\nrounds: 2\nlr: 0.1\nalgorithm: {name: " +
		"d-sum}\npartition: {kind: dirichlet, alpha: 1, min_size: N}\n"
	_, err := Parse("v.yaml", []byte(strings.Replace(m, "N", "700", 1)))
	if err == nil ||
		!strings.Contains(err.Error(), `v.yaml:8: field "partition.min_size": 700 for each of 100 workers`) ||
		!strings.Contains(err.Error(), "use at most 600") {
		t.Errorf("min_size 700 of 100 workers: %v; want it refused", err)
	}
	if _, err := Parse("v.yaml", []byte(strings.Replace(m, "N", "600", 1))); err != nil {
		t.Errorf("min_size 600 of 100 workers fits: %v", err)
	}
}

// TestLabelStringIsFitForATerminal: a cell's label from a registration
// read elsewhere (S3) prints its control characters written out.
func TestLabelStringIsFitForATerminal(t *testing.T) {
	c := Cell{Label: map[string]string{"algorithm": "d-sum\x1b]0;x\a", "lr": "0.1"}}
	if got, want := c.LabelString(), `algorithm=d-sum\x1b]0;x\a lr=0.1`; got != want {
		t.Errorf("LabelString() = %q, want %q", got, want)
	}
}

// codecNames are the codecs the catalogue declares, sorted, as the schema
// lists them.
// sortedNames are a catalogue's names as an error lists them: sorted (a
// guide's new kind joins them without a test's edit).
func sortedNames(names []string) string {
	return strings.Join(slices.Sorted(slices.Values(names)), ", ")
}

// TestLargeNumbersSurviveTheRoundTrip: every numeric field of a paper
// manifest and of the quadratic example, set to 10^6, 10^9, 2^53+1 and
// the largest int64, is
// either refused with a message naming the field, or written back by YAML
// as the same number: the file opens with the same hash and holds the
// value digit for digit (a date seed, 20240101, was written back as
// 2.0240101e+07 and the file no longer opened). Two sweeps that differ
// only past 2^53 have two hashes.
func TestLargeNumbersSurviveTheRoundTrip(t *testing.T) {
	values := []string{"1000000", "1000000000", "9007199254740993", "9223372036854775807", "20240101"}
	checked := 0
	for _, name := range []string{"examples/quadratic", "paper/table1-mnist"} {
		p, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if prefix == "" && (k == "sweep" || k == "table" || k == "add") {
						continue
					}
					walk(strings.TrimPrefix(prefix+"."+k, "."), e)
				}
			case json.Number:
				paths = append(paths, prefix)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(CanonicalJSON(p.Cells[0].Config)))
		dec.UseNumber()
		var tree any
		if err := dec.Decode(&tree); err != nil {
			t.Fatal(err)
		}
		walk("", tree)
		if len(paths) < 8 {
			t.Fatalf("%s: %d numeric fields found (%v)", name, len(paths), paths)
		}
		for _, path := range paths {
			_, err := Open(name, path+"=1.5")
			float := err == nil // an integer field refuses 1.5
			for _, v := range values {
				q, err := Open(name, path+"="+v)
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						t.Errorf("%s %s=%s: refused without naming the field: %v", name, path, v, err)
					}
					continue
				}
				checked++
				file := filepath.Join(t.TempDir(), "manifest.yaml")
				if err := os.WriteFile(file, YAML(q.Manifest), 0o644); err != nil {
					t.Fatal(err)
				}
				r, err := Open(file)
				if err != nil {
					t.Errorf("%s %s=%s: its YAML does not open: %v", name, path, v, err)
					continue
				}
				if r.Hash != q.Hash {
					t.Errorf("%s %s=%s: its YAML opens as %.12s, not %.12s", name, path, v, r.Hash, q.Hash)
				}
				want := v // an integer keeps every digit; a float is the float64 nearest
				if f, _ := strconv.ParseFloat(v, 64); float {
					want = string(CanonicalJSON(f))
				}
				if got := r.Cells[0].ValueAt(path); got != want {
					t.Errorf("%s %s=%s: written back as %s, want %s", name, path, v, got, want)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d values accepted: the fields or their limits changed", checked)
	}
	sweep := func(seed string) string {
		p, err := Parse("m.yaml", []byte(valid+"sweep:\n  seed: [1, "+seed+"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		return p.Hash
	}
	if sweep("9007199254740992") == sweep("9007199254740993") {
		t.Error("sweeps of seeds 2^53 and 2^53+1 share a hash")
	}
}

// TestALongNameIsRefused: a name of 201 characters is refused naming the
// field, since its results directory (NAME-HASH12) could not be written
// on every file system; one of 200 is accepted, and its directory name
// fits in 255 bytes.
func TestALongNameIsRefused(t *testing.T) {
	for _, n := range []int{200, 201, 10000} {
		_, err := Parse("m.yaml", []byte(strings.Replace(valid, "name: errs", "name: "+strings.Repeat("n", n), 1)))
		switch {
		case n <= maxNameLength && err != nil:
			t.Errorf("a name of %d characters: %v", n, err)
		case n > maxNameLength && (err == nil || !strings.Contains(err.Error(), `field "name"`) ||
			!strings.Contains(err.Error(), "too long")):
			t.Errorf("a name of %d characters: %v, want a refusal naming the field", n, err)
		}
	}
	if maxNameLength+len("-123456789abc") > 255 {
		t.Errorf("a results directory of a %d-character name has more than 255 bytes", maxNameLength)
	}
}
