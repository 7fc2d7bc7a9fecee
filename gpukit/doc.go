// Package gpukit is the GPU kit: what `make gpu-kit` builds into .gpu/ for
// a GPU host that has neither Go nor a network (build.sh), and the script
// that runs its phases there (run.sh, copied as .gpu/run): smoke, agree,
// bench and tables, each within a time limit, or all four in one command.
// Its test runs the phases of a built kit on GoMLX's pure-Go backend, with
// no Go on the PATH, as `make test` does; docs/gpu.md says what to run on a
// GPU host.
//
// Imports: none of ump's packages.
package gpukit
