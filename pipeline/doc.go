// Package pipeline runs manifests: every cell runs the stages in order,
// each stage is skipped when its cache key has a completed event whose
// blobs verify, and training resumes from its last checkpoint.
//
// A Runner works over three contracts: the event log it records to
// (eventlog.Log), the blob store its outputs go to (artifacts.Store), and,
// when runs on many machines share a sweep, a create-only named store
// (artifacts.Named: S3, or its in-memory twin in tests) through Remote: a
// pinned registration, each attempt's signed events per checkpoint, one
// signed create-only commit per cell, and submitted worklists; what is
// read back counts only when signed by a key the store trusts
// (signing.Trust; the store's trusted-keys file lists those keys besides
// its user's own). A Store is an opened store directory (eventlog.Dir)
// with its blobs; push, pull, verify and gc work on it.
package pipeline
