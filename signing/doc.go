// Package signing signs what machines share on S3 and checks it against
// the keys a store trusts, after Nix's model for binary caches.
//
// A Key is one user's ed25519 key pair, kept in a file only its owner can
// read (DefaultPath, or the path --key and UMP_KEY name) and created on
// first need. Its public half is written NAME:BASE64 (Key.Public); that
// string is what `ump key show` prints and `ump trust add` takes. A Trust
// is the set of public keys a store accepts signatures from: its user's
// own and those listed in the store's trusted-keys file. Verify checks a
// signature against a Trust; every refusal wraps ErrUntrusted and says
// which key and how to trust it.
//
// Imports: internal/bounded, internal/durable.
package signing
