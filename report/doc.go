// Package report turns a store's results into what a researcher reads:
// results tables laid out as the manifest's table block says (Grid:
// Markdown, booktabs LaTeX, CSV), the curves of its figures (Figure,
// drawn by package render), the exported Arrow tables (Export), the
// comparison with the paper, and results directories that need no store.
// It presents; the fold of events into cells is package state's.
//
// It reads a state.Source: a store's events and its blobs (local, or S3).
// Laying a table out (NewGrid) is a pure function of the plan, the layout
// and each cell's final figures; only ReadFinals, the curves and the
// exports read blobs. Exported is a manifest's results without a store
// (its registration and exports, as `ump report` writes them), from which
// the same tables and curves are laid out again; its record covers the
// results, and the figures are drawn again by every report. A report
// regenerated in place writes each directory beside it and swaps it in
// (Publish), so a kill leaves each old or new.
//
// Imports: artifacts, eventlog, internal/bounded, internal/display, internal/durable,
// internal/rng, kinds, manifests, optimizers, published, record, signing,
// stages, state, stats.
package report
