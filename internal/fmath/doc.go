// Package fmath holds the elementary functions the numerics call, with the
// same bits on every machine: Exp and Log (float64) and FMA32, a float32
// fused multiply-add.
//
// The standard library's math.Exp and math.Log run assembly on amd64,
// arm64 and s390x, whose last bits differ, and Go may fuse x*y + z into
// one instruction on some architectures (arm64, amd64 with GOAMD64=v3)
// but not on others. Here every product whose rounding matters is wrapped
// in an explicit conversion, which the Go specification says prevents
// fusion, so each function is the same sequence of IEEE operations
// everywhere.
//
// Imports: none of ump's packages.
package fmath
