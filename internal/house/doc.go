// Package house holds the tests of the repository's own rules, which no
// one package's tests can see: every package's doc.go names the project
// packages it imports (its "Imports:" paragraph, checked against the
// build's own list), docs/internals.md places every package, no function
// outside the numerical kernels holds more than 60 statements or takes
// more than 6 parameters, and no line of Go runs past 120 columns.
//
// Imports: none of ump's packages.
package house
