package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/urfave/cli/v2"
)

// Exit codes, documented in `ump help`.
const (
	exitOK          = 0
	exitCells       = 1 // a cell failed or diverged, verify found a mismatch, or another error
	exitBadInput    = 2
	exitStore       = 3
	exitInterrupted = 130
)

const exitCodesHelp = `EXIT CODES:
   0    every cell completed (run), every output matched (verify), or the command succeeded
   1    some cell failed or diverged, verify found a mismatch, or an unexpected error
   2    bad input: a manifest error (file, line and field are named), a bad flag, an unknown hash
   3    the store is unavailable: another process holds it (its PID is named) or it cannot be opened
   130  interrupted (Ctrl-C) at a safe point; rerun the same command to resume`

// badInput marks errors in what the user gave.
type badInput struct{ error }

func (e badInput) Unwrap() error { return e.error }

// errCells reports that some cells did not complete.
var errCells = errors.New("some cells failed or diverged")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errCells) {
		fmt.Fprintln(stderr, "ump:", err)
	}
	var merr *manifests.Error
	var bad badInput
	switch {
	case errors.As(err, &merr), errors.As(err, &bad):
		return exitBadInput
	case errors.Is(err, pipeline.ErrBusy):
		return exitStore
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted
	}
	return exitCells
}

// globals are the options every command shares.
type globals struct {
	store string
	data  *datasets.Library
}

func globalsOf(c *cli.Context) globals {
	return globals{store: c.String("store"), data: datasets.NewLibrary(c.String("data-dir"))}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "ump",
		Usage: "reproducible decentralized-SGD sweeps (D-SUM, GT-DSUM and baselines)",
		Description: "A manifest declares a sweep; every cell runs partition, topology, train and evaluate;\n" +
			"every stage is recorded in the store's event log and cached by its inputs.\n\n" + exitCodesHelp,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Value: "./.ump", EnvVars: []string{"UMP_STORE"},
				Usage: "store directory (event log, blobs)"},
			&cli.StringFlag{Name: "data-dir", Value: datasets.DefaultDir(), EnvVars: []string{"UMP_DATA"},
				Usage: "data directory, one subdirectory per data set (`ump data fetch` fills it)"},
		},
		Commands:       []*cli.Command{runCommand(), statusCommand(), showCommand(), exportCommand(), verifyCommand(), dataCommand()},
		ExitErrHandler: func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return badInput{fmt.Errorf("%w (see ump help %s)", err, c.Command.Name)}
		},
	}
}

// oneArg returns the single positional argument a command needs.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", badInput{fmt.Errorf("%s needs exactly one argument, %s (got %d)", c.Command.Name, what, c.NArg())}
	}
	return c.Args().First(), nil
}

// openStore opens an existing store for a reading command.
func openStore(g globals, command string) (*pipeline.Store, error) {
	if _, err := os.Stat(g.store); err != nil {
		return nil, badInput{fmt.Errorf("no store at %s (set --store or UMP_STORE; `ump run` creates one)", g.store)}
	}
	return pipeline.Open(g.store, command)
}

// findManifest resolves a hash (or unique prefix) to a registration.
func findManifest(s *pipeline.Store, hash string) (*pipeline.Registration, error) {
	reg, err := s.FindManifest(hash)
	if err != nil {
		return nil, badInput{err}
	}
	return reg, nil
}
