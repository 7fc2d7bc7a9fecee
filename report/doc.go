// Package report turns a store's events and the blobs they name into what
// a researcher reads: a manifest's cells folded from their events
// (Report, CellView), results tables laid out as the manifest's table
// block says (Grid: Markdown, booktabs LaTeX, CSV), the curves of its
// figures (Figure, drawn by package render), and the exported Arrow
// tables (Export). Every state it shows is a fold over events, never a
// stored flag.
//
// A Source is what it reads: an eventlog.Reader and an artifacts.Store
// (the store's blobs, or S3). Laying a table out (Layout) is a pure
// function of the plan, the layout and each cell's final figures; only
// ReadFinals and the curves read blobs. Exported is a manifest's results
// without a store (its registration and exports, as `ump report` writes
// them), from which the same tables and curves are laid out again.
package report
