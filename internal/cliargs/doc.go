// Package cliargs is how ump reads its command line with urfave/cli:
// every command's flags may follow its positional arguments and the
// global flags may follow a command (FlagsFirst), and a mistake in the
// command line — an unknown flag, a flag without its value, a required
// flag left out — is an Error of one line that names the command's help,
// not the whole help printed (UsageError, CheckFlags).
//
// Imports: none of ump's packages.
package cliargs
