package signing

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ump-lab/ump/internal/bounded"
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
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620,
		0o610} { // readable, writable or executable by group or world
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
		if err := trust.Verify("commit", tc.signer, tc.msg, tc.sig); !errors.Is(err, ErrUntrusted) ||
			!strings.Contains(err.Error(), tc.want) {
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
	if err := trust.Verify("commit", mine.Public(), msg, ""); !errors.Is(err, ErrUntrusted) ||
		!strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a signer named without a signature, with Unsigned: %v; want it refused (not taken as unsigned)", err)
	}
}

func TestTrustedKeysFile(t *testing.T) {
	dir := t.TempDir()
	a, _, _ := LoadOrCreate(filepath.Join(dir, "a"))
	b, _, _ := LoadOrCreate(filepath.Join(dir, "b"))
	path := filepath.Join(dir, "trusted-keys")
	if keys, bad, err := ReadTrusted(path); err != nil || keys != nil || bad != nil {
		t.Errorf("a missing file: %v %v %v; want none", keys, bad, err)
	}
	if err := WriteTrusted(path, []string{a.Public()}); err != nil {
		t.Fatal(err)
	}
	if keys, bad, err := ReadTrusted(path); err != nil || len(bad) != 0 || len(keys) != 1 || keys[0] != a.Public() {
		t.Errorf("read back %v %v %v", keys, bad, err)
	}
	// A key wrapped over two lines, as a mail client wraps it, and a
	// line that is no key: each named, and b's key still trusted.
	pub := b.Public()
	os.WriteFile(path, []byte("# mine\n"+a.Public()+"\n\nnot-a-key\n"+pub[:30]+"\n"+pub[30:]+"\n"+pub+"\n"), 0o644)
	keys, bad, err := ReadTrusted(path)
	if err != nil || len(keys) != 2 || keys[0] != a.Public() || keys[1] != pub || len(bad) != 3 {
		t.Fatalf("a file with bad lines: keys %v, bad %v, %v; want a's and b's keys and 3 bad lines", keys, bad, err)
	}
	for i, line := range []string{"line 4", "line 5", "line 6"} {
		if !errors.Is(bad[i], ErrBadKey) || !strings.Contains(bad[i].Error(), line) {
			t.Errorf("bad line %d: %v; want ErrBadKey naming %s", i, bad[i], line)
		}
	}
	if _, err := NewTrust("x:" + strings.Repeat("A", 10)); !errors.Is(err, ErrBadKey) {
		t.Errorf("NewTrust of a malformed key: %v", err)
	}
}

// TestAPublicKeyIsOneCanonicalLine: the base64 decoder skips line breaks
// and carriage returns, so a key with either decodes to the same bytes;
// ParsePublic refuses it, and every other spelling but the one Public
// writes.
func TestAPublicKeyIsOneCanonicalLine(t *testing.T) {
	k, _, _ := LoadOrCreate(filepath.Join(t.TempDir(), "k"))
	pub := k.Public()
	if _, err := ParsePublic(pub); err != nil {
		t.Fatalf("the key as Public writes it: %v", err)
	}
	for _, bad := range []string{pub[:30] + "\n" + pub[30:], pub[:30] + "\r" + pub[30:], pub + "\r", pub[:30] + " " +
		pub[30:]} {
		if _, err := ParsePublic(bad); !errors.Is(err, ErrBadKey) {
			t.Errorf("ParsePublic(%q): %v; want ErrBadKey", bad, err)
		}
	}
}

// TestKeyFilesAreReadBounded: a key file linked to /dev/zero, or a FIFO,
// is refused at once, not read until memory runs out or a writer comes.
func TestKeyFilesAreReadBounded(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	if _, err := Load(zero); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("a key linked to /dev/zero: %v; want bounded.ErrNotRegular", err)
	}
	if _, _, err := ReadTrusted(zero); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("trusted keys linked to /dev/zero: %v; want bounded.ErrNotRegular", err)
	}
}

// TestKeysOfSmallOrderAreRefused: the all-zero public key and the
// identity point (both of small order) are refused wherever a key is
// read, since a signature that verifies under them needs no private
// half; a real key is accepted.
func TestKeysOfSmallOrderAreRefused(t *testing.T) {
	zero := make([]byte, 32)
	identity := append([]byte{1}, make([]byte, 31)...)
	for _, pub := range [][]byte{zero, identity} {
		key := "x:" + base64.StdEncoding.EncodeToString(pub)
		if _, err := ParsePublic(key); !errors.Is(err, ErrBadKey) || !strings.Contains(err.Error(), "small order") {
			t.Errorf("ParsePublic(%s): %v, want a refusal saying small order", key, err)
		}
		if _, err := NewTrust(key); err == nil {
			t.Errorf("NewTrust(%s) accepted it", key)
		}
		if Verifies(key, []byte("m"), base64.StdEncoding.EncodeToString(make([]byte, 64))) {
			t.Errorf("a signature of zeros verifies under %s", key)
		}
		path := filepath.Join(t.TempDir(), "trusted-keys")
		if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if keys, bad, err := ReadTrusted(path); err != nil || len(keys) != 0 || len(bad) != 1 {
			t.Errorf("ReadTrusted of %s: keys %v, bad %v, %v; want it in bad", key, keys, bad, err)
		}
	}
	k, _, err := LoadOrCreate(filepath.Join(t.TempDir(), "key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePublic(k.Public()); err != nil {
		t.Errorf("a real key: %v", err)
	}
}

// TestWriteTrustedKeepsTheFilesComments: adding and removing keys keeps
// the file's comments and blank lines where they were; a removed key
// goes, as does a line that is not a key; a new one is appended.
func TestWriteTrustedKeepsTheFilesComments(t *testing.T) {
	dir := t.TempDir()
	var keys []string
	for _, name := range []string{"a", "b", "c"} {
		k, _, err := LoadOrCreate(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.Public())
	}
	path := filepath.Join(dir, "trusted-keys")
	before := "# the lab's keys\n" + keys[0] + "\n\n# Alice, since 2026\n" + keys[1] + "\nnot a key\n"
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrusted(path, []string{keys[1], keys[2]}); err != nil { // remove a, add c
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# the lab's keys\n\n# Alice, since 2026\n" + keys[1] + "\n" + keys[2] + "\n"
	if string(got) != want {
		t.Errorf("the file became\n%s\nwant\n%s", got, want)
	}
}
