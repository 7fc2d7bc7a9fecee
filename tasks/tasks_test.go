package tasks

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestOfSelectsTheQuadraticByItsName(t *testing.T) {
	if k := Of("quadratic"); k != &Quadratic || k.Samples {
		t.Errorf("Of(quadratic) = %+v, want Quadratic, without samples", k)
	}
	for _, dataset := range []string{"mnist", "synthetic", "agnews"} {
		if k := Of(dataset); k != &Classification || !k.Samples {
			t.Errorf("Of(%s) = %+v, want Classification, with samples", dataset, k)
		}
	}
}

// TestNoTaskOrEngineIsComparedByName keeps the special cases in the
// declarations: outside this package no Go file compares a value with a
// task's or an engine's name; it asks the kind (manifests.Task.Kind,
// Manifest.OnGPU) instead.
func TestNoTaskOrEngineIsComparedByName(t *testing.T) {
	var names []string
	for _, name := range append([]string{Quadratic.Name, Classification.Name}, Engines...) {
		names = append(names, regexp.QuoteMeta(name))
	}
	alt := strings.Join(names, "|")
	compare := regexp.MustCompile(`[!=]=\s*"(` + alt + `)"|"(` + alt + `)"\s*[!=]=|case\s+"(` + alt + `)"`)
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tasks" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) &&
			path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if compare.MatchString(line) {
				t.Errorf(
					"%s:%d compares with a task's or engine's name; ask the kind (manifests.Task.Kind, "+
						"Manifest.OnGPU): %s",
					path,
					i+1,
					strings.TrimSpace(line),
				)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
