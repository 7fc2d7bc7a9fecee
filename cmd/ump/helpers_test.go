package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/artifacts/s3test"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/signing"
)

// Helpers shared by the package's tests.

type result struct {
	stdout, stderr string
	code           int
}

func ump(t *testing.T, store string, args ...string) result {
	t.Helper()
	return umpEnv(t, nil, store, args...)
}

// umpEnv runs ump with extra environment variables.
func umpEnv(t *testing.T, env []string, store string, args ...string) result {
	t.Helper()
	return umpBinary(t, umpBin, env, store, args...)
}

// umpBinary runs the ump binary at bin (a test's own build).
func umpBinary(t *testing.T, bin string, env []string, store string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--store", store}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitStatus(t, cmd.Run())
	return result{out.String(), errb.String(), code}
}

// exitStatus is the exit status of a command that ran, err being what Run
// returned; a command that could not start fails the test.
func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var hashLine = regexp.MustCompile(`^manifest ([0-9a-f]{64})\n`)

func hashOf(t *testing.T, r result) string {
	t.Helper()
	m := hashLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("first stdout line is not `manifest <hash>`:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	return m[1]
}

// exportCSV exports a table and drops wall_seconds, the one column that
// differs between runs.
func exportCSV(t *testing.T, store, hash, table string) string {
	t.Helper()
	r := ump(t, store, "export", "--manifest", hash, "--table", table, "--out", "-")
	if r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	drop := -1
	for i, name := range rows[0] {
		if name == "wall_seconds" {
			drop = i
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, v := range row {
			if i != drop {
				b.WriteString(v + ",")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// outputsOf lists the output digests `ump show` reports.
func outputsOf(t *testing.T, store, hash string) string {
	t.Helper()
	r := ump(t, store, "show", hash)
	var lines []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "output ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.Join(lines, "\n")
}

func snapshot(store string) *eventlog.Snapshot {
	s, err := eventlog.ReadSnapshot(store)
	if err != nil {
		return nil
	}
	return s
}

func exportRows(t *testing.T, store, hash, table string, flags ...string) [][]string {
	t.Helper()
	r := ump(t, store, append([]string{"export", "--manifest", hash, "--table", table, "--out", "-"}, flags...)...)
	if r.code != 0 {
		t.Fatalf("export --table %s: exit %d %s", table, r.code, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// startS3 starts an S3 server with a bucket "team" and returns it, the
// environment that points ump at s3://team/ump on it, and that store for
// the test to read and tamper with.
func startS3(t *testing.T) (s3test.Server, []string, *artifacts.S3) {
	t.Helper()
	srv := s3test.Start(t)[0]
	srv.MakeBucket(t, "team")
	env := []string{
		"UMP_S3_ENDPOINT=" + srv.Endpoint,
		"AWS_ACCESS_KEY_ID=" + srv.Access,
		"AWS_SECRET_ACCESS_KEY=" + srv.Secret,
		"UMP_ARTIFACTS=s3://team/ump",
	}
	s3, err := artifacts.OpenS3(context.Background(), artifacts.S3Config{URL: "s3://team/ump", Endpoint: srv.Endpoint,
		AccessKey: srv.Access, SecretKey: srv.Secret, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return srv, env, s3
}

// testKey is the key the tests' ump processes sign with (UMP_KEY, set by
// TestMain).
func testKey(t *testing.T) *signing.Key {
	t.Helper()
	key, _, err := signing.LoadOrCreate(os.Getenv("UMP_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// testRemote reads S3 as a store does that trusts testKey.
func testRemote(t *testing.T, s3 *artifacts.S3) *fleet.Remote {
	t.Helper()
	return trustingRemote(t, s3, testKey(t))
}

// trustingRemote reads S3 as a store does that trusts key, and signs with
// it.
func trustingRemote(t *testing.T, s3 *artifacts.S3, key *signing.Key) *fleet.Remote {
	t.Helper()
	trust, err := signing.NewTrust(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return fleet.NewRemote(s3, key, trust)
}
