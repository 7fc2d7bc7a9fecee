// Command testsummary reads `go test -json` on standard input and prints
// what `go test` prints without -v (a line per package; the output of
// every failing test and package; with -v, everything), and appends every skipped test, with
// the reason it gave, to the file -skips names. With -list it prints that
// file's tests instead, and with -forbid it fails when a reason holds the
// text given (.ci/run forbids the skips of what it installs).
//
// make test pipes each of its `go test` runs through it and ends with
// -list, so that a skipped test is never silent.
//
// Imports: none of ump's packages.
package main
