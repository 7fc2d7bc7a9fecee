// Package published reads the paper's published results and claims as
// data (manifests/published.yaml): its tables tied to the paper manifests
// by row and column labels, each entry as printed, and each checkable
// claim with the LaTeX line it comes from. Parse checks that every entry
// reads and every claim names tables, rows and columns that exist; report
// sets our results beside them and decides the claims.
//
// Imports: none of ump's packages.
package published
