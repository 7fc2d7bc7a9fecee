package cpu

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestArm64GivesThePinnedNumbers cross-compiles the tests that pin the
// engine's numbers (a step and an evaluation of every model, a 3-round run
// of every algorithm, the elementary functions) for arm64 without cgo, the
// go kernel path, and runs them under qemu-aarch64: they pass only with
// the digests pinned on amd64.
func TestArm64GivesThePinnedNumbers(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("this machine is arm64: the pinned tests run natively")
	}
	if testing.Short() {
		t.Skip("cross-compiles and runs three test binaries under qemu (-short)")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("needs qemu-aarch64 to run an arm64 build (Debian: apt-get install qemu-user; .ci/run installs it)")
	}
	for _, c := range []struct{ pkg, test string }{
		{".", "TestEngineNumbersArePinned"},
		{"../../stages/train", "TestRunsArePinned"},
		{"../../internal/fmath", "TestFunctionsArePinned"},
	} {
		bin := filepath.Join(t.TempDir(), "arm64.test")
		build := exec.Command("go", "test", "-c", "-o", bin, c.pkg)
		build.Env = append(build.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=arm64 go test -c %s: %v\n%s", c.pkg, err, out)
		}
		out, err := exec.Command(qemu, bin, "-test.run", "^"+c.test+"$", "-test.v").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: "+c.test) {
			t.Errorf("%s under qemu-aarch64 (arm64, kernel path go): %v\n%s", c.test, err, out)
		}
	}
}
