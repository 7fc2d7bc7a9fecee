package cpu

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestArm64GivesThePinnedNumbers cross-compiles the tests that pin the
// engine's numbers (a step and an evaluation of every model, a 3-round run
// of every algorithm, the elementary functions) for arm64, and runs them
// under qemu-aarch64: they pass only with the digests pinned on amd64. It
// builds them as an arm64 user gets them: with cgo and Debian's cross gcc
// (the neon kernels), with cgo and clang (the neon kernels), and without
// cgo (the go path). The go path runs once, in the cgo-free build's
// engine test: it is the same Go code, compiled alike, in the cgo builds,
// and under qemu it is the slow one (13 s of the engine's test, against
// 3 s for neon; the runs' 3 rounds of every algorithm run on neon, since
// the algorithms' code is the same on every path).
func TestArm64GivesThePinnedNumbers(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("this machine is arm64: the pinned tests run natively")
	}
	if testing.Short() {
		t.Skip("cross-compiles and runs test binaries under qemu (-short)")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("needs qemu-aarch64 to run an arm64 build (Debian: apt-get install qemu-user; .ci/run installs it)")
	}
	gcc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	if err != nil {
		t.Skip(
			"needs aarch64-linux-gnu-gcc to build the neon kernels (Debian: apt-get install gcc-aarch64-linux-gnu " +
				"libc6-dev-arm64-cross; .ci/run installs them)",
		)
	}
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("needs clang to build the neon kernels with it (Debian: apt-get install clang; .ci/run installs it)")
	}
	const sysroot = "/usr/aarch64-linux-gnu" // where qemu finds the cgo builds' libc
	for _, c := range []struct{ build, cc, pkg, test, kernels string }{
		{"gcc", gcc, ".", "TestEngineNumbersArePinned", "neon"},
		{"gcc", gcc, "../../stages/train", "TestRunsArePinned", "neon"},
		{"clang", clang + " --target=aarch64-linux-gnu", ".", "TestEngineNumbersArePinned", "neon"},
		{"no cgo", "", ".", "TestEngineNumbersArePinned", "go"},
		{"no cgo", "", "../../internal/fmath", "TestFunctionsArePinned", ""},
	} {
		t.Run(c.build+"/"+c.test, func(t *testing.T) {
			t.Parallel()
			env := []string{"GOARCH=arm64", "CGO_ENABLED=0"}
			if c.cc != "" {
				env = []string{"GOARCH=arm64", "CGO_ENABLED=1", "CC=" + c.cc}
			}
			bin := testBinary(t, c.pkg, env...)
			run := exec.Command(qemu, "-L", sysroot, bin, "-test.run", "^"+c.test+"$", "-test.v")
			run.Env = append(run.Environ(), "UMP_KERNELS="+c.kernels)
			out, err := run.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: "+c.test) {
				t.Errorf(
					"%s under qemu-aarch64 (arm64, %s, UMP_KERNELS=%s): %v\n%s",
					c.test,
					c.build,
					c.kernels,
					err,
					out,
				)
			}
		})
	}
}

// TestClangGivesThePinnedNumbersOnX86 builds the engine's pinned test with
// clang, as on an Intel Mac (its target pragmas are clang's own), and runs
// it on every kernel path this CPU runs.
func TestClangGivesThePinnedNumbersOnX86(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the x86 kernels are built for amd64 only")
	}
	if testing.Short() {
		t.Skip("builds the engine's tests again with clang (-short)")
	}
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("needs clang to build the x86 kernels with it (Debian: apt-get install clang; .ci/run installs it)")
	}
	t.Parallel()
	bin := testBinary(t, ".", "CGO_ENABLED=1", "CC="+clang)
	out, err := exec.Command(bin, "-test.run", "^TestEngineNumbersArePinned$", "-test.v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestEngineNumbersArePinned") {
		t.Errorf("TestEngineNumbersArePinned built with clang: %v\n%s", err, out)
	}
	for _, p := range Paths() { // this binary's (gcc's) paths: clang's must be the same
		if !strings.Contains(string(out), "on kernel path "+p+"\n") {
			t.Errorf("built with clang, TestEngineNumbersArePinned did not run kernel path %s:\n%s", p, out)
		}
	}
}

// TestCgoFreeGivesThePinnedNumbers builds the engine's tests without cgo,
// as `go install` builds ump on a machine without a C compiler, and runs
// them: the kernels are then Go assembly (kernels_amd64.s), and every
// path this CPU runs must give the pinned numbers and the Go loops' bits,
// allocate nothing in steady state, and train the runs' pinned numbers.
func TestCgoFreeGivesThePinnedNumbers(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the assembly kernels are amd64's")
	}
	if testing.Short() {
		t.Skip("builds the engine's tests again without cgo (-short)")
	}
	const kernelTests = "^(TestEngineNumbersArePinned|TestDirectKernelsGiveTheGoLoopsBits|" +
		"TestGemmAddsEachElementsProductsInOrder|TestPlaneWeightGradientAddsItsLanesInOrder|" +
		"TestSampleInputGradGivesThePaddedBits|TestSteadyStateAllocatesNoBuffers)$"
	for _, c := range []struct{ name, pkg, tests string }{
		{"nn/cpu", ".", kernelTests},
		{"stages/train", "../../stages/train", "^TestRunsArePinned$"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := testBinary(t, c.pkg, "CGO_ENABLED=0")
			out, err := exec.Command(bin, "-test.run", c.tests, "-test.v").CombinedOutput()
			if err != nil || strings.Contains(string(out), "--- FAIL") || !strings.Contains(string(out), "--- PASS") {
				t.Fatalf("%s built without cgo: %v\n%s", c.tests, err, out)
			}
			if c.pkg != "." {
				return
			}
			for _, p := range []string{"avx512", "avx2"} {
				if runs(p) && !strings.Contains(string(out), "on kernel path "+p+"\n") {
					t.Errorf("built without cgo, the engine's tests did not run kernel path %s:\n%s", p, out)
				}
			}
		})
	}
}

// TestTheAssemblyIsGenerated: kernels_amd64.s and its declarations are
// what asmgen writes (go generate ./nn/cpu after changing asmgen).
func TestTheAssemblyIsGenerated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("go", "run", "./asmgen", "-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("go run ./asmgen: %v\n%s", err, out)
	}
	for _, name := range []string{"kernels_amd64.s", "kernels_asm_amd64.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what asmgen writes (%v): run go generate ./nn/cpu", name, err)
		}
	}
}

// testBinary builds the tests of pkg with env (GOARCH, CGO_ENABLED, CC)
// into a binary, and returns its path.
func testBinary(t *testing.T, pkg string, env ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pkg.test")
	build := exec.Command("go", "test", "-c", "-o", bin, pkg)
	build.Env = append(build.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s go test -c %s: %v\n%s", strings.Join(env, " "), pkg, err, out)
	}
	return bin
}

// TestMacOSBuilds cross-compiles ump for macOS on Apple silicon, as `go
// install` builds it there without a C compiler: every package builds
// (Linux's system calls have their fallbacks). Intel Macs build the same
// Go code.
func TestMacOSBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles ump for macOS (-short)")
	}
	t.Parallel()
	build := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "ump"), "../../cmd/ump")
	build.Env = append(build.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("GOOS=darwin GOARCH=arm64 go build ./cmd/ump: %v\n%s", err, out)
	}
}
