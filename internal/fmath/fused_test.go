package fmath

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// numerics are the packages whose floating-point arithmetic makes a
// cell's numbers.
var numerics = []string{"nn", "nn/cpu", "algorithms", "compress", "split", "datasets", "internal/fmath", "internal/rng",
	"stages/partition", "stages/topology", "stages/train"}

// TestNumericsHaveNoFusedMultiplyAdds compiles the numerics for arm64 and
// for amd64 with GOAMD64=v3, where Go may fuse x*y + z into one
// instruction (amd64's default level never does), and fails on every
// fused instruction the compiler chose: each would give other bits there
// than here. The fix is an explicit conversion, float32(x*y) + z, as
// this package's functions do (the C kernels' fused multiply-adds are
// explicit, and the same on every machine).
func TestNumericsHaveNoFusedMultiplyAdds(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the numerics for two other targets (-short)")
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	var pkgs []string
	for _, p := range numerics {
		pkgs = append(pkgs, strings.TrimSpace(string(mod))+"/"+p)
	}
	for _, target := range []struct {
		env   []string
		fused *regexp.Regexp
	}{
		{[]string{"GOARCH=arm64", "CGO_ENABLED=0"}, regexp.MustCompile(`\s(FMADD|FMSUB|FNMADD|FNMSUB)[SD]\s`)},
		{[]string{"GOARCH=amd64", "GOAMD64=v3", "CGO_ENABLED=0"}, regexp.MustCompile(`\sVFN?M(ADD|SUB)[0-9]+S[SD]\s`)},
	} {
		cmd := exec.Command("go", append([]string{"build", "-gcflags=-S", "-o", "/dev/null"}, pkgs...)...)
		cmd.Env = append(cmd.Environ(), target.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v go build: %v\n%.2000s", target.env, err, out)
		}
		listing := string(out)
		if !strings.Contains(listing, "TEXT") {
			t.Fatalf("%v: no assembly listing from go build -gcflags=-S", target.env)
		}
		for _, line := range strings.Split(listing, "\n") {
			if target.fused.MatchString(line) {
				t.Errorf("%v: a fused multiply-add: %s", target.env, strings.TrimSpace(line))
			}
		}
	}
}
