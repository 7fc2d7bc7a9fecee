package cliargs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Error is a mistake in the command line: a flag the command does not
// know, a flag without its value, a required flag left out.
type Error struct{ error }

func (e Error) Unwrap() error { return e.error }

// UsageError is urfave/cli's OnUsageError: a flag the command does not
// know, or a flag without its value, is an Error that names the help.
func UsageError(c *cli.Context, err error, _ bool) error {
	return Error{fmt.Errorf("%w (see `ump help %s`)", err, c.Command.Name)}
}

// CheckFlags gives every command UsageError, and checks its required
// flags itself: urfave/cli prints the whole help before saying which is
// missing, and exits 1.
func CheckFlags(cmds []*cli.Command) {
	for _, cmd := range cmds {
		cmd.OnUsageError = UsageError
		var required []cli.DocGenerationFlag
		for _, f := range cmd.Flags {
			switch f := f.(type) {
			case *cli.StringFlag:
				if f.Required {
					f.Required = false
					required = append(required, f)
				}
			case *cli.StringSliceFlag:
				if f.Required {
					f.Required = false
					required = append(required, f)
				}
			}
		}
		if len(required) > 0 {
			cmd.Before = func(c *cli.Context) error {
				for _, f := range required {
					if name := f.Names()[0]; !c.IsSet(name) {
						return Error{fmt.Errorf("%s needs --%s: %s", cmd.Name, name, f.GetUsage())}
					}
				}
				return nil
			}
		}
		CheckFlags(cmd.Subcommands)
	}
}

// FlagsFirst moves each command's flags (with their values) before its
// positional arguments, so that every documented form works: urfave/cli
// stops reading flags at the first positional argument (`ump table HASH
// --latex` would pass --latex as a second argument). A word that names a
// subcommand starts that command's own arguments; "--" ends the flags.
// The global flags given after a command (ump status --store X), which
// the command itself does not know, come back in hoisted, to go before
// it; globals is nil at the top level, where flags are the globals.
func FlagsFirst(flags, globals []cli.Flag, cmds []*cli.Command, args []string) (hoisted, ordered []string) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return hoisted, slices.Concat(ordered, positional, args[i:])
		case strings.HasPrefix(a, "-") && a != "-":
			name, _, withValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			into, known := &ordered, flags
			if !isFlag(flags, name) && isFlag(globals, name) {
				into, known = &hoisted, globals
			}
			if !withValue && takesValue(known, name) && i+1 == len(args) { // no value: alone, the parser says so
				return hoisted, []string{a}
			}
			*into = append(*into, a)
			if !withValue && takesValue(known, name) {
				*into = append(*into, args[i+1])
				i++
			}
		case len(positional) == 0 && subcommand(cmds, a) != nil:
			sub := subcommand(cmds, a)
			subGlobals := globals
			if subGlobals == nil {
				subGlobals = flags
			}
			h, o := FlagsFirst(sub.Flags, subGlobals, sub.Subcommands, args[i+1:])
			return slices.Concat(hoisted, h), slices.Concat(ordered, []string{a}, o)
		default:
			positional = append(positional, a)
		}
	}
	return hoisted, append(ordered, positional...)
}

// isFlag reports whether name is one of flags' names.
func isFlag(flags []cli.Flag, name string) bool {
	return slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
}

// takesValue reports whether the flag called name reads the next word.
func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			_, boolean := f.(*cli.BoolFlag)
			return !boolean
		}
	}
	return false // unknown: the parser reports it
}

// subcommand is the command of cmds called name, or nil.
func subcommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
