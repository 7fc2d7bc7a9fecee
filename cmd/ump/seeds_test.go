package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// seedsManifest's choice of lr is within the noise on its three seeds
// (0.8 chosen again in 84.6% of resamples) and decided once two more
// seeds of each lr have run (95.5%).
const seedsManifest = `version: 1
name: seeds
task: {dataset: synthetic, model: logreg, synthetic: {dims: 4, classes: 3, train: 300, test: 200, separation: 0.6}}
workers: 2
rounds: 6
batch_size: 8
lr: 0.1
algorithm: {name: d-sum}
sweep: {lr: [0.8, 1.2], seed: [1, 2, 3]}
table: {rows: [algorithm], value: test_acc_mean, select: lr}
`

// TestUntilDecidedAddsSeedsWhereTheChoiceIsWithinTheNoise: --until-decided
// adds a seed to each lr of an entry whose choice is within the noise,
// round after round, until it is decided; the last manifest holds the
// added cells in its add block, a rerun is all cache hits and adds the
// same, and with a lower cap it stops there and says so.
func TestUntilDecidedAddsSeedsWhereTheChoiceIsWithinTheNoise(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "seeds.yaml", seedsManifest)
	if r := ump(t, store, "run", m); r.code != 0 ||
		!strings.Contains(r.stdout, "chosen again in 84.6% of resamples (within noise)") {
		t.Fatalf("the manifest alone: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := ump(t, store, "run", "--until-decided", "8", m)
	if r.code != 0 ||
		strings.Count(r.stderr, "adding 2 cells, seeds where a choice or a claim is within the noise") != 2 ||
		!strings.Contains(r.stderr, "every choice and claim is decided") ||
		!strings.Contains(r.stdout, "lr=0.8 over 1.2 by 0.0100, chosen again in 95.5% of resamples\n") {
		t.Fatalf("--until-decided 8: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lastLine := func(out string) string { // the line naming the last manifest
		_, after, _ := strings.Cut(out, "the table's manifest, ")
		line, _, _ := strings.Cut(after, "\n")
		return line
	}
	rerun := ump(t, store, "run", "--until-decided", "8", m)
	if rerun.code != 0 ||
		!strings.Contains(rerun.stderr, "10 cells: 10 completed, 0 diverged, 0 failed (10 fully cached)") ||
		lastLine(rerun.stderr) != lastLine(r.stderr) ||
		!strings.Contains(
			lastLine(r.stderr),
			`'add=[{"lr":0.8,"seed":4},{"lr":1.2,"seed":4},{"lr":0.8,"seed":5},{"lr":1.2,"seed":5}]'`,
		) {
		t.Errorf("the rerun: exit %d, %q after %q", rerun.code, lastLine(rerun.stderr), lastLine(r.stderr))
	}
	command := lastLine(r.stderr)[strings.Index(lastLine(r.stderr), "`")+1 : strings.LastIndex(lastLine(r.stderr), "`")]
	if again := printed(t, t.TempDir(), command); again.code != 0 ||
		!strings.Contains(again.stderr, "(10 fully cached)") {
		t.Errorf("the hint %s, pasted: exit %d\n%s", command, again.code, again.stderr)
	}
	show := ump(t, store, "show", "--manifest", strings.TrimSuffix(strings.Fields(lastLine(r.stderr))[0], ","))
	for _, want := range []string{`"lr": 0.8`, `"seed": 5`, `"lr": 1.2`} {
		if !strings.Contains(show.stdout, want) || !strings.Contains(show.stdout, `"add"`) {
			t.Errorf("the last manifest lacks %s in its add block:\n%s", want, show.stdout)
		}
	}
	if st := ump(t, store, "status"); !strings.Contains(st.stdout, "run with add=[4 cells]\n") {
		t.Errorf("status does not say how many cells the last manifest adds:\n%s", st.stdout)
	}
	capped := ump(t, t.TempDir(), "run", "--until-decided", "4", m)
	if capped.code != 0 || strings.Count(capped.stderr, "adding 2 cells") != 1 ||
		!strings.Contains(capped.stderr, "1 entries stay within the noise at 4 seeds (--until-decided 4)") {
		t.Errorf("--until-decided 4: exit %d\n%s", capped.code, capped.stderr)
	}
	if r := ump(t, store, "run", "--until-decided", "4", "--until", "train", m); r.code != 2 {
		t.Errorf("--until-decided with --until: exit %d, %s", r.code, r.stderr)
	}
	if r := ump(t, store, "run", "--until-decided", "0", m); r.code != 2 ||
		!strings.Contains(r.stderr, "--until-decided 0: give a number of seeds >= 1") {
		t.Errorf("--until-decided 0 (silently a plain run before): exit %d, %s", r.code, r.stderr)
	}
}

// TestUntilDecidedResumesAsTyped: a run of --until-decided interrupted
// while it runs added seeds names the command as typed to resume it (the
// same results add the same seeds), not its last manifest's add block,
// and that command finishes the run. (seedsManifest on 300,000 samples:
// the lr is chosen within the noise, 61.2%, and each cell takes long
// enough to be interrupted.)
func TestUntilDecidedResumesAsTyped(t *testing.T) {
	t.Parallel()
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "noisy.yaml", strings.Replace(seedsManifest, "train: 300,", "train: 300000,", 1))
	cmd := exec.Command(umpBin, "--store", store, "run", "-j", "2", "--until-decided", "4", m)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "adding 2 cells"); time.Sleep(
		5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run --until-decided 4 never added a cell:\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	rerun := hint(t, stderr.String(), resumeHint)
	if !strings.HasSuffix(rerun, " run -j 2 --until-decided 4 "+m) {
		t.Errorf("the resume hint is not the command as typed: %s", rerun)
	}
	if r := printed(t, dir, rerun); r.code != 0 ||
		!strings.Contains(r.stderr, "1 entries stay within the noise at 4 seeds") ||
		!strings.Contains(r.stderr, "8 cells: 8 completed, 0 diverged, 0 failed") {
		t.Errorf("%s: exit %d, did not finish the run\n%s", rerun, r.code, r.stderr)
	}
}
