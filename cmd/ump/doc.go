// Command ump runs decentralized-SGD sweeps declared in manifests and
// records every stage in an event-sourced store. One file per command,
// cmd_<verb>.go: its Action only parses flags and calls runX.
//
// Imports: artifacts, dashboard, datasets, dirimport, engines, eventlog,
// fleet, internal/bounded, internal/cliargs, internal/display, internal/durable,
// manifests, nn/cpu, nn/gpu, pipeline, report, report/document,
// report/figures, report/paper, report/resultsdir, reproduction, signing,
// stages, stages/evaluate, stages/partition, stages/topology, stages/train,
// state.
package main
