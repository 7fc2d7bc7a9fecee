// Package display makes text that comes from files (manifests, labels,
// records, notes, engine names: anything a collaborator may have written)
// harmless where ump prints it. Terminal writes each control character as
// its Go escape (\x1b), so no escape sequence reaches a terminal; Markdown
// and LaTeX do the same and escape what would make markup in their format.
// Every other character is kept. Shell writes a value as one shell word,
// and AbsolutePaths makes the paths a hint names absolute, so that a
// command ump prints runs as printed, from any directory.
//
// Imports: none of ump's packages.
package display
