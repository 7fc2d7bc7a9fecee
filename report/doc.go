// Package report turns a store's results into what a researcher reads:
// results tables laid out as the manifest's table block says (Grid:
// Markdown, booktabs LaTeX, CSV, with the selection of a swept choice and
// the intervals and comparisons of its entries), the curves of its
// figures (figure.Figure, drawn by package render) and the exported Arrow tables
// (Export), and what `ump status` and `ump show` print of a manifest
// and its cells (WriteSummary, WriteAbout, Show). It presents; the fold
// of events into cells is package state's. Packages build on it:
// report/paper compares a table with the paper's and decides its claims,
// report/resultsdir writes, reads, checks and signs results directories
// that need no store, report/document writes `ump report`'s report and
// report/figures the figures of `ump plot`.
//
// It reads a state.Source: a store's events and its blobs (local, or S3).
// Laying a table out (NewGrid) is a pure function of the plan, the layout
// and each cell's final figures; only ReadFinals, the curves and the
// exports read blobs (CurvesFrom draws the curves of rounds from
// anywhere).
//
// Imports: artifacts, eventlog, figure, internal/display, internal/rng,
// kinds, manifests, optimizers, published, record, stages, state, stats.
package report
