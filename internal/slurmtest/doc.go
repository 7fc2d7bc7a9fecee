// Package slurmtest starts a real one-node Slurm cluster (munged,
// slurmctld, slurmd from Debian's slurm-wlm) for tests, on free ports of
// 127.0.0.1's host and in a temporary directory, stopped when the test
// ends. It needs root (slurmd starts jobs as their user) and skips the
// test, saying why, where the binaries or root are missing.
//
// Imports: none of ump's packages.
package slurmtest
