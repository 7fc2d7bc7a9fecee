// Package fleet shares runs among machines through a create-only named
// store (artifacts.Named: S3, or its in-memory twin in tests): a pinned
// registration, each attempt's signed events per checkpoint, one signed
// create-only commit per cell, submitted worklists, and push and pull of a
// store's manifests. What is read back counts only when signed by a key
// the store trusts (signing.Trust) and when its events check against the
// cell as this machine would compute it (pipeline.CheckCell). A Remote is
// a pipeline.Fleet: the runner pins its registrations and runs each cell
// between its hooks. A Job is the Slurm array script or Kubernetes Indexed
// Job that runs a submitted worklist's tasks as workers.
//
// Imports: artifacts, datasets, eventlog, internal/display, manifests,
// pipeline, signing, stages, state.
package fleet
