// Package manifests reads sweep manifests: strict YAML decoding (one
// document, no repeated key, at most MaxFileBytes) with errors that name
// the file, line and field; defaults; validation; expansion of the sweep
// block into cells (at most MaxCells); and the canonical manifest hash. The
// algorithm, compression, topology and partition blocks are read from
// their kinds' declarations (package kinds), in the packages that
// implement them.
//
// Data model: a Manifest is one experiment configuration plus an optional
// Sweep (dotted field paths to lists of values). Parse normalises it (defaults
// filled in, sweep values normalised, axes sorted by path) and expands the
// cartesian product of the axes into Cells, each a complete Manifest without a
// sweep. The hash is the sha256 of the canonical JSON of the normalised
// manifest and the schema version, so key order and explicit defaults do not
// change it. A scale shrinks every cell's rounds (Cell.Config holds the
// rounds a cell runs, without the scale, so a scaled cell is the unscaled
// cell of that many rounds); the scale stays in the manifest and its hash.
//
// Its files go by concept: parse.go decodes a file (decode.go and
// blocks.go its fields and kind blocks), overrides.go applies PATH=VALUE
// overrides, suggest.go says what a misspelt path meant, sweep.go expands
// the sweep, defaults.go and validate.go fill and check a manifest,
// layout.go checks the table block against the sweep, canonical.go holds
// the canonical JSON and the hash, and plan.go the Plan and its Cells.
//
// Embedded manifests (Open by name): quickstart, examples/*, and paper/*,
// one per experiment of the paper (see REPRODUCING.md).
//
// Imports: codecs, datasets, graphs, internal/bounded, internal/display, kinds, optimizers,
// split, tasks.
package manifests
