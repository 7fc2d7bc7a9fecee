// Package eventlog is a store directory's record of what happened: the
// events a run writes (their kinds and payload types: Registration,
// record.RoundReport, StageOutcome, CellOutcome, Provenance), the Badger
// log that holds them, and the files around it. It is the only package
// that imports Badger. It knows no stage, manifest or data set: a
// registration keeps its plan as JSON, which state decodes.
//
// Data model: a store directory holds its marker (ump-store.json: the
// format and the last committed event's sequence number), the event log
// (Badger, events/), the local blobs (blobs/, artifacts.Local), a lock
// file naming the process that holds it (lock), the running process's
// status snapshot (status.json), and the holder's published copy of the
// log (events.jsonl) that OpenReader reads beside a running writer and a
// Follower (ump serve) follows line by line without any lock. Before
// Badger opens the log, every table file its MANIFEST lists must pass its
// checksums and the log must be as long as the marker says, else it is
// refused as damaged (ErrDamaged); table files the MANIFEST does not list
// (a crash's leftovers) are set aside by the next writer; a writer holds
// spare disk space (spare-space) for Badger's last flush. The log is
// append-only: key ev/<seq, big-endian uint64> holds one JSON Event;
// index keys ix/<m|c|s|k>/<manifest|cell|stage key|kind>/<seq> point into
// it.
//
// Contract: Log (Reader's queries, Append, Import), answered by Badger on
// disk and by Memory, its in-memory twin (the published events as read,
// and tests).
//
// Imports: artifacts, internal/durable, record.
package eventlog
