package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/pipeline"
)

// TestEveryCommandExitsByClass runs each command against each class of
// failure that can reach it: bad input 2; a damaged store, a busy one, a
// blob its events name missing or an S3 server that does not answer 3;
// outputs that differ from another machine's 4.
func TestEveryCommandExitsByClass(t *testing.T) {
	t.Parallel()
	_, env, s3 := startS3(t)
	good := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, good, "run", m))
	if r := umpEnv(t, env, good, "--s3-insecure", "push", hash); r.code != 0 {
		t.Fatalf("push: %s", r.stderr)
	}
	copyOf := func() string {
		dir := filepath.Join(t.TempDir(), "store")
		if out, err := exec.Command("cp", "-a", good, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		return dir
	}
	plots := t.TempDir()
	readers := func(h string) [][]string {
		return [][]string{{"status", h}, {"show", h}, {"table", h}, {"plot", h, "--out", plots},
			{"export", "--manifest", h, "--out", "-"}, {"verify", h}}
	}
	type check struct {
		store string
		env   []string
		args  []string
		code  int
	}
	var checks []check
	add := func(store string, env []string, code int, cmds ...[]string) {
		for _, args := range cmds {
			checks = append(checks, check{store, env, args, code})
		}
	}

	// Bad input: an unknown hash, a flag or argument a command does not take.
	add(good, nil, 2, append(
		readers("0000000"),
		[]string{"gc", "now"},
		[]string{"run", m, "--jobs", "0"},
		[]string{
			"table",
			hash,
			"--value",
			"no_such_column",
		},
		[]string{"plot", hash, "--y", "no_such_column", "--out", plots},
		[]string{"export", "--manifest", hash, "--table", "nope", "--out", "-"},
	)...)
	add(good, env, 2, []string{"push", "0000000"}, []string{"pull", "0000000"})
	// A store path that names a file.
	file := writeFile(t, "a-file", "")
	add(file, nil, 2, append(readers(hash), []string{"run", m}, []string{"gc"})...)

	// A damaged store: its marker overwritten.
	damaged := copyOf()
	os.WriteFile(filepath.Join(damaged, "ump-store.json"), []byte("\x00garbage"), 0o644)
	add(damaged, nil, 3, append(readers(hash), []string{"gc"}, []string{"run", m})...)
	add(damaged, env, 3, []string{"push", hash}, []string{"pull", hash})

	// A blob the events name missing: the final table of cell 1.
	missing := copyOf()
	s, err := pipeline.OpenReader(missing)
	if err != nil {
		t.Fatal(err)
	}
	done, _ := s.Events.ByKind(eventlog.StageCompleted)
	s.Close()
	removed := false
	for _, ev := range done {
		if ref, ok := ev.Outputs["final"]; ok && !removed {
			h := strings.TrimPrefix(ref.Digest, "sha256:")
			removed = os.Remove(filepath.Join(missing, "blobs", "sha256", h[:2], h)) == nil
		}
	}
	if !removed {
		t.Fatal("found no final table's blob to remove")
	}
	add(missing, nil, 3, []string{"table", hash}, []string{"plot", hash, "--out", plots},
		[]string{"export", "--manifest", hash, "--table", "final", "--out", "-"})

	// A busy store: this process holds it.
	busy := copyOf()
	held, err := pipeline.Open(busy, "the test")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	add(busy, nil, 3, []string{"run", m}, []string{"gc"})

	// An S3 server that does not answer.
	down := []string{
		"UMP_S3_ENDPOINT=127.0.0.1:1",
		"AWS_ACCESS_KEY_ID=a",
		"AWS_SECRET_ACCESS_KEY=b",
		"UMP_ARTIFACTS=s3://team/ump",
		"UMP_S3_TIMEOUT=1s",
	}
	add(good, down, 3, []string{"push", hash}, []string{"pull", hash},
		[]string{"status", "--remote", hash}, []string{"table", hash})

	for _, c := range checks {
		args := c.args
		if c.env != nil {
			args = append([]string{"--s3-insecure"}, args...)
		}
		if r := umpEnv(t, c.env, c.store, args...); r.code != c.code || strings.Contains(r.stderr, "internal error") {
			t.Errorf(
				"%s on the %s store: exit %d; want %d\n%s",
				strings.Join(c.args, " "),
				filepath.Base(filepath.Dir(c.store)),
				r.code,
				c.code,
				r.stderr,
			)
		}
	}

	// Nondeterminism: the remote commit of cell 1 records other outputs.
	name := "manifests/" + hash + "/cells/00001/commit.json"
	data, err := s3.GetNamed(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var commit fleet.Commit
	if err := json.Unmarshal(data, &commit); err != nil {
		t.Fatal(err)
	}
	for k := range commit.Outputs {
		commit.Outputs[k] = "sha256:" + strings.Repeat("0", 64)
		break
	}
	commit.Sign(hash, 0, testKey(t)) // a buggy client with a trusted key
	data, _ = json.Marshal(commit)
	if err := s3.PutNamed(context.Background(), name, data); err != nil {
		t.Fatal(err)
	}
	if r := umpEnv(t, env, good, "--s3-insecure", "push", hash); r.code != 4 ||
		!strings.Contains(r.stderr, "nondeterministic") {
		t.Errorf("push against a commit with other outputs: exit %d; want 4\n%s", r.code, r.stderr)
	}

	// A commit whose status is a megabyte of text: refused in one line.
	commit.Status = strings.Repeat("x", 1<<20)
	data, _ = json.Marshal(commit)
	if err := s3.PutNamed(context.Background(), name, data); err != nil {
		t.Fatal(err)
	}
	if r := umpEnv(t, env, good, "--s3-insecure", "status", "--remote", hash); r.code != 3 ||
		len(r.stdout+r.stderr) > 1000 {
		t.Errorf(
			"status --remote of a commit with a 1 MiB status: exit %d, %d bytes of output; want 3 and one short line",
			r.code,
			len(r.stdout+r.stderr),
		)
	}

	// A manifest the bucket has no registration of: an unknown hash, bad input.
	if r := umpEnv(t, env, good, "--s3-insecure", "status", "--remote", strings.Repeat("0", 64)); r.code != 2 ||
		!strings.Contains(r.stderr, "has no registration") {
		t.Errorf("status --remote of a manifest never pushed: exit %d; want 2\n%s", r.code, r.stderr)
	}
}

// TestLostOutputIsAnError: a command whose standard output cannot be
// written (/dev/full) exits 3 and says so, whatever it printed; a reader
// that leaves (| head) is not an error.
func TestLostOutputIsAnError(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system:", err)
	}
	defer full.Close()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, store, "run", m))
	for _, args := range [][]string{
		{"run", m}, {"status"}, {"show", hash[:12]}, {"trust", "list"}, {"key", "show"}, {"table", hash[:12]},
	} {
		cmd := exec.Command(umpBin, append([]string{"--store", store}, args...)...)
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = full, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(stderr.String(), "standard output") {
			t.Errorf("ump %s > /dev/full: %v, want exit 3 saying the standard output was lost\n%s",
				strings.Join(args, " "), err, stderr.String())
		}
	}
}
