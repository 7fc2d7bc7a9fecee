// Package pipeline runs manifests: every cell runs the stages in order,
// each stage is skipped when its cache key has a completed event whose
// blobs verify, and training resumes from its last checkpoint.
//
// A Runner works over two contracts: the event log it records to
// (eventlog.Log) and the blob store its outputs go to (artifacts.Store).
// A run that machines share plugs in through Fleet (package fleet: pins,
// attempts, signed commits through S3), which pins the registration and
// gives each cell's hooks; CheckCell and CheckPulled tell whether events
// from elsewhere follow from a cell's spec, inputs and stages. The runner
// is handed its Stages and the Engines they train on (the composition
// root, cmd/ump, builds both): through Engines it asks what enters a
// cell's key, how much memory a cell needs, and which cells share a
// device cohort (each cell's seat reaches the train stage as Env.Seat);
// it imports no engine and no stage implementation. A Store is an opened
// store directory (eventlog.Dir) with its blobs; verify and gc work on it.
//
// Imports: artifacts, datasets, eventlog, internal/display, manifests, record, stages, state.
package pipeline
