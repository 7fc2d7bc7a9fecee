package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/pipeline"
)

// TestKeyAndTrustCommands: `ump key show` creates the key once, owner-only,
// and prints its public half; `ump trust` adds, lists and removes keys,
// refusing what is not a key (exit 2); a key others can read, and a
// trusted-keys file with a line that is not a key, are bad input naming
// the fix.
func TestKeyAndTrustCommands(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "conf", "signing-key")
	env := []string{"UMP_KEY=" + keyFile}
	store := t.TempDir()
	first := umpEnv(t, env, store, "key", "show")
	pub := strings.TrimSpace(first.stdout)
	if first.code != 0 || !strings.Contains(first.stderr, "created your signing key "+keyFile) ||
		strings.Count(pub, ":") != 1 {
		t.Fatalf("key show: exit %d %q %q", first.code, first.stdout, first.stderr)
	}
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v %v; want mode 0600", err, info)
	}
	if again := umpEnv(t, env, store, "key", "show"); strings.TrimSpace(again.stdout) != pub || again.stderr != "" {
		t.Errorf("key show again: %q %q; want the same key, nothing created", again.stdout, again.stderr)
	}

	other := strings.TrimSpace(
		umpEnv(t, []string{"UMP_KEY=" + filepath.Join(t.TempDir(), "k")}, store, "key", "show").stdout,
	)
	steps := []struct {
		args       []string
		code       int
		want       string
		wantStdout bool
	}{
		{[]string{"trust", "add", "not-a-key"}, 2, `"not-a-key" is not a public key NAME:BASE64`, false},
		{[]string{"trust", "add", other}, 0, "now trusts " + other, true},
		{[]string{"trust", "add", other}, 0, "already trusts " + other, true},
		{[]string{"trust", "list"}, 0, pub + " (your own key, " + keyFile + ")\n" + other + "\n", true},
		{[]string{"trust", "remove", other}, 0, "no longer trusts " + other, true},
		{[]string{"trust", "remove", other}, 2, "does not list " + other, false},
	}
	for _, s := range steps {
		r := umpEnv(t, env, store, s.args...)
		got := r.stderr
		if s.wantStdout {
			got = r.stdout
		}
		if r.code != s.code || !strings.Contains(got, s.want) {
			t.Errorf(
				"%s: exit %d %q %q; want %d and %q",
				strings.Join(s.args, " "),
				r.code,
				r.stdout,
				r.stderr,
				s.code,
				s.want,
			)
		}
	}

	wrapped := other[:30] + "\n" + other[30:] // as a mail client wraps it
	if r := umpEnv(t, env, store, "trust", "add", wrapped); r.code != 2 ||
		!strings.Contains(r.stderr, "is not a public key NAME:BASE64 on one line") {
		t.Errorf("trust add of a wrapped key: exit %d %q; want 2", r.code, r.stderr)
	}
	if data, _ := os.ReadFile(pipeline.TrustedKeysPath(store)); strings.Contains(string(data), other[:30]) {
		t.Errorf("trust add of a wrapped key wrote it:\n%s", data)
	}
	os.WriteFile(pipeline.TrustedKeysPath(store), []byte(other+"\nsomeone's key\n"), 0o644)
	r := umpEnv(t, env, store, "trust", "list")
	if r.code != 0 || !strings.Contains(r.stdout, other+"\n") ||
		!strings.Contains(r.stderr, "trusted-keys line 2: bad signing key") ||
		!strings.Contains(r.stderr, "it trusts no one") {
		t.Errorf(
			"a trusted-keys file with a bad line: exit %d %q %q; want the good key listed and line 2 named",
			r.code,
			r.stdout,
			r.stderr,
		)
	}
	if r := umpEnv(t, env, store, "trust", "add", other); r.code != 0 || !strings.Contains(r.stdout, "already trusts") {
		t.Errorf("trust add beside a bad line: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if data, _ := os.ReadFile(pipeline.TrustedKeysPath(store)); strings.Contains(string(data), "someone's key") ||
		!strings.Contains(string(data), other) {
		t.Errorf("trust add did not rewrite the file without its bad line:\n%s", data)
	}
	os.Chmod(keyFile, 0o644)
	if r := umpEnv(t, env, store, "key", "show"); r.code != 2 || !strings.Contains(r.stderr, "chmod 600 "+keyFile) {
		t.Errorf("a key others can read: exit %d %q; want 2 naming chmod 600", r.code, r.stderr)
	}
}
