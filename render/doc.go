// Package render draws figures (package figure) to PNG, SVG and PDF: the curves
// of a manifest (Figure) and the worker × class heat map of a partition
// (Histogram). It is the only package that imports gonum/plot.
//
// Imports: artifacts, figure, internal/durable.
package render
