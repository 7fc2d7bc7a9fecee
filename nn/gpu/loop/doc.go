// Package loop builds counted While loops in GoMLX graphs (Counted) that
// XLA's builder accepts, loops within loops included: a loop carries the
// outside values its body uses, the body has its own constants and
// reductions, and a closure is made one of the current function's, where
// GoMLX 0.27.3 makes every closure the main function's. What it takes
// from GoMLX's private fields is in one file, gomlx_internals.go, written
// for the release gomlxVersion names. Built with the tag xla, like
// package gpu.
//
// Imports: none of ump's packages.
package loop
