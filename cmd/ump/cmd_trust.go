package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
	"github.com/urfave/cli/v2"
)

func keyCommand() *cli.Command {
	return &cli.Command{
		Name:  "key",
		Usage: "your signing key, which signs every result you commit to S3",
		Subcommands: []*cli.Command{{
			Name:  "show",
			Usage: "print the public half of your signing key (--key, UMP_KEY), creating the key if you have none",
			Description: "Give the line it prints to collaborators: `ump trust add KEY` makes their stores import\n" +
				"the results you commit. The private half stays in the key file, readable by you alone.",
			Action: func(c *cli.Context) error {
				if c.NArg() != 0 {
					return badInput{fmt.Errorf("key show takes no arguments (got %q)", c.Args().Slice())}
				}
				g := globalsOf(c)
				key, created, err := signing.LoadOrCreate(g.key)
				if err != nil {
					return err
				}
				if created {
					fmt.Fprintf(c.App.ErrWriter, "created your signing key %s\n", key.Path)
				}
				fmt.Fprintln(c.App.Writer, key.Public())
				return nil
			},
		}},
	}
}

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "the keys whose signed results the store imports from S3 (pull, run --artifacts, status --remote)",
		Description: "A store trusts its user's own key and the keys listed here (the file trusted-keys\n" +
			"in the store).\n" +
			"A commit signed by any other key, or not signed, is refused (exit 3) naming the key.",
		Subcommands: []*cli.Command{
			{Name: "add", Usage: "trust a collaborator's public key (as `ump key show` prints it)", ArgsUsage: "KEY",
				Action: func(c *cli.Context) error { return editTrust(c, "add") }},
			{Name: "remove", Usage: "stop trusting a public key", ArgsUsage: "KEY",
				Action: func(c *cli.Context) error { return editTrust(c, "remove") }},
			{Name: "list", Usage: "list the keys the store trusts",
				Action: func(c *cli.Context) error {
					if c.NArg() != 0 {
						return badInput{fmt.Errorf("trust list takes no arguments (got %q)", c.Args().Slice())}
					}
					return listTrust(globalsOf(c), c.App.Writer)
				}},
		},
	}
}

// editTrust adds a key to the store's trusted keys, or removes one,
// holding the store.
func editTrust(c *cli.Context, verb string) error {
	key, err := oneArg(c, "a public key NAME:BASE64")
	if err != nil {
		return err
	}
	if _, err := signing.ParsePublic(key); err != nil {
		return err
	}
	g := globalsOf(c)
	store, err := pipeline.Open(g.store, "ump trust "+verb)
	if err != nil {
		return err
	}
	defer store.Close()
	path := pipeline.TrustedKeysPath(store.Path)
	keys, bad, err := signing.ReadTrusted(path)
	if err != nil {
		return err
	}
	noteUntrustedLines(c.App.ErrWriter, bad)
	switch has := slices.Contains(keys, key); {
	case verb == "add" && has:
		fmt.Fprintf(c.App.Writer, "store %s already trusts %s\n", store.Path, key)
		if len(bad) == 0 {
			return nil
		}
		return writeTrusted(path, keys) // without the lines that are not keys
	case verb == "add":
		keys = append(keys, key)
	case !has:
		return badInput{
			fmt.Errorf(
				"store %s does not list %s among its trusted keys (`ump trust list` shows them)",
				store.Path,
				key,
			),
		}
	default:
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == key })
	}
	if err := writeTrusted(path, keys); err != nil {
		return err
	}
	if verb == "add" {
		fmt.Fprintf(c.App.Writer, "store %s now trusts %s\n", store.Path, key)
	} else {
		fmt.Fprintf(c.App.Writer, "store %s no longer trusts %s\n", store.Path, key)
	}
	return nil
}

func listTrust(g globals, w io.Writer) error {
	keys, bad, err := signing.ReadTrusted(pipeline.TrustedKeysPath(g.store))
	if err != nil {
		return err
	}
	noteUntrustedLines(g.notes, bad)
	if own, err := signing.Load(g.key); err == nil {
		fmt.Fprintf(w, "%s (your own key, %s)\n", own.Public(), own.Path)
	}
	for _, k := range keys {
		fmt.Fprintln(w, k)
	}
	if len(keys) == 0 {
		fmt.Fprintf(w, "(store %s trusts no other key: `ump trust add KEY` adds a collaborator's)\n", g.store)
	}
	return nil
}

// writeTrusted makes the trusted-keys file at path list keys (signing.WriteTrusted).
func writeTrusted(path string, keys []string) error {
	if err := signing.WriteTrusted(path, keys); err != nil {
		return fmt.Errorf("%w: %w", eventlog.ErrUnavailable, err)
	}
	return nil
}

// noteUntrustedLines says on w (nil: nowhere) of each line of the
// trusted-keys file that is not a public key that it trusts no one, and
// how it goes.
func noteUntrustedLines(w io.Writer, bad []error) {
	if w == nil {
		return
	}
	for _, err := range bad {
		fmt.Fprintf(
			w,
			"note: %v; it trusts no one (the next `ump trust add` or `ump trust remove` rewrites the file without "+
				"it)\n",
			err,
		)
	}
}
