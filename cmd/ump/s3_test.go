package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/signing"
)

// TestS3PushPullAndRemoteArtifacts runs a manifest, pushes it to a real S3
// server, pulls it into an empty store and compares the exports; then runs
// with the artifacts in S3 directly, and another manifest that way which a
// colleague pulls without a push; then checks that a bad credential stops
// a run before it records anything.
func TestS3PushPullAndRemoteArtifacts(t *testing.T) {
	t.Parallel()
	_, env, _ := startS3(t)
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 20").Replace(longManifest),
	)

	mine := t.TempDir()
	run := ump(t, mine, "run", m)
	if run.code != 0 {
		t.Fatalf("run: %s", run.stderr)
	}
	hash := hashOf(t, run)
	push := umpEnv(t, env, mine, "--s3-insecure", "push", hash[:12])
	if push.code != 0 || !strings.Contains(push.stdout, "pushed manifest "+hash) {
		t.Fatalf("push: exit %d\n%s\n%s", push.code, push.stdout, push.stderr)
	}
	again := umpEnv(t, env, mine, "--s3-insecure", "push", hash)
	if !strings.Contains(again.stdout, "0 blobs uploaded") {
		t.Errorf("second push uploaded again: %s", again.stdout)
	}

	theirs := t.TempDir()
	if r := umpEnv(t, env, theirs, "--s3-insecure", "pull", hash[:12]); r.code != 2 ||
		!strings.Contains(r.stderr, "full 64-digit") {
		t.Errorf("pull with a prefix: exit %d %s", r.code, r.stderr)
	}
	pull := umpEnv(t, env, theirs, "--s3-insecure", "pull", hash)
	if pull.code != 0 || !strings.Contains(pull.stdout, "pulled manifest") {
		t.Fatalf("pull: exit %d\n%s\n%s", pull.code, pull.stdout, pull.stderr)
	}
	for _, table := range []string{"rounds", "final"} {
		a := ump(t, mine, "export", "--manifest", hash, "--table", table, "--out", "-")
		b := ump(t, theirs, "export", "--manifest", hash, "--table", table, "--out", "-")
		if a.stdout == "" || a.stdout != b.stdout {
			t.Errorf("%s export differs after push and pull", table)
		}
	}
	if r := ump(t, theirs, "run", m); !strings.Contains(r.stderr, "(2 fully cached)") {
		t.Errorf("running the pulled manifest was not all cache hits:\n%s", r.stderr)
	}
	if r := umpEnv(t, env, theirs, "--s3-insecure", "pull", hash); !strings.Contains(r.stdout, "0 blobs downloaded") ||
		!strings.Contains(r.stdout, "0 new events") {
		t.Errorf("second pull: %s", r.stdout)
	}

	remote := t.TempDir()
	r := umpEnv(t, env, remote, "--s3-insecure", "run", m)
	if r.code != 0 {
		t.Fatalf("run with S3 artifacts: %s", r.stderr)
	}
	blobs, _ := filepath.Glob(filepath.Join(remote, "blobs", "sha256", "*", "*"))
	if len(blobs) != 0 {
		t.Errorf("a run with --artifacts s3://... wrote %d local blobs", len(blobs))
	}
	if e := umpEnv(t, env, remote, "--s3-insecure", "export", "--manifest", hash, "--table", "final", "--out",
		"-"); e.code != 0 ||
		e.stdout != ump(t, mine, "export", "--manifest", hash, "--table", "final", "--out", "-").stdout {
		t.Errorf("export from S3 artifacts: exit %d %s", e.code, e.stderr)
	}

	// A run with --artifacts commits each cell as it completes: a
	// colleague pulls it by hash without a push.
	m2 := writeFile(t, "m2.yaml", strings.Replace(smallManifest, "lr: 0.02", "lr: 0.01", 1))
	runner := t.TempDir()
	ran := umpEnv(t, env, runner, "--s3-insecure", "run", m2)
	hash2 := hashOf(t, ran)
	colleague := t.TempDir()
	if p := umpEnv(t, env, colleague, "--s3-insecure", "pull", hash2); p.code != 0 ||
		!strings.Contains(p.stdout, "pulled manifest") {
		t.Fatalf("pull of a run with --artifacts, without a push: exit %d\n%s", p.code, p.stderr)
	}
	if a, b := umpEnv(t, env, runner, "--s3-insecure", "table", hash2).stdout, ump(t, colleague, "table",
		hash2).stdout; a == "" ||
		a != b {
		t.Errorf("the pulled table differs from the run's:\n%s\nrun:\n%s", b, a)
	}

	bad := t.TempDir()
	r = umpEnv(t, append(env, "AWS_SECRET_ACCESS_KEY=wrong"), bad, "--s3-insecure", "run", m)
	if r.code == 0 || !strings.Contains(r.stderr, "rejected the credentials") {
		t.Errorf("bad credentials: exit %d %s", r.code, r.stderr)
	}
	if st := ump(t, bad, "status"); strings.Contains(st.stdout, hash[:12]) {
		t.Errorf("a run refused by S3 registered the manifest:\n%s", st.stdout)
	}
	os.RemoveAll(bad)
}

// TestFrozenS3Server: a run with its artifacts in S3 whose server stops
// answering (SIGSTOP) mid-run ends within the request time limit with
// exit 3 and what to do; once the server answers again the same command
// finishes the sweep.
func TestFrozenS3Server(t *testing.T) {
	t.Parallel()
	srv, env, _ := startS3(t)
	env = append(env, "UMP_S3_TIMEOUT=2s")
	store := t.TempDir()
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 3000", "rounds: 120", "rounds: 400", "checkpoint: {every: 10}",
			"checkpoint: {every: 1}").
			Replace(longManifest),
	)
	cmd := exec.Command(umpBin, "--store", store, "--s3-insecure", "run", m)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s := snapshot(store); s != nil && s.PID == cmd.Process.Pid && s.Round >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run did not reach round 3:\n%s", stderr.String())
		}
	}
	srv.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	err := cmd.Wait()
	srv.Process.Signal(syscall.SIGCONT)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 ||
		!strings.Contains(stderr.String(), "did not answer within 2s") ||
		time.Since(stopped) > 30*time.Second {
		t.Fatalf("run with a frozen S3 server: %v after %s\n%s", err, time.Since(stopped), stderr.String())
	}
	if r := umpEnv(t, env, store, "--s3-insecure", "run", m); r.code != 0 ||
		!strings.Contains(r.stderr, "2 completed") {
		t.Errorf("rerun once the server answers: exit %d\n%s", r.code, r.stderr)
	}
}

// TestABadAttemptNeverBlocksACell: attempt uploads on S3 that do not
// check (garbage, another manifest's events) are skipped, named and kept;
// the cells run and commit.
func TestABadAttemptNeverBlocksACell(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	m := writeFile(t, "m.yaml", smallManifest)
	first := umpEnv(t, env, t.TempDir(), "--s3-insecure", "run", m, "--until", "topology")
	if first.code != 0 {
		t.Fatalf("run --until topology: exit %d\n%s", first.code, first.stderr)
	}
	hash := hashOf(t, first)
	stranger, _, err := signing.LoadOrCreate(filepath.Join(t.TempDir(), "stranger"))
	if err != nil {
		t.Fatal(err)
	}
	foreign := []byte(`{"seq":1,"kind":"CellStarted","manifest":"` + strings.Repeat("0", 64) + `","cell":"x"}` + "\n")
	garbage := "manifests/" + hash + "/cells/00001/attempts/garbage/000001.jsonl"
	signed := "manifests/" + hash + "/cells/00002/attempts/foreign/000001.jsonl"
	untrusted := "manifests/" + hash + "/cells/00002/attempts/stranger/000009.jsonl"
	bad := map[string][]byte{
		garbage:   fleet.SignUpload(garbage, []byte("not an event\n"), testKey(t)),
		signed:    fleet.SignUpload(signed, foreign, testKey(t)), // another manifest's events, signed by a trusted key
		untrusted: fleet.SignUpload(untrusted, foreign, stranger),
		"manifests/" + hash + "/cells/00001/attempts/unsigned/000001.jsonl": foreign,
	}
	for name, data := range bad {
		if err := s3.PutNamed(context.Background(), name, data); err != nil {
			t.Fatal(err)
		}
	}
	st := umpEnv(t, env, t.TempDir(), "--s3-insecure", "status", "--remote", hash)
	for _, want := range []string{"cell 1/2: an attempt's upload does not check " +
		"(skipped): pushed events rejected: " + garbage + " line 1",
		"cell 1/2: an attempt's upload does not check (skipped): pushed events rejected: not " +
			"signed by a trusted key: manifests/" + hash + "/cells/00001/attempts/unsigned/000001.jsonl is not signed",
		"cell 2/2: an attempt's upload does not check (skipped): pushed events " +
			"rejected: not signed by a trusted key: " + untrusted + " is signed by " + stranger.Public()} {
		if st.code != 0 || !strings.Contains(st.stdout, want) {
			t.Errorf(
				"status --remote beside bad attempts: exit %d; want it to say %q\n%s%s",
				st.code,
				want,
				st.stdout,
				st.stderr,
			)
		}
	}
	r := umpEnv(t, env, t.TempDir(), "--s3-insecure", "run", m)
	if r.code != 0 || !strings.Contains(r.stderr, "2 completed") ||
		strings.Count(r.stderr, "skipping an attempt's upload that does not check") != 4 ||
		!strings.Contains(r.stderr, signed+": event 1 is not of cell 2") {
		t.Fatalf(
			"run beside four bad attempts: exit %d; want all skipped and named, every cell completed\n%s",
			r.code,
			r.stderr,
		)
	}
	for name := range bad {
		if _, err := s3.GetNamed(context.Background(), name); err != nil {
			t.Errorf("the bad attempt %s was not kept: %v", name, err)
		}
	}
}

// TestRunResumesFromUnsignedCommitsOnlyWhenTold: a commit an ump from
// before signing left on S3 stops `run --artifacts` (exit 3, naming the
// flag) until --trust-unsigned, which then finds the cell cached and
// records it as unsigned.
func TestRunResumesFromUnsignedCommitsOnlyWhenTold(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, umpEnv(t, env, t.TempDir(), "--s3-insecure", "run", m))
	name := "manifests/" + hash + "/cells/00001/commit.json"
	raw, err := s3.GetNamed(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var c fleet.Commit
	json.Unmarshal(raw, &c)
	c.Signer, c.Signature = "", ""
	unsigned, _ := json.Marshal(c)
	if err := s3.PutNamed(context.Background(), name, unsigned); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	if r := umpEnv(t, env, store, "--s3-insecure", "run", m); r.code != 3 ||
		!strings.Contains(r.stderr, "is not signed") ||
		!strings.Contains(r.stderr, "--trust-unsigned") {
		t.Errorf(
			"run --artifacts beside an unsigned commit: exit %d; want 3 naming --trust-unsigned\n%s",
			r.code,
			r.stderr,
		)
	}
	if r := umpEnv(t, env, store, "--s3-insecure", "run", "--trust-unsigned", m); r.code != 0 ||
		!strings.Contains(r.stderr, "(2 fully cached)") {
		t.Errorf("run --artifacts --trust-unsigned: exit %d; want both cells from S3, cached\n%s", r.code, r.stderr)
	}
	if show := ump(t, store, "show", hash).stdout; !strings.Contains(show, "unsigned (taken with --trust-unsigned") {
		t.Errorf("show does not say cell 1 came unsigned:\n%s", show)
	}
}
