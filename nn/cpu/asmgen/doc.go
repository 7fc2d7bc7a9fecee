// Command asmgen writes the CPU engine's assembly kernels for amd64,
// nn/cpu/kernels_amd64.s, and their Go declarations,
// kernels_asm_amd64.go: each kernel written once and emitted for two
// widths, AVX-512 (16 floats in a Z register, 32 registers) and AVX2 with
// FMA (8 in a Y register, 16), with the loops a kernel unrolls and the
// registers it keeps its sums in. The kernels compute what nn/cpu's Go
// loops define, in their order (kernels_amd64.go says which).
//
// Run it as go generate ./nn/cpu; TestTheAssemblyIsGenerated checks that
// the committed files are its output.
//
// Imports: none of ump's packages.
package main
