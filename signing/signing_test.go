package signing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestKeyIsCreatedOnceOwnerOnlyAndReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf", "ump", "signing-key")
	keys := make([]*Key, 8)
	created := make([]bool, 8)
	var wg sync.WaitGroup
	for i := range keys { // processes racing to create the first key
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if keys[i], created[i], err = LoadOrCreate(path); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for i, k := range keys {
		if created[i] {
			n++
		}
		if k.Public() != keys[0].Public() {
			t.Errorf("racing creators got different keys: %s and %s", k.Public(), keys[0].Public())
		}
	}
	if n != 1 {
		t.Errorf("%d creators say they created the key; want 1", n)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, info.Mode())
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v; want 0700", dir.Mode())
	}
	again, created2, err := LoadOrCreate(path)
	if err != nil || created2 || again.Public() != keys[0].Public() {
		t.Errorf("second LoadOrCreate: %v created=%v %s; want the same key", err, created2, again.Public())
	}
	if !strings.Contains(again.Public(), "@") {
		t.Errorf("public key %q lacks its USER@HOST name", again.Public())
	}
}

func TestKeyReadableByOthersIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if _, _, err := LoadOrCreate(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o610} { // readable, writable or executable by group or world
		os.Chmod(path, mode)
		if _, err := Load(path); !errors.Is(err, ErrBadKey) || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("a key of mode %04o: %v; want ErrBadKey naming chmod 600", mode, err)
		}
	}
	os.Chmod(path, 0o400)
	if _, err := Load(path); err != nil {
		t.Errorf("a key only its owner can read (0400): %v", err)
	}
	os.WriteFile(path, []byte("someone:bm90IGEga2V5\n"), 0o600)
	if _, err := Load(path); !errors.Is(err, ErrBadKey) {
		t.Errorf("a key file without a key: %v; want ErrBadKey", err)
	}
}

func TestVerifyAcceptsOnlyTrustedUntamperedSignatures(t *testing.T) {
	dir := t.TempDir()
	mine, _, _ := LoadOrCreate(filepath.Join(dir, "mine"))
	theirs, _, _ := LoadOrCreate(filepath.Join(dir, "theirs"))
	trust, err := NewTrust(mine.Public())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("cell 1 completed outputs sha256:aa")
	sig := mine.Sign(msg)
	if err := trust.Verify("commit", mine.Public(), msg, sig); err != nil {
		t.Errorf("a trusted key's signature: %v", err)
	}
	for _, tc := range []struct {
		name, signer, sig, want string
		msg                     []byte
	}{
		{"a changed message", mine.Public(), sig, "does not verify", []byte("cell 1 diverged outputs sha256:aa")},
		{"another key's signature under my name", mine.Public(), theirs.Sign(msg), "does not verify", msg},
		{"an untrusted key", theirs.Public(), theirs.Sign(msg), "ump trust add " + theirs.Public(), msg},
		{"no signature", "", "", "--trust-unsigned", msg},
		{"a signature that is not base64", mine.Public(), "!!", "does not verify", msg},
	} {
		if err := trust.Verify("commit", tc.signer, tc.msg, tc.sig); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrUntrusted naming %q", tc.name, err, tc.want)
		}
	}
	trust.Unsigned = true
	if err := trust.Verify("commit", "", msg, ""); err != nil {
		t.Errorf("no signature with Unsigned: %v", err)
	}
	if err := trust.Verify("commit", theirs.Public(), msg, theirs.Sign(msg)); err == nil {
		t.Error("Unsigned made an untrusted key trusted")
	}
	if err := trust.Verify("commit", mine.Public(), msg, ""); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a signer named without a signature, with Unsigned: %v; want it refused (not taken as unsigned)", err)
	}
}

func TestTrustedKeysFile(t *testing.T) {
	dir := t.TempDir()
	a, _, _ := LoadOrCreate(filepath.Join(dir, "a"))
	path := filepath.Join(dir, "trusted-keys")
	if keys, err := ReadTrusted(path); err != nil || keys != nil {
		t.Errorf("a missing file: %v %v; want none", keys, err)
	}
	if err := WriteTrusted(path, []string{a.Public()}); err != nil {
		t.Fatal(err)
	}
	if keys, err := ReadTrusted(path); err != nil || len(keys) != 1 || keys[0] != a.Public() {
		t.Errorf("read back %v %v", keys, err)
	}
	os.WriteFile(path, []byte("# mine\n"+a.Public()+"\n\nnot-a-key\n"), 0o644)
	if _, err := ReadTrusted(path); !errors.Is(err, ErrBadKey) || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("a bad line: %v; want ErrBadKey naming line 4", err)
	}
	if _, err := NewTrust("x:" + strings.Repeat("A", 10)); !errors.Is(err, ErrBadKey) {
		t.Errorf("NewTrust of a malformed key: %v", err)
	}
}
