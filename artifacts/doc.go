// Package artifacts stores blobs by content and reads and writes tables.
//
// Data model: a blob is an immutable byte string named by a Ref (its sha256
// digest and size). A Store puts and gets blobs; every Get verifies the digest
// and size, so a corrupt or truncated blob is reported, never returned.
// Implementations: Local (a directory, the default; atomic temp-then-rename
// writes that keep Reserve bytes free on its disk), S3 (an S3-compatible
// bucket; every request bounded in time, a server that does not answer is
// ErrUnavailable) and Memory (for unit tests). S3 also keeps objects by
// name, each written once (Named: the state machines running one sweep
// share); Memory is its in-memory twin. A Table is a list of typed
// columns (int64, float64, string or bool) written as Arrow IPC, Parquet
// or CSV. Parquet files come from users (ump report reads results
// directories), so a malformed one reads as an error, never a panic.
//
// Imports: internal/durable.
package artifacts
