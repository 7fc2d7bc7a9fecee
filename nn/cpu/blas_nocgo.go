//go:build !cgo

package cpu

// backend is gonum's pure-Go sgemm: this build has no cgo for OpenBLAS.
var backend = blasBackend{name: "gonum (pure Go; built without cgo)"}
