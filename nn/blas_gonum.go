package nn

import "gonum.org/v1/gonum/blas/gonum"

// goBLAS is the pure-Go fallback.
var goBLAS gonum.Implementation
