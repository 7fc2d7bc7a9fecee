// Package datadriven runs golden test cases kept in testdata files in the
// style of pebble's datadriven files: per case a comment, a command, its
// input, "----", the expected output and "end". A test gives each case's
// output; with rewrite the file is written back with the outputs as the
// expected ones (then read the diff).
//
// Imports: none of ump's packages.
package datadriven
