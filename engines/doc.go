// Package engines is this machine's training engines, as the composition
// root hands them out: Set answers the runner's questions about a cell
// before it runs (pipeline.Engines: its engine's name, which enters the
// cell key, its memory, its device cohort) and gives the train stage its
// engines by kind (Set.Host, Set.Cohort): the CPU engine (nn/cpu) and the GPU engine
// and its cohort program (nn/gpu) on the configured device. The train
// stage links neither engine; a third engine is a kind added here.
//
// Imports: algorithms, datasets, manifests, nn, nn/cpu, nn/gpu, stages,
// stages/train, tasks.
package engines
