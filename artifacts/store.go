package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Ref names a blob by content.
type Ref struct {
	Digest string `json:"digest"` // "sha256:<64 hex digits>"
	Size   int64  `json:"size"`
}

func (r Ref) String() string { return fmt.Sprintf("%s (%d bytes)", r.Digest, r.Size) }

// hex returns the digest's hex part, or an error for a malformed digest.
func (r Ref) hex() (string, error) {
	h, ok := strings.CutPrefix(r.Digest, "sha256:")
	if !ok || len(h) != 64 {
		return "", fmt.Errorf("malformed artifact digest %q: want sha256:<64 hex digits>", r.Digest)
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", fmt.Errorf("malformed artifact digest %q: %w", r.Digest, err)
	}
	return h, nil
}

// Check reports whether the ref is well formed: a sha256 digest and a
// size that is not negative.
func (r Ref) Check() error {
	if _, err := r.hex(); err != nil {
		return err
	}
	if r.Size < 0 {
		return fmt.Errorf("artifact %s has a negative size", r.Digest)
	}
	return nil
}

// RefOf computes the ref of data.
func RefOf(data []byte) Ref {
	sum := sha256.Sum256(data)
	return Ref{Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

// ErrNotFound is returned (wrapped) by Get for a blob the store lacks.
var ErrNotFound = errors.New("artifact not found")

// ErrUnavailable is returned (wrapped) when a remote store does not
// answer within its timeouts and retries, refuses the credentials, lacks
// its bucket, or ignores create-only writes.
var ErrUnavailable = errors.New("artifact store unavailable")

// ErrCorrupt is returned (wrapped) by Get for a blob whose bytes do not
// match its ref.
var ErrCorrupt = errors.New("artifact corrupt")

// Store is a content-addressed blob store.
//
// Contract: all methods are safe for concurrent use. Put is idempotent: it
// returns RefOf(data) and, once it returns nil, Get(ref) yields data even
// after a crash; a Put over a corrupt copy replaces it. Get verifies size and
// digest and returns an error wrapping ErrNotFound or ErrCorrupt otherwise.
type Store interface {
	Put(ctx context.Context, data []byte) (Ref, error)
	Get(ctx context.Context, ref Ref) ([]byte, error)
}

// verify checks data against ref; where names the blob's location.
func verify(ref Ref, data []byte, where string) error {
	if got := RefOf(data); got != ref {
		return fmt.Errorf("%w: %s holds %d bytes with digest %s, want %s", ErrCorrupt, where, got.Size, got.Digest, ref)
	}
	return nil
}

// Named is a blob store that also keeps objects by name, each name
// written at most once: the state machines running one sweep share
// (fleet.Remote). Implementations: S3, and Memory for unit tests.
//
// Contract: as Store, and safe for concurrent use. PutNew stores data
// under name unless the name is taken, atomically: of racing PutNews of
// one name exactly one succeeds, the others return ErrExists, and the
// object never changes afterwards. A PutNew whose answer was lost may
// have stored its data: its retry returns ErrExists, so read the object
// back to learn whose it is. GetNamed returns the object or ErrNotFound;
// List returns, sorted, the names under dir at any depth. String names
// the store in messages.
type Named interface {
	Store
	PutNew(ctx context.Context, name string, data []byte) error
	GetNamed(ctx context.Context, name string) ([]byte, error)
	List(ctx context.Context, dir string) ([]string, error)
	String() string
}
