package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"filippo.io/edwards25519"
	"github.com/ump-lab/ump/internal/bounded"
	"github.com/ump-lab/ump/internal/durable"
)

// Key is one user's signing key.
type Key struct {
	name    string
	private ed25519.PrivateKey
	Path    string // the file it was read from
}

// ErrBadKey is returned (wrapped) for a key file or public key that does
// not parse, or a key file others can read.
var ErrBadKey = errors.New("bad signing key")

// ErrUntrusted is returned (wrapped) by Verify for a missing signature,
// one from a key the store does not trust, or one that does not verify.
var ErrUntrusted = errors.New("not signed by a trusted key")

// DefaultPath is where a user's key lives unless --key or UMP_KEY say
// otherwise: ump/signing-key under the user's configuration directory
// (~/.config on Linux).
func DefaultPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "ump", "signing-key")
}

// keyName is what a key's name may hold: it appears in messages and in
// the trusted-keys file, one key a line.
var keyName = regexp.MustCompile(`^[A-Za-z0-9._@+-]{1,64}$`)

// Size limits of the files this package reads (bounded.ReadFile): a key
// file is one line of about 130 bytes, a trusted-keys file a line a key.
const (
	maxKeyFile     = 4 << 10
	maxTrustedFile = 1 << 20
)

// Load reads the key at path; a missing file wraps fs.ErrNotExist.
func Load(path string) (*Key, error) {
	raw, err := bounded.ReadFile(path, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf(
			"%w: %s can be read by others (mode %04o): `chmod 600 %s`, or make a new key if others may have read it",
			ErrBadKey,
			path,
			perm,
			path,
		)
	}
	name, data, ok := strings.Cut(strings.TrimSpace(string(raw)), ":")
	private, derr := base64.StdEncoding.DecodeString(data)
	if !ok || !keyName.MatchString(name) || derr != nil || len(private) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf(
			"%w: %s does not hold NAME:BASE64 of an ed25519 private key (as `ump key show` creates)",
			ErrBadKey,
			path,
		)
	}
	return &Key{name: name, private: ed25519.PrivateKey(private), Path: path}, nil
}

// LoadOrCreate reads the key at path, or creates one there (owner-only,
// in a directory only its owner can enter) when there is none; created
// says which.
func LoadOrCreate(path string) (key *Key, created bool, err error) {
	key, err = Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	_, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, err
	}
	key = &Key{name: defaultName(), private: private, Path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("signing key %s: %w", path, err)
	}
	data := []byte(key.name + ":" + base64.StdEncoding.EncodeToString(private) + "\n")
	created, err = createOnly(path, data)
	if err != nil {
		return nil, false, fmt.Errorf("signing key %s: %w", path, err)
	}
	if !created { // another process made one meanwhile: use it
		key, err = Load(path)
	}
	return key, created, err
}

// createOnly writes data, synced and readable by its owner alone, to a
// new file at path; created is false, and nothing written, when path
// exists.
func createOnly(path string, data []byte) (created bool, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), durable.TempPrefix+"*") // mode 0600
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, durable.OS.SyncDir(filepath.Dir(path))
}

// defaultName is USER@HOST, as far as it fits a key's name.
func defaultName() string {
	name := "ump"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if host, err := os.Hostname(); err == nil {
		name += "@" + host
	}
	name = regexp.MustCompile(`[^A-Za-z0-9._@+-]`).ReplaceAllString(name, "-")
	return name[:min(len(name), 64)]
}

// Public is the key's public half, NAME:BASE64.
func (k *Key) Public() string {
	return k.name + ":" + base64.StdEncoding.EncodeToString(k.private.Public().(ed25519.PublicKey))
}

// Sign signs msg; the signature is base64.
func (k *Key) Sign(msg []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(k.private, msg))
}

// ParsePublic checks a public key written NAME:BASE64, exactly as Public
// writes it (one line, the canonical base64: no line breaks, spaces or
// carriage returns, which the decoder alone would skip), and returns its
// key.
func ParsePublic(s string) (ed25519.PublicKey, error) {
	name, data, ok := strings.Cut(s, ":")
	pub, err := base64.StdEncoding.DecodeString(data)
	if !ok || !keyName.MatchString(name) || err != nil || len(pub) != ed25519.PublicKeySize ||
		base64.StdEncoding.EncodeToString(pub) != data {
		return nil, fmt.Errorf(
			"%w: %q is not a public key NAME:BASE64 on one line, as `ump key show` prints it",
			ErrBadKey,
			firstLine(s),
		)
	}
	if weak(pub) {
		return nil, fmt.Errorf("%w: %q is not a key anyone holds: its point has small order "+
			"(the all-zero key is one), so a signature by it needs no private half; "+
			"ask its owner for the line `ump key show` prints", ErrBadKey, firstLine(s))
	}
	return ed25519.PublicKey(pub), nil
}

// weak reports whether pub is not a point of the curve, or one of small
// order (eight times it is the identity): signatures that verify under
// such a key can be made without any private key.
func weak(pub []byte) bool {
	p, err := new(edwards25519.Point).SetBytes(pub)
	return err != nil || new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1
}

// Trust is the set of public keys whose signatures a store accepts.
type Trust struct {
	keys     []string // NAME:BASE64, sorted
	Unsigned bool     // accept what carries no signature (pull --trust-unsigned)
}

// NewTrust trusts the given public keys, which must parse.
func NewTrust(keys ...string) (*Trust, error) {
	t := &Trust{}
	for _, k := range keys {
		if _, err := ParsePublic(k); err != nil {
			return nil, err
		}
		if !slices.Contains(t.keys, k) {
			t.keys = append(t.keys, k)
		}
	}
	slices.Sort(t.keys)
	return t, nil
}

// Keys lists the trusted keys.
func (t *Trust) Keys() []string { return slices.Clone(t.keys) }

// Trusts reports whether key (NAME:BASE64, the name included) is trusted.
func (t *Trust) Trusts(key string) bool { return slices.Contains(t.keys, key) }

// Verifies reports whether sig is signer's signature of msg, whoever
// signer is (Trust.Verify also asks whether signer is trusted).
func Verifies(signer string, msg []byte, sig string) bool {
	pub, err := ParsePublic(signer)
	raw, derr := base64.StdEncoding.DecodeString(sig)
	return err == nil && derr == nil && ed25519.Verify(pub, msg, raw)
}

// Verify checks that sig is signer's signature of msg and signer is
// trusted; a missing signature (signer and sig empty) passes only when
// t.Unsigned. what names the signed thing in errors.
func (t *Trust) Verify(what, signer string, msg []byte, sig string) error {
	if signer == "" && sig == "" {
		if t.Unsigned {
			return nil
		}
		return fmt.Errorf("%w: %s is not signed (written by an ump from before signing, or by hand): "+
			"--trust-unsigned (pull, run, submit) accepts it if you trust whoever can write the bucket", ErrUntrusted,
			what)
	}
	if !t.Trusts(signer) {
		return fmt.Errorf(
			"%w: %s is signed by %s, a key this store does not trust: `ump trust add %s` if it is a collaborator's",
			ErrUntrusted,
			what,
			firstLine(signer),
			firstLine(signer),
		)
	}
	if !Verifies(signer, msg, sig) {
		return fmt.Errorf(
			"%w: %s carries a signature by %s that does not verify: it was changed after signing",
			ErrUntrusted,
			what,
			signer,
		)
	}
	return nil
}

// firstLine keeps what goes into a message to one short line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 120 {
		line = line[:120] + "…"
	}
	return line
}

// ReadTrusted reads a trusted-keys file: one public key a line; blank
// lines and lines starting with # are skipped. A missing file lists none.
// A line that is not a public key (ParsePublic) trusts no one and leaves
// the others usable: it is returned in bad, as an error naming its line.
func ReadTrusted(path string) (keys []string, bad []error, err error) {
	raw, err := bounded.ReadFile(path, maxTrustedFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for n, line := range bytes.Split(raw, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if _, err := ParsePublic(s); err != nil {
			bad = append(bad, fmt.Errorf("%s line %d: %w", path, n+1, err))
			continue
		}
		keys = append(keys, s)
	}
	return keys, bad, nil
}

// WriteTrusted makes the trusted-keys file at path list keys (durably):
// its comments and blank lines stay where they are, a key no longer
// listed goes, as does a line that is not a key (which trusted no one),
// and a new key is appended; a new file starts with a line that says
// what it is.
func WriteTrusted(path string, keys []string) error {
	raw, err := bounded.ReadFile(path, maxTrustedFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var b strings.Builder
	if len(raw) == 0 {
		b.WriteString("# Public keys whose signed commits this store imports (ump trust add/remove).\n")
	}
	var lines []string
	if len(raw) > 0 {
		lines = strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	}
	kept := map[string]bool{}
	for _, line := range lines {
		if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
			if _, err := ParsePublic(s); err != nil || !slices.Contains(keys, s) || kept[s] {
				continue // not a key (ReadTrusted named it), removed, or listed twice
			}
			kept[s] = true
		}
		b.WriteString(line + "\n")
	}
	for _, k := range keys {
		if !kept[k] {
			b.WriteString(k + "\n")
		}
	}
	return durable.WriteFile(durable.OS, path, []byte(b.String()))
}
