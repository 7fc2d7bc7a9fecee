package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// keyProbeBases are cells the keys table changes one field of: a data
// set split by Dirichlet on a fixed graph, a quadratic on a graph that
// changes by round, a data set on a graph drawn from the seed.
var keyProbeBases = []string{`version: 1
name: probe
task: {dataset: synthetic, model: mlp}
workers: 4
rounds: 4
local_steps: 2
batch_size: 16
lr: 0.05
algorithm: {name: d-sum}
partition: {kind: dirichlet, alpha: 0.5}
topology: {kind: ring}
`, `version: 1
name: probe
task: {dataset: quadratic, quadratic: {dim: 10}}
workers: 8
rounds: 6
lr: 0.05
algorithm: {name: d-sum}
topology: {kind: mesh-to-ring}
`, `version: 1
name: probe
task: {dataset: synthetic, model: mlp}
workers: 6
rounds: 4
batch_size: 16
lr: 0.05
algorithm: {name: d-sum}
topology: {kind: random-regular, degree: 3}
`}

// keyProbes are the rows of the keys table: a manifest field and an
// override that changes it (applied to each base that accepts it).
var keyProbes = []struct{ field, override string }{
	{"task.dataset", "task={dataset: synthetic, model: mlp, synthetic: {classes: 3}}"},
	{"task.model", "task.model=logreg"},
	{"task.quadratic", "task.quadratic.dim=12"},
	{"workers", "workers=12"},
	{"seed", "seed=2"},
	{"partition", "partition={kind: iid}"},
	{"validation", "validation={fraction: 0.25}"},
	{"topology", "topology={kind: full}"},
	{"rounds", "rounds=12"},
	{"local_steps", "local_steps=3"},
	{"lr", "lr=0.1"},
	{"lr_schedule", "lr_schedule={kind: cosine}"},
	{"batch_size", "batch_size=32"},
	{"weight_decay", "weight_decay=0.001"},
	{"algorithm", "algorithm={name: gt-dsum}"},
	{"compression", "compression={codec: fp16}"},
	{"engine", "engine=gpu"},
	{"evaluate.every", "evaluate.every=2"},
	{"checkpoint.every", "checkpoint.every=2"},
	{"name", "name=other"},
}

// keysTable is the Markdown table of which manifest fields enter the cell
// key and each stage's key, found by changing each field of each base
// cell (keyProbes): "yes" where the change always changes it, "some
// cells" where only for some (a topology kind whose graphs use the field,
// a task that has it).
func keysTable(t *testing.T) string {
	t.Helper()
	stgs := cellStages(nil)
	var b strings.Builder
	b.WriteString("| field | cell key |")
	for _, st := range stgs {
		b.WriteString(" " + st.Name() + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(stgs)) + "\n")
	for _, p := range keyProbes {
		changed := make([]int, 1+len(stgs)) // how many probes changed the cell key, each stage's params
		probes := 0
		for _, src := range keyProbeBases {
			base, err := manifests.Parse("probe.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			other, err := manifests.Parse("probe.yaml", []byte(src), p.override)
			if err != nil {
				continue // the change does not apply to this base
			}
			a, c := &base.Cells[0], &other.Cells[0]
			probes++
			if !bytes.Equal(a.Spec(), c.Spec()) {
				changed[0]++
			}
			for i, st := range stgs {
				if !bytes.Equal(st.Params(&a.Config), st.Params(&c.Config)) {
					changed[i+1]++
				}
			}
		}
		if probes == 0 {
			t.Fatalf("keys table: no base cell takes %q", p.override)
		}
		fmt.Fprintf(&b, "| `%s` |", p.field)
		for _, n := range changed {
			switch n {
			case 0:
				b.WriteString(" – |")
			case probes:
				b.WriteString(" yes |")
			default:
				b.WriteString(" some cells |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestTheKeysTableIsGenerated keeps docs/manifests.md's table of what
// enters which key the one the stages' params give (go test ./pipeline
// -run KeysTable -update-keys writes it).
func TestTheKeysTableIsGenerated(t *testing.T) {
	const path = "../docs/manifests.md"
	const begin, end = "<!-- keys table: go test ./pipeline -run KeysTable -update-keys -->\n", "<!-- end of the " +
		"keys table -->\n"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no keys table between %q and %q", path, begin, end)
	}
	want := "\n" + keysTable(t) + "\n" // blank lines keep the table its own block
	if *updateKeys {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[i+len(begin) : j]; got != want {
		t.Errorf(
			"%s: the keys table is not the stages' (go test ./pipeline -run KeysTable -update-keys); want\n%s",
			path,
			want,
		)
	}
}
