package cpu

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The kernel paths, fastest first: "avx512" and "avx2" (x86's AVX-512,
// and AVX2 with FMA: C kernels under cgo, Go assembly without it), "neon"
// (C kernels under cgo on arm64) and "go" (Go loops, every machine).
// Every path computes the same operations in the same order, so they give
// the same bits; the path is not part of the engine's identity.
var paths = []string{"avx512", "avx2", "neon", "go"}

// kernels is the path in use: the fastest this CPU runs, unless
// UMP_KERNELS named another (UseKernels).
var kernels string

func init() { use(Paths()[0]) }

// Kernels names the kernel path in use.
func Kernels() string { return kernels }

// KernelSource says what computes the path in use: "C under cgo", "Go
// assembly" (amd64 without cgo) or "Go loops".
func KernelSource() string { return source(kernels) }

// Paths lists the kernel paths this CPU runs, fastest first.
func Paths() []string {
	var ps []string
	for _, p := range paths {
		if runs(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// PathsUnderTest lists the kernel paths the engine's tests compute on:
// the one UMP_KERNELS names, if set, or every path this CPU runs.
func PathsUnderTest() []string {
	if p := os.Getenv("UMP_KERNELS"); p != "" {
		return []string{p}
	}
	return Paths()
}

// ErrKernels is returned (wrapped) for a kernel path that does not exist
// or that this CPU cannot run.
var ErrKernels = errors.New("no such kernel path here")

// UseKernels makes the engine compute on a kernel path ("" for the
// fastest); call it before any training starts. The result is the same
// on every path: it is for tests, and for users who doubt one.
func UseKernels(path string) error {
	if path == "" {
		path = Paths()[0]
	}
	if !runs(path) {
		return fmt.Errorf(
			"%w: UMP_KERNELS=%s: this CPU runs %s; unset UMP_KERNELS, or set it to one of them",
			ErrKernels,
			path,
			strings.Join(Paths(), ", "),
		)
	}
	use(path)
	return nil
}

// UseKernelsFromEnv applies UMP_KERNELS, if set.
func UseKernelsFromEnv() error {
	if p, ok := os.LookupEnv("UMP_KERNELS"); ok {
		return UseKernels(p)
	}
	return nil
}
