package gpukit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tinyTable is paper/table1-mnist cut to two cells of 4 workers training
// the MLP (LeNet's evaluation takes a minute on GoMLX's Go backend) on
// small batches for 30 rounds, evaluated at the end: long enough to be
// stopped by a time limit of a few seconds, short enough to finish in
// about half a minute. seed picks the cells (and so the manifest).
func tinyTable(seed string) []string {
	return []string{"paper/table1-mnist", "task.model=mlp", "workers=4", "batch_size=8", "local_steps=3", "rounds=30",
		"evaluate.every=30", "checkpoint.every=2", "sweep.partition.alpha=[0.1]", "sweep.lr=[0.1]", "sweep.seed=[" +
			seed + "]",
		"sweep.algorithm=[{name: d-sum, alpha: 2, beta: 0.9}, {name: local-sgd-m, beta: 0.9}]"}
}

// TestKitPhasesOnTheGoBackend runs the phases of the kit $UMP_GPU_KIT names
// (make test builds it first) on GoMLX's pure-Go backend, as a GPU host runs
// them on XLA, with no Go on the PATH and an empty home as there: all
// (smoke's doctor and compile check, agree's every GPU agreement test from
// the kit's test binaries with the kit's ump, bench's every line for its
// tiny case, lenet-tiny — the paper's cases take too long on the Go
// backend — and a tiny table run to the end), then
// tables of two manifests at a tiny scale stopped by its time limit in the
// first and continued to the end of both (the second is all's table, found
// in the kit's store). What each call leaves in $OUT must come back from a device
// (delivered).
func TestKitPhasesOnTheGoBackend(t *testing.T) {
	kit := os.Getenv("UMP_GPU_KIT")
	if kit == "" {
		t.Skip("UMP_GPU_KIT names no kit: make gpu-kit, then UMP_GPU_KIT=$PWD/.gpu go test ./gpukit (make test does)")
	}
	kitHome, home := t.TempDir(), t.TempDir()
	phase := func(t *testing.T, out string, env []string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(kit, "run"), args...)
		cmd.Env = append(
			os.Environ(),
			append([]string{"OUT=" + out, "UMP_KIT_HOME=" + kitHome, "GOMLX_BACKEND=go:ops_sequential",
				"HOME=" + home, "PATH=" + pathWithoutGo()}, env...)...)
		output, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(output)
	}
	read := func(t *testing.T, path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	holds := func(t *testing.T, what, text string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, text)
			}
		}
	}
	seedOneCalls := 0 // calls of ump run for tinyTable("1") in the kit's store
	t.Run("all", func(t *testing.T) {
		seedOneCalls++
		out := t.TempDir()
		code, output := phase(
			t,
			out,
			// The phases' budgets are a GPU host's: here, on a machine as busy
			// as make test leaves it, go test's -timeout bounds them instead.
			[]string{
				"UMP_KIT_LIMIT=" + strconv.Itoa(noBudget),
				"UMP_KIT_BENCH=lenet-tiny -gpu-peers none -gpu-rounds 1",
			},
			append([]string{"all"}, tinyTable("1")...)...)
		summaryFile, _ := os.ReadFile(filepath.Join(out, "all-summary.txt"))
		if over := outOfTime(string(summaryFile)); over != "" {
			t.Fatalf("the kit's %s; the machine may be too busy", over)
		}
		if code != 0 {
			t.Errorf("all exited %d:\n%s", code, output[max(0, len(output)-3000):])
		}
		logs := delivered(t, out)
		holds(
			t,
			"all's summary",
			read(t, filepath.Join(out, "all-summary.txt")),
			"smoke: exit 0",
			"agree: exit 0",
			"bench: exit 0",
			"tables: exit 0",
		)
		holds(
			t,
			"smoke's doctor log",
			read(t, filepath.Join(logs, "smoke-doctor.log")),
			"gpu: works: gomlx-float32/v5 SimpleGo",
			"backend: GOMLX_BACKEND=go:ops_sequential",
			"compile check: a loop of 3 trips",
			"exact order: 4096 float32 fused multiply-adds, a 15-element product in the CPU engine's order, 2048 "+
				"exponentials, 2048 logarithms, "+
				"a softmax cross-entropy's 152 figures and an mlp's step of gradients (7011 figures), emulated in "+
				"float64: every result has the CPU engine's bits",
		)
		holds(t, "smoke's host log", read(t, filepath.Join(logs, "smoke-host.log")), "sha256 ")
		agree := read(t, filepath.Join(logs, "agree-summary.txt"))
		if strings.Contains(agree, "--- FAIL") {
			t.Errorf("agree failed:\n%s", agree)
		}
		holds(
			t,
			"agree's summary",
			agree,
			"--- PASS: TestCohortMatchesCPU",
			"--- PASS: TestCohortAgreesWithCPUOverWholeRuns",
			"--- PASS: TestGPUEngineThroughThePipeline",
			"--- PASS: TestCheckCompile",
			"worst relative difference per figure",
			"--- PASS: TestCohortCasesAreWellConditioned",
			"--- PASS: TestGPUExactOrderGivesTheCPUBits",
			"--- PASS: TestGPUExactGradientGivesTheCPUBits",
			"--- PASS: TestGPUExactEvaluationGivesTheCPUBits",
			"--- PASS: TestGPUExactMixAndMeanAreTheCPUs",
			"--- PASS: TestGPUExactCellIsTheCPUs",
			"--- PASS: TestCohortMatchesCPU/gomlx-go/exact/gt-dsum",
			"exact order on gomlx-go: gt-dsum: 0 of the ",
		)
		holds(
			t,
			"bench's log",
			read(t, filepath.Join(logs, "bench.log")),
			"engine     gomlx-float32/v5",
			"module     github.com/gomlx/gomlx v",
			"module     github.com/gomlx/go-xla v",
			"lenet-tiny: lenet, 2 cells x 2 workers",
			"sizing         no XLA figures",
			"samples/s      ",
			"by chunk       evaluation by test samples per loop step: 16: ",
			"256: ",
			"(the cohort's)",
			"vs CPU engine  relative difference of cell 0's state after one round: x ",
			"two fresh cohorts): identical",
		)
		report := read(t, filepath.Join(logs, "results", "report.md"))
		if strings.Contains(report, "not finished") || !strings.Contains(report, "D-SUM") {
			t.Errorf("the table's report:\n%s", report)
		}
	})
	// The second manifest is the one all computed: tables finds it in the
	// kit's store (one call more, no cell computed again).
	t.Run("tables", func(t *testing.T) {
		first, second := t.TempDir(), t.TempDir()
		tables := append(append([]string{"tables"}, tinyTable("2")...), tinyTable("1")...)
		code, output := phase(t, first, []string{"UMP_KIT_LIMIT=5"}, tables...)
		if code != 75 || !strings.Contains(output, "run .gpu/run tables again") {
			t.Fatalf("tables within 5 s exited %d, want 75 (stopped, to be continued):\n%s", code, output)
		}
		if strings.Contains(output, "not closed by its last writer") {
			t.Errorf("the time limit killed ump instead of stopping it at a safe point:\n%s", output)
		}
		if report := read(t, filepath.Join(delivered(t, first), "results", "report.md")); !strings.Contains(
			report,
			"not finished",
		) {
			t.Errorf("the stopped run's report does not say what is not finished:\n%s", report)
		}
		code, output = phase(t, second, nil, tables...)
		if code != 0 {
			t.Fatalf("tables continued exited %d, want 0:\n%s", code, output)
		}
		logs := delivered(t, second)
		summary := read(t, filepath.Join(logs, "tables-summary.txt"))
		seedOneCalls++
		if !regexp.MustCompile(
			`tables: paper/table1-mnist .*sweep.seed=\[2\].* over 2 call\(s\)\ntables: paper/table1-mnist ` +
				`.*sweep.seed=\[1\].* over ` +
				fmt.Sprint(seedOneCalls) + ` call\(s\)\n$`).
			MatchString(summary) {
			t.Errorf(
				"the continued run's summary, want the first manifest over 2 calls and the second over %d:\n%s",
				seedOneCalls,
				summary,
			)
		}
		report := read(t, filepath.Join(logs, "results", "report.md"))
		if strings.Contains(report, "not finished") || strings.Count(report, "## table1-mnist\n") != 2 {
			t.Errorf("the finished run's report, want both manifests finished:\n%s", report)
		}
		if status := read(t, filepath.Join(logs, "tables-status.txt")); strings.Count(status, "2 completed") != 2 {
			t.Errorf("the finished run's status, want both manifests' 2 cells completed:\n%s", status)
		}
	})
	t.Run("bad-arguments", func(t *testing.T) {
		if code, output := phase(t, t.TempDir(), nil, "tabels"); code != 2 ||
			!strings.Contains(output, `unknown phase "tabels"`) {
			t.Errorf("an unknown phase exited %d:\n%s", code, output)
		}
		if code, output := phase(t, t.TempDir(), nil, "tables", "rounds=3", "paper/table1-mnist"); code != 2 ||
			!strings.Contains(output, "override rounds=3 comes before any manifest") {
			t.Errorf("an override before any manifest: exit %d:\n%s", code, output)
		}
		if code, output := phase(t, t.TempDir(), nil, "profile"); code != 2 ||
			!strings.Contains(output, "profiles XLA's kernels on a GPU; the backend here is go:ops_sequential") {
			t.Errorf("profile on the Go backend: exit %d:\n%s", code, output)
		}
	})
}

// pathWithoutGo is $PATH less its folders that hold a go command: a GPU
// host has no Go toolchain.
func pathWithoutGo() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// delivered checks that what a call left in out would all come back from
// the device tool — at most 8 files of at most 16 MiB, none more than two
// folders down, named in letters, digits, '.', '_' and '-' — and returns a
// folder with its kit-out.tar.gz unpacked: every phase's logs and results.
func delivered(t *testing.T, out string) string {
	t.Helper()
	name := regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	files := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == out {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		if !name.MatchString(d.Name()) || strings.Count(rel, string(filepath.Separator)) > 2 {
			t.Errorf("$OUT/%s would not come back from a device", rel)
		}
		if d.IsDir() {
			return nil
		}
		files++
		if info, err := d.Info(); err != nil || info.Size() > 16<<20 {
			t.Errorf("$OUT/%s: over 16 MiB or unreadable (%v)", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files > 8 {
		t.Errorf("$OUT holds %d files: a device gives back 8", files)
	}
	logs := t.TempDir()
	if output, err := exec.Command("tar", "-xzf", filepath.Join(out, "kit-out.tar.gz"), "-C",
		logs).CombinedOutput(); err != nil {
		t.Fatalf("unpacking kit-out.tar.gz: %v\n%s", err, output)
	}
	return logs
}

// noBudget is a kit limit no phase reaches under make test.
const noBudget = 100000

// outOfTime names the first phase of a kit summary that ran out of its
// time limit ("agree ran out of its 600 s limit (exit 1 after 600 s)"),
// or "" when none did.
func outOfTime(summary string) string {
	phase := regexp.MustCompile(`(?m)^(\w+): exit (\d+) after (\d+) s \(limit (\d+) s\)`)
	for _, m := range phase.FindAllStringSubmatch(summary, -1) {
		after, _ := strconv.Atoi(m[3])
		limit, _ := strconv.Atoi(m[4])
		if m[2] != "0" && after >= limit {
			return fmt.Sprintf("%s phase ran out of its %d s limit (exit %s after %d s)", m[1], limit, m[2], after)
		}
	}
	return ""
}

// TestOutOfTimeNamesThePhase: a phase that exited at its limit is named in
// one line; one that finished within it, or failed early, is not.
func TestOutOfTimeNamesThePhase(t *testing.T) {
	summary := "smoke: exit 0 after 40 s (limit 120 s)\nagree: exit 1 after 600 s (limit 600 s)\n"
	if got := outOfTime(summary); got != "agree phase ran out of its 600 s limit (exit 1 after 600 s)" {
		t.Errorf("outOfTime: %q", got)
	}
	if got := outOfTime("smoke: exit 0 after 40 s (limit 120 s)\nbench: exit 1 after 3 s (limit 530 s)\n"); got != "" {
		t.Errorf("no phase ran out of time, but outOfTime says %q", got)
	}
}
