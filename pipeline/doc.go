// Package pipeline runs manifests: every cell runs the stages in order,
// each stage is skipped when its cache key has a completed event whose
// blobs verify, and training resumes from its last checkpoint.
//
// Data model: a Store is a directory holding its marker (ump-store.json:
// the format and the last committed event's sequence number), the event
// log (Badger, events/), the blobs (artifacts.Local, blobs/), a lock file
// naming the process that holds it (lock), the running process's status
// snapshot (status.json) and the holder's published copy of the log
// (events.jsonl) that OpenReader reads beside a running writer, and a
// Follower (ump serve) follows line by line without any lock. Before
// Badger opens the log, every table file its MANIFEST lists must pass its
// checksums and the log must be as long as the marker says, else it is
// refused as damaged; table files the MANIFEST does not list (a crash's
// leftovers) are set aside by the next writer; a writer holds spare disk
// space (spare-space) for Badger's last flush. The log is append-only:
// key ev/<seq, big-endian uint64> holds one JSON Event; index keys ix/<m|c|s|k>/<manifest|cell|stage key|
// kind>/<seq> point into it. Every state the pipeline shows (what is done,
// where to resume) is a fold over events, never a stored flag. Runs on many
// machines share state only through a create-only named store
// (artifacts.Named: S3, or its in-memory twin in tests) (Remote): a pinned
// registration, each attempt's signed events per checkpoint, one signed
// create-only commit per cell, and submitted worklists; what is read back
// counts only when signed by a key the store trusts (signing.Trust). The
// store's trusted-keys file lists those keys besides its user's own.
package pipeline
