package stages_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStagesLinkNoEngineNorSibling: the stages are handed their engines
// by the composition root (package engines) and read one another's
// outputs through the store, so no stage links an engine package or
// another stage, with or without the GPU build's tags.
func TestStagesLinkNoEngineNorSibling(t *testing.T) {
	const mod = "github.com/ump-lab/ump/"
	stageNames := []string{"partition", "topology", "train", "evaluate"}
	for _, tags := range []string{"", "xla"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./...").
			Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		deps := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			deps[strings.TrimPrefix(fields[0], mod)] = fields[1:]
		}
		for _, name := range stageNames {
			pkg := "stages/" + name
			if _, ok := deps[pkg]; !ok {
				t.Fatalf("go list does not list %s", pkg)
			}
			forbidden := []string{"nn/cpu", "nn/gpu", "engines"}
			for _, other := range stageNames {
				if other != name {
					forbidden = append(forbidden, "stages/"+other)
				}
			}
			for _, dep := range deps[pkg] {
				for _, f := range forbidden {
					if dep == mod+f {
						t.Errorf("tags %q: %s links %s", tags, pkg, f)
					}
				}
			}
		}
	}
}
