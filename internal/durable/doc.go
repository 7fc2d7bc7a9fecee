// Package durable writes whole files that survive a crash or a power loss
// once the write returns: WriteFile writes a temporary file beside the
// target, syncs it, renames it into place and syncs the directory. The
// blob store and the store's marker write through it; WriteOut, the same
// for a file a user names (--out), replaces nothing but a regular file
// and, on Linux, writes a file without a name until it is whole.
//
// FS is the seam: OS is the real file system, and Crashable, for tests,
// is the real file system that also remembers what a power loss would
// keep (only synced contents under synced directory entries), so a test
// can tell a durable write from one that merely reached the page cache.
//
// Imports: internal/bounded.
package durable
