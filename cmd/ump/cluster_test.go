package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/slurmtest"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// clusterManifest has four cells of about three seconds each, with a
// checkpoint every 20 rounds: long enough to be requeued mid-training.
var clusterManifest = strings.NewReplacer("rounds: 120", "rounds: 400", "seed: [1, 2]", "seed: [1, 2, 3, 4]",
	"checkpoint: {every: 10}", "checkpoint: {every: 20}").Replace(longManifest)

var runLine = regexp.MustCompile(`(?m)^run ([0-9a-f]{64})$`)

// submitted returns the run a `ump submit` printed.
func submitted(t *testing.T, r result) string {
	t.Helper()
	m := runLine.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("submit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return m[1]
}

// reachedRound waits until S3 holds an upload of a cell (from 0) past
// round 0, i.e. with a checkpoint, signed by a key remote trusts, and
// returns its round.
func reachedRound(t *testing.T, remote *fleet.Remote, hash string, cell int, still func() bool) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, cells, err := remote.RemoteStatus(context.Background(), hash); err == nil && cells[cell].Round > 0 {
			if cells[cell].Commit != nil {
				t.Fatalf("cell %d was committed before the test could interrupt it", cell+1)
			}
			return cells[cell].Round
		}
		if !still() {
			t.Fatalf("cell %d stopped before uploading a checkpoint", cell+1)
		}
	}
	t.Fatalf("cell %d uploaded no checkpoint in 60 s", cell+1)
	return 0
}

// commits lists the commit markers of a manifest on S3.
func commits(t *testing.T, s3 *artifacts.S3, hash string) []string {
	t.Helper()
	names, err := s3.List(context.Background(), "manifests/"+hash+"/cells/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, "/commit.json") {
			out = append(out, n)
		}
	}
	return out
}

// TestSlurmArrayRun runs a manifest as a Slurm job array on a real
// one-node cluster with a real S3 server: task 3 is cancelled before it
// starts, task 0 is requeued mid-training and resumes from its checkpoint
// on S3, `--only-missing` then runs the cancelled cell, a task run again
// by hand finds its cell committed, and `ump pull` into a fresh store gives
// a table byte-equal to a local run's, which `ump verify` confirms.
func TestSlurmArrayRun(t *testing.T) {
	t.Parallel()
	cluster := slurmtest.Start(t)
	_, env, s3 := startS3(t)
	// The fleet signs with the submitting user's key, which the laptop
	// that pulls (the tests' own key) does not trust at first.
	fleetKey := filepath.Join(t.TempDir(), "fleet-key")
	fleet, _, err := signing.LoadOrCreate(fleetKey)
	if err != nil {
		t.Fatal(err)
	}
	laptopEnv := env
	env = append(slices.Clone(env), append(cluster.Env, "UMP_KEY="+fleetKey)...)
	m := writeFile(t, "cluster.yaml", clusterManifest)
	jobs := t.TempDir()

	submit := umpEnv(
		t,
		env,
		t.TempDir(),
		"--s3-insecure",
		"submit",
		"--slurm",
		"--now",
		"--out",
		filepath.Join(jobs, "first.sbatch"),
		"--sbatch-option=--hold",
		"--sbatch-option=--chdir="+jobs,
		m,
	)
	run := submitted(t, submit)
	job := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(submit.stdout)
	if job == nil {
		t.Fatalf("submit --now did not show sbatch's job id:\n%s", submit.stdout)
	}
	script, _ := os.ReadFile(filepath.Join(jobs, "first.sbatch"))
	for _, want := range []string{"#SBATCH --array=0-3", "#SBATCH --requeue", "#SBATCH --signal=B:TERM@", "--key " +
		fleetKey + " worker --run " + run, "scontrol requeue"} {
		if !bytes.Contains(script, []byte(want)) {
			t.Errorf("the sbatch script lacks %q:\n%s", want, script)
		}
	}
	slurm := func(args ...string) {
		t.Helper()
		if out, err := cluster.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s\n%s", strings.Join(args, " "), err, out, cluster.Log())
		}
	}
	slurm("scancel", job[1]+"_3")
	slurm("scontrol", "release", job[1])

	// The manifest's hash, from the worklist of the run.
	wl, err := testRemote(t, s3).Worklist(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	hash := wl.Plan.Hash
	reached := reachedRound(t, trustingRemote(t, s3, fleet), hash, 0, func() bool { return true })
	slurm("scontrol", "requeue", job[1]+"_0")
	// Requeued tasks wait before they start again; let it start now.
	queued := func() string {
		out, _ := cluster.Command("squeue", "-h", "-r", "-j", job[1], "-o", "%i %T").Output()
		return strings.TrimSpace(string(out))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for ; queued() != "" && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		cluster.Command("scontrol", "update", "jobid="+job[1]+"_0", "StartTime=now").Run()
	}
	if q := queued(); q != "" {
		t.Fatalf("the array did not finish in 2 minutes:\n%s\n%s", q, cluster.Log())
	}
	log0, _ := os.ReadFile(filepath.Join(jobs, "ump-"+run[:12]+"-0.out"))
	t.Logf("task 0's output (both runs):\n%s", log0)
	resumed := regexp.MustCompile(`resuming from S3: attempt \S+ \(checkpoint of round (\d+)\)`).FindSubmatch(log0)
	if resumed == nil || string(resumed[1]) == "0" ||
		!bytes.Contains(log0, []byte("train: resuming from the checkpoint after round")) {
		t.Fatalf(
			"task 0 did not resume from a checkpoint on S3 after its requeue (round %d was uploaded before):\n%s",
			reached,
			log0,
		)
	}
	status := umpEnv(t, env, t.TempDir(), "--s3-insecure", "status", "--remote", hash)
	if !strings.Contains(status.stdout, "3 completed, 0 diverged committed, 0 running or interrupted, 1 missing") {
		t.Fatalf("status --remote after the array:\n%s%s", status.stdout, status.stderr)
	}

	again := submitted(t, umpEnv(t, env, t.TempDir(), "--s3-insecure", "submit", "--slurm", "--now", "--only-missing",
		"--out", filepath.Join(jobs, "missing.sbatch"), "--sbatch-option=--chdir="+jobs, m))
	if again == run {
		t.Fatal("--only-missing stored the same worklist")
	}
	if script, _ := os.ReadFile(filepath.Join(jobs, "missing.sbatch")); !bytes.Contains(
		script,
		[]byte("#SBATCH --array=0-0"),
	) {
		t.Errorf("--only-missing did not make a one-task array:\n%s", script)
	}
	for deadline := time.Now().Add(time.Minute); len(commits(t, s3, hash)) < 4; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the missing cell was not committed in a minute:\n%s", cluster.Log())
		}
	}
	if got := commits(t, s3, hash); len(got) != 4 {
		t.Fatalf("commits: %v", got)
	}

	// The same task again: its cell is committed, with the same outputs.
	before, _ := s3.GetNamed(context.Background(), "manifests/"+hash+"/cells/00002/commit.json")
	twice := umpEnv(t, env, t.TempDir(), "--s3-insecure", "worker", "--run", run, "--index", "1")
	if twice.code != 0 || !strings.Contains(twice.stderr, "already committed by") {
		t.Errorf("task 1 run again: exit %d\n%s", twice.code, twice.stderr)
	}
	if after, _ := s3.GetNamed(context.Background(), "manifests/"+hash+"/cells/00002/commit.json"); !bytes.Equal(
		before,
		after,
	) {
		t.Error("running a committed task again changed its commit")
	}

	local := t.TempDir()
	if r := ump(t, local, "run", m); r.code != 0 || hashOf(t, r) != hash {
		t.Fatalf("local run: exit %d %s", r.code, r.stderr)
	}
	theirs := t.TempDir()
	if r := umpEnv(t, laptopEnv, theirs, "--s3-insecure", "pull", hash); r.code != 3 ||
		!strings.Contains(r.stderr, " trust add "+fleet.Public()+"`") {
		t.Errorf(
			"pull of the fleet's commits before trusting its key: exit %d; want 3 naming the key\n%s",
			r.code,
			r.stderr,
		)
	}
	if r := ump(t, theirs, "trust", "add", fleet.Public()); r.code != 0 {
		t.Fatalf("trust add: exit %d %s", r.code, r.stderr)
	}
	if r := umpEnv(t, laptopEnv, theirs, "--s3-insecure", "pull", hash); r.code != 0 {
		t.Fatalf("pull: exit %d %s", r.code, r.stderr)
	}
	if show := ump(t, theirs, "show", hash).stdout; strings.Count(show, "signed by "+fleet.Public()) != 4 {
		t.Errorf("show of the pulled manifest does not name the fleet's key as every cell's signer:\n%s", show)
	}
	if a, b := ump(t, local, "table", hash).stdout, ump(t, theirs, "table", hash).stdout; a == "" || a != b {
		t.Errorf("the pulled table differs from the local run's:\n%s\nlocal:\n%s", b, a)
	}
	if r := ump(t, theirs, "verify", hash); r.code != 0 {
		t.Errorf("verify of the pulled manifest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestKubernetesJobAndWorkerContract decodes the generated Indexed Job
// strictly into Kubernetes' own types, then plays what Kubernetes does to
// its pods as processes: two pods for one index at once, a pod killed
// (SIGKILL) mid-training and started again, a pod whose cell another
// attempt committed with other outputs, and one on a machine whose cell
// keys differ from those pinned on S3.
func TestKubernetesJobAndWorkerContract(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	m := writeFile(t, "k8s.yaml", strings.Replace(clusterManifest, "seed: [1, 2, 3, 4]", "seed: [1, 2, 3]", 1))
	out := filepath.Join(t.TempDir(), "job.yaml")
	run := submitted(
		t,
		umpEnv(
			t,
			env,
			t.TempDir(),
			"--s3-insecure",
			"submit",
			"--k8s",
			"--image",
			"registry.example/ump:1",
			"--out",
			out,
			m,
		),
	)
	raw, _ := os.ReadFile(out)
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(raw, &job); err != nil {
		t.Fatalf("the Job does not decode strictly into batch/v1 Job: %v\n%s", err, raw)
	}
	spec := job.Spec
	pod := spec.Template.Spec
	switch {
	case job.APIVersion != "batch/v1" || job.Kind != "Job":
		t.Errorf("apiVersion/kind %s/%s", job.APIVersion, job.Kind)
	case spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil ||
		*spec.Completions != 3:
		t.Errorf("want an Indexed Job of 3 completions:\n%s", raw)
	case spec.BackoffLimitPerIndex == nil || spec.PodReplacementPolicy == nil ||
		*spec.PodReplacementPolicy != batchv1.Failed:
		t.Errorf("want backoffLimitPerIndex and podReplacementPolicy: Failed:\n%s", raw)
	case pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 ||
		pod.Containers[0].Image != "registry.example/ump:1":
		t.Errorf("pod template:\n%s", raw)
	case !strings.Contains(strings.Join(pod.Containers[0].Args, " "), "worker --run "+run):
		t.Errorf("the container does not run the worker of run %s: %v", run, pod.Containers[0].Args)
	case !strings.Contains(strings.Join(pod.Containers[0].Args, " "), "--key /etc/ump/signing-key"):
		t.Errorf("the worker does not sign with the mounted key: %v", pod.Containers[0].Args)
	case len(pod.Volumes) != 1 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != "ump-key" ||
		pod.Volumes[0].Secret.DefaultMode == nil || *pod.Volumes[0].Secret.DefaultMode != 0o400 ||
		len(pod.Containers[0].VolumeMounts) != 1 || pod.Containers[0].VolumeMounts[0].MountPath != "/etc/ump":
		t.Errorf("want the Secret ump-key mounted owner-only at /etc/ump:\n%s", raw)
	}
	var ignoresDisruption, ignoresRequeue, failsBadInput bool
	for _, rule := range spec.PodFailurePolicy.Rules {
		for _, c := range rule.OnPodConditions {
			ignoresDisruption = ignoresDisruption ||
				rule.Action == batchv1.PodFailurePolicyActionIgnore && c.Type == corev1.DisruptionTarget
		}
		if e := rule.OnExitCodes; e != nil && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
			for _, code := range e.Values {
				ignoresRequeue = ignoresRequeue ||
					rule.Action == batchv1.PodFailurePolicyActionIgnore && code == exitRequeue
				failsBadInput = failsBadInput ||
					rule.Action == batchv1.PodFailurePolicyActionFailIndex && code == exitBadInput
			}
		}
	}
	if !ignoresDisruption || !ignoresRequeue || !failsBadInput {
		t.Errorf("podFailurePolicy: ignores disruptions %v, ignores exit %d %v, fails the index on exit %d %v",
			ignoresDisruption, exitRequeue, ignoresRequeue, exitBadInput, failsBadInput)
	}

	pod0 := append(env, "JOB_COMPLETION_INDEX=0")
	// Two pods for index 0 at once: one commits, the other finds the same
	// outputs committed.
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Go(func() { results[i] = umpEnv(t, pod0, t.TempDir(), "--s3-insecure", "worker", "--run", run) })
	}
	wg.Wait()
	wl, _ := testRemote(t, s3).Worklist(context.Background(), run)
	hash := wl.Plan.Hash
	if results[0].code != 0 || results[1].code != 0 || len(commits(t, s3, hash)) != 1 {
		t.Fatalf(
			"two pods for index 0: exits %d and %d, commits %v\n%s\n%s",
			results[0].code,
			results[1].code,
			commits(t, s3, hash),
			results[0].stderr,
			results[1].stderr,
		)
	}

	// A pod killed mid-training; the next one resumes from its checkpoint.
	killed := startWorker(t, append(env, "JOB_COMPLETION_INDEX=1"), run)
	reached := reachedRound(t, testRemote(t, s3), hash, 1, killed.alive)
	killed.cmd.Process.Signal(syscall.SIGKILL)
	killed.wait()
	next := umpEnv(t, append(env, "JOB_COMPLETION_INDEX=1"), t.TempDir(), "--s3-insecure", "worker", "--run", run)
	resumed := regexp.MustCompile(`resuming from the checkpoint after round (\d+)`).FindStringSubmatch(next.stderr)
	if next.code != 0 || resumed == nil {
		t.Fatalf("the pod after a SIGKILL at round %d: exit %d, did not resume:\n%s", reached, next.code, next.stderr)
	}
	if r, _ := strconv.Atoi(resumed[1]); r < 20 {
		t.Errorf("resumed from round %d; a checkpoint of round >= 20 was on S3", r)
	}

	// While a pod trains cell 3, another attempt commits it with other
	// outputs: the pod reports nondeterminism.
	slow := startWorker(t, append(env, "JOB_COMPLETION_INDEX=2"), run)
	reachedRound(t, testRemote(t, s3), hash, 2, slow.alive)
	other := fleet.Commit{
		Attempt: "elsewhere",
		Status:  eventlog.Completed,
		Outputs: map[string]string{"evaluate/final": "sha256:0"},
	}
	var err error
	if other.Key, err = cellKeyOnS3(s3, hash, 2); err != nil {
		t.Fatal(err)
	}
	if other.Events, err = s3.Put(context.Background(), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	other.Sign(hash, 2, testKey(t))
	data, _ := json.Marshal(other)
	if err := s3.PutNew(context.Background(), "manifests/"+hash+"/cells/00003/commit.json", data); err != nil {
		t.Fatal(err)
	}
	if code, stderr := slow.wait(); code != exitNondeterministic ||
		!strings.Contains(stderr, "attempt elsewhere committed") {
		t.Errorf(
			"a pod whose cell another attempt committed with other outputs meanwhile: exit %d, want %d\n%s",
			code,
			exitNondeterministic,
			stderr,
		)
	}

	// A machine whose inputs give other cell keys than those pinned.
	pinName := "manifests/" + hash + "/registration.json"
	pinned, _ := s3.GetNamed(context.Background(), pinName)
	var p struct {
		Registration eventlog.Event `json:"registration"`
		Inputs       []string       `json:"inputs"`
	}
	json.Unmarshal(pinned, &p)
	var reg state.Registration
	json.Unmarshal(p.Registration.Payload, &reg)
	reg.CellKeys[0] = strings.Repeat("0", 64)
	p.Inputs[0] = "sha256:… go-cpu-float32/v1 another-engine"
	p.Registration.Payload, _ = json.Marshal(reg)
	forged, _ := json.Marshal(p)
	s3.PutNamed(context.Background(), pinName, forged) // as if another machine had pinned it first
	if r := umpEnv(t, pod0, t.TempDir(), "--s3-insecure", "worker", "--run", run); r.code != exitBadInput ||
		!strings.Contains(r.stderr, "another-engine") || !strings.Contains(r.stderr, "same engine") {
		t.Errorf(
			"a pod whose cell keys differ from the pinned ones: exit %d, want %d\n%s",
			r.code,
			exitBadInput,
			r.stderr,
		)
	}
}

// cellKeyOnS3 reads a cell's key from the registration pinned on S3.
func cellKeyOnS3(s3 *artifacts.S3, hash string, cell int) (string, error) {
	raw, err := s3.GetNamed(context.Background(), "manifests/"+hash+"/registration.json")
	if err != nil {
		return "", err
	}
	var p struct {
		Registration eventlog.Event `json:"registration"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", err
	}
	var reg state.Registration
	if err := json.Unmarshal(p.Registration.Payload, &reg); err != nil {
		return "", err
	}
	return reg.CellKeys[cell], nil
}

// worker is a `ump worker` process the test started.
type worker struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	exited chan struct{}
}

func startWorker(t *testing.T, env []string, run string) *worker {
	t.Helper()
	w := &worker{
		cmd:    exec.Command(umpBin, "--store", t.TempDir(), "--s3-insecure", "worker", "--run", run),
		exited: make(chan struct{}),
	}
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stderr = &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.cmd.Wait(); close(w.exited) }()
	return w
}

func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// wait returns the worker's exit code and stderr.
func (w *worker) wait() (int, string) {
	<-w.exited
	return w.cmd.ProcessState.ExitCode(), w.stderr.String()
}

// TestSubmitChecksAndGroupsCells: flags that do not fit together exit 2
// before anything is stored; a sweep over Slurm's 1,000-task array gets
// more cells per task by itself, and a --cells-per-task that overflows
// the array is refused naming the value that fits.
func TestSubmitChecksAndGroupsCells(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	seeds := make([]string, 1001)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	m := writeFile(
		t,
		"many.yaml",
		strings.NewReplacer("dim: 30000", "dim: 10", "seed: [1, 2]", "seed: ["+strings.Join(seeds, ", ")+"]").
			Replace(longManifest),
	)
	dir := t.TempDir()
	// --out never writes through a link, nor into a directory or a FIFO.
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link.sbatch")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.sbatch")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slurm", "--out", link}, "is a symbolic link, which ump does not replace"},
		{[]string{"--slurm", "--out", dir}, "is a directory, which ump does not replace"},
		{[]string{"--slurm", "--out", fifo}, "which ump does not replace"},
		{[]string{"--slurm", "--k8s"}, "exactly one of --slurm and --k8s"},
		{[]string{"--k8s"}, "--k8s needs --image"},
		{[]string{"--k8s", "--image", "x", "--now"}, "--now submits with sbatch"},
		{[]string{"--slurm", "--sbatch-option", "partition=gpu"}, "give one sbatch option"},
		{[]string{"--slurm", "--cells-per-task", "1"}, "raise --cells-per-task to 2"},
	} {
		r := umpEnv(t, env, dir, append(append([]string{"--s3-insecure", "submit"}, tc.args...), m)...)
		if r.code != exitBadInput || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("submit %v: exit %d %q; want %d naming %q", tc.args, r.code, r.stderr, exitBadInput, tc.want)
		}
	}
	if names, _ := s3.List(context.Background(), "runs/"); len(names) != 0 {
		t.Errorf("refused submits stored worklists: %v", names)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("submit --out wrote through a link")
	}
	out := filepath.Join(dir, "job.sbatch")
	run := submitted(t, umpEnv(t, env, dir, "--s3-insecure", "submit", "--slurm", "--out", out, m))
	script, _ := os.ReadFile(out)
	wl, err := testRemote(t, s3).Worklist(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(script, []byte("#SBATCH --array=0-500\n")) || len(wl.Tasks) != 501 || len(wl.Tasks[0]) != 2 ||
		len(wl.Tasks[500]) != 1 {
		t.Errorf(
			"1,001 cells: want 501 tasks of up to 2 cells; the worklist has %d tasks, the script:\n%s",
			len(wl.Tasks),
			script,
		)
	}
}
