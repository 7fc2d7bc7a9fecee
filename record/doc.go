// Package record declares the records a rounded stage reports as it runs
// (RoundReport, with its Metrics) in the form the event log keeps them, so
// that the log (eventlog), which carries them, knows no stage, manifest or
// data set, and the stages, which write them, link no log.
//
// Imports: artifacts (a checkpoint's ref).
package record
