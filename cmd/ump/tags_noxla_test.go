//go:build !xla

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// buildTags are the tags the tests build ump with: those they are built with.
var buildTags []string

// TestGPUEngineNeedsTheXLABuild: without -tags xla, --engine gpu and
// --exact-gpu are bad input (exit 2) with the way out, before anything is
// registered, a bad --engine value is a usage error, and doctor says which
// engines work.
func TestGPUEngineNeedsTheXLABuild(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "s.yaml", strings.Replace(inspectManifest, "DATASET", "synthetic", 1))
	if r := ump(t, store, "run", "--engine", "gpu", m); r.code != 2 ||
		!strings.Contains(r.stderr, "rebuild with -tags xla") ||
		!strings.Contains(r.stderr, "--engine cpu") {
		t.Errorf("--engine gpu without the GPU build: exit %d, %s", r.code, r.stderr)
	}
	if r := ump(t, store, "--exact-gpu", "run", m); r.code != 2 ||
		!strings.Contains(r.stderr, "rebuild with -tags xla") ||
		!strings.Contains(r.stderr, "without --exact-gpu") {
		t.Errorf("--exact-gpu without the GPU build: exit %d, %s", r.code, r.stderr)
	}
	if r := ump(t, store, "status"); !strings.Contains(r.stdout, "holds no manifests") {
		t.Errorf("the refused run left a store behind: status exits %d, %s%s", r.code, r.stdout, r.stderr)
	}
	if r := ump(t, store, "run", "--engine", "tpu", m); r.code != 2 || !strings.Contains(r.stderr, "use cpu or gpu") {
		t.Errorf("--engine tpu: exit %d, %s", r.code, r.stderr)
	}
	q := writeFile(
		t,
		"q.yaml",
		"version: 1\nname: q\ntask: {dataset: quadratic}\nrounds: 5\nlr: 0.1\nalgorithm: {name: d-sum}\nengine: gpu\n",
	)
	if r := ump(t, store, "run", q); r.code != 2 ||
		!strings.Contains(r.stderr, `"engine": the quadratic task runs on the CPU`) {
		t.Errorf("engine: gpu on the quadratic task: exit %d, %s", r.code, r.stderr)
	}
	r := ump(t, store, "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "cpu: works: go-cpu-float32/v3, kernels ") ||
		!strings.Contains(r.stdout, "gpu: does not work here") {
		t.Errorf("doctor: exit %d\n%s", r.code, r.stdout)
	}
	// verify would compute: it refuses alike, for a hash and for a
	// directory, rather than call the results not reproducible.
	run := ump(t, store, "run", m)
	if run.code != 0 {
		t.Fatalf("run on the CPU: exit %d, %s", run.code, run.stderr)
	}
	hash := hashOf(t, run)
	r = ump(t, store, "--exact-gpu", "verify", hash)
	if r.code != 2 || !strings.Contains(r.stderr, "without --exact-gpu") {
		t.Errorf("--exact-gpu verify HASH without the GPU build: exit %d, %s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	if r := ump(t, store, "report", "--out", out, hash); r.code != 0 {
		t.Fatalf("report: exit %d, %s", r.code, r.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-"+hash[:12]))
	if len(dirs) != 1 {
		t.Fatalf("report wrote %v", dirs)
	}
	r = ump(t, store, "--exact-gpu", "verify", dirs[0])
	if r.code != 2 || !strings.Contains(r.stderr, "without --exact-gpu") {
		t.Errorf("--exact-gpu verify DIR without the GPU build: exit %d, %s", r.code, r.stderr)
	}
}
