package loop

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestGoMLXIsTheVersionTheShimKnows: go.mod requires the GoMLX release
// gomlx_internals.go was written for. An upgrade fails here, by name,
// before a loop fails somewhere unknown on a GPU host. It runs without
// the xla tag, so every make test checks it.
func TestGoMLXIsTheVersionTheShimKnows(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/gomlx/gomlx (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no github.com/gomlx/gomlx; the GPU engine needs it")
	}
	if got := string(m[1]); got != gomlxVersion {
		t.Errorf("go.mod requires GoMLX %s, but nn/gpu/loop/gomlx_internals.go reaches into the private fields of %s "+
			"(Graph.builder and .scalars, Function.backendFunc, the XLA builder's caches): check each against %s's "+
			"graph/function.go, graph/graph.go and backends/xla/builder.go, run the kit's phases "+
			"(go test -tags xla ./gpukit), then set gomlxVersion to %s",
			got, gomlxVersion, got, got)
	}
}
