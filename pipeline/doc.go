// Package pipeline runs manifests: every cell runs the stages in order,
// each stage is skipped when its cache key has a completed event whose
// blobs verify, and training resumes from its last checkpoint.
//
// A Runner works over two contracts: the event log it records to
// (eventlog.Log) and the blob store its outputs go to (artifacts.Store).
// A run that machines share plugs in through Fleet (package fleet: pins,
// attempts, signed commits through S3), which pins the registration and
// gives each cell's hooks; CheckCell and CheckPulled tell whether events
// from elsewhere follow from a cell's spec, inputs and stages. The train
// stage says how much memory a cell needs (train.MemoryNeed). A Store is
// an opened store directory (eventlog.Dir) with its blobs; verify and gc
// work on it.
package pipeline
