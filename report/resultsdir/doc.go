// Package resultsdir is a manifest's results without a store: the
// directory `ump report` writes (its registration, exports, figures and a
// signed record of them), read back (ReadExported, bounded and checked
// against its record and the plan), laid out again as tables and curves
// by package report, compared with another (Compare), and the root index
// over many (Root). A report regenerated in place writes each directory
// beside it and swaps it in (Publish), so a kill leaves each old or new.
//
// Imports: artifacts, eventlog, figure, internal/bounded, internal/display,
// internal/durable, manifests, published, report, report/paper, signing,
// stages, state, stats.
package resultsdir
