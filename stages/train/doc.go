// Package train is the stage that runs the cell's algorithm round by round:
// K local steps on every worker (mini-batches from each worker's partition
// for data sets; the quadratic's gradients otherwise), then communication
// with the round's mixing matrix through the cell's compress.Exchange
// (exact, or compressed with the bits counted), at the round's learning
// rate. It evaluates (metrics.go: the quadratic's figures, or every local
// model and their average on the test split) every evaluate.every rounds
// and at the last, with the exchange's bits and compression figures, writes a
// checkpoint every checkpoint.every rounds (and at the end, on divergence
// and on interruption), resumes from the pipeline's last checkpoint, and
// outputs the per-round metrics table ("rounds") and the final checkpoint
// ("checkpoint"). A round with non-finite parameters, or a data-set round
// whose mean mini-batch loss exceeds 100 ln(classes), stops the run as
// diverged. Checkpoints are TrainState (checkpoint.go). Cells without
// compression whose engine kind has a cohort program (GPU cells, and the
// CPU engine's where the engines are Exact) train in a device cohort
// (Lockstep, nn.Cohort): the same rounds, computed on the device, recorded
// the same way; a CPU engine's cell's cohort is Exact, its bits the CPU
// engine's. The stage links
// no engine: the composition root hands it Engines, which it asks for a
// cell's engine and cohort program by the cell's engine kind (package
// engines builds the CPU and GPU engines), and the runner hands Run the
// cell's seat in its cohort (Env.Seat). It reads the partition and the
// mixing matrices as their stages' outputs (stages.ValidationColumn,
// package mixing), linking neither stage.
//
// Imports: algorithms, artifacts, compress, datasets, internal/rng,
// manifests, nn, record, stages, stages/mixing, tasks.
package train
