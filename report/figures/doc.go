// Package figures is the set of figures `ump plot` draws of a manifest:
// its curves (one figure of panels, one per table column, or one for a
// table without columns), the final figure of each row against a swept
// path (Against), and the worker × class heat map of each distinct
// partition. Each is handed to a Saver, which writes it in the formats
// asked for; file names hold letters, digits, '-' and '_' only.
//
// Imports: artifacts, figure, manifests, render, report, stages, state.
package figures
