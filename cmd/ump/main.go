package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/bounded"
	"github.com/ump-lab/ump/internal/cliargs"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/internal/durable"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/state"
	"github.com/urfave/cli/v2"
)

// Exit codes, documented in `ump help`.
const (
	exitOK               = 0
	exitCells            = 1 // a cell failed, verify found a mismatch, or another error
	exitBadInput         = 2
	exitStore            = 3
	exitNondeterministic = 4
	exitRequeue          = 75 // ump worker interrupted: the engine should run the task again
	exitInterrupted      = 130
)

const exitCodesHelp = `EXIT CODES:
   0    every cell completed or diverged (run), every output matched (verify), or the command succeeded
   1    some cell failed (a diverged cell is a result: exit 0), verify found a mismatch or a damaged
        blob it did not repair, or an unexpected error
   2    bad input: a manifest error (file, line and field are named), a bad flag or argument, an
        unknown hash, a table, column or figure no table has, a manifest over 1 MiB, a sweep over
        20,000 cells, a cell too large for the machine's memory,
        an engine or data that differ from those the manifest's cell keys were pinned with on S3,
        results recorded under another engine and no --other-engine saying what to do with them,
        a data set not fetched (ump data fetch NAME), a signing key others can read or that does not
        parse, a public key that does not parse, an --out that names a link, a directory, a device
        or a FIFO, help for an unknown command
   3    the store or the S3 store is damaged or unavailable: another process holds it (its PID is
        named), it is damaged or not a store (what and how to recover are named), a blob its events
        name is missing or corrupt, it cannot be read or written, its disk is full, the S3 server
        does not answer, refuses the credentials, lacks the bucket or ignores create-only writes, or
        a pull found pushed events that are not the manifest's own or a commit not signed by a key
        the store trusts (ump trust add KEY), or standard output could not be written (/dev/full)
   4    a cell's outputs differ from those another machine committed for the same cell key
        (push, run --artifacts, worker): the engine is not deterministic there
   75   ump worker was interrupted (SIGTERM) after saving a checkpoint: run the task again to resume
   130  interrupted (Ctrl-C or SIGTERM) at a safe point; rerun the same command to resume`

// badInput marks errors in what the user gave.
type badInput struct{ error }

func (e badInput) Unwrap() error { return e.error }

// errCells reports that some cells failed.
var errCells = errors.New("some cells failed")

func main() {
	// XLA and cuBLAS read their settings from the environment when they
	// load: set the GPU engine's, before any.
	gpu.SetEnvironment()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	code := run(ctx, os.Args, stdoutThatOutlivesItsReader(), os.Stderr)
	stop()
	os.Exit(code)
}

// stdoutThatOutlivesItsReader is standard output on a descriptor of its
// own: Go ends a process that writes to a closed pipe on descriptor 1
// (`ump run M | head -1`) at once, holding its store; on another, the
// write fails (EPIPE) and ump finishes as it would, closing the store.
func stdoutThatOutlivesItsReader() io.Writer {
	fd, err := syscall.Dup(1)
	if err != nil {
		return os.Stdout
	}
	syscall.CloseOnExec(fd)
	return &leftOutput{f: os.NewFile(uintptr(fd), "/dev/stdout")}
}

// leftOutput is an output whose reader may leave (a closed pipe), which
// it remembers, as it remembers the first other write that failed (a full
// disk, /dev/full): then what ump printed was lost.
type leftOutput struct {
	f    *os.File
	left bool
	lost error
}

func (o *leftOutput) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	switch {
	case errors.Is(err, syscall.EPIPE):
		o.left = true
	case err != nil && o.lost == nil:
		o.lost = err
	}
	return n, err
}

// errOutputLost is a command that ran but whose standard output could not
// be written: it did not succeed for whoever reads it (exit 3).
var errOutputLost = errors.New("standard output lost")

// outputLost is err, or where w's writes failed and err is nil or that
// failure, the error that says the output was lost.
func outputLost(w io.Writer, err error) error {
	if o, ok := w.(*leftOutput); ok && o.lost != nil && (err == nil || errors.Is(err, o.lost)) {
		return fmt.Errorf("%w: %v; what ump printed did not reach it (free space, or write it elsewhere)",
			errOutputLost, o.lost)
	}
	return err
}

// readerLeft reports whether w is an output whose reader left.
func readerLeft(w io.Writer) bool {
	o, ok := w.(*leftOutput)
	return ok && o.left
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil { // a bug: say so, and keep exit 2 for bad input
			fmt.Fprintf(
				stderr,
				"ump: internal error (a bug in ump; please report it with this message): %v\n%s",
				r,
				debug.Stack(),
			)
			code = exitCells
		}
	}()
	if err := cpu.UseKernelsFromEnv(); err != nil {
		fmt.Fprintln(stderr, "ump:", err)
		return exitCode(badInput{err})
	}
	app := newApp(args[0], stdout, stderr)
	hoisted, ordered := cliargs.FlagsFirst(app.Flags, nil, app.Commands, args[1:])
	err := app.RunContext(ctx, slices.Concat(args[:1:1], hoisted, ordered))
	err = outputLost(stdout, err)
	if err == nil ||
		readerLeft(stdout) && errors.Is(err, syscall.EPIPE) { // the output's reader left (| head): nothing to say
		return exitOK
	}
	inv, ok := app.Metadata[invocationKey].(string) // unset where the global flags did not parse
	if !ok {
		inv = program(args[0])
	}
	if !errors.Is(err, errCells) { // an error may quote a file: no control character reaches the terminal
		lines := strings.Split(asRun(err.Error(), inv), "\n")
		for i, l := range lines {
			lines[i] = display.Terminal(l)
		}
		fmt.Fprintln(stderr, "ump:", strings.Join(lines, "\n"))
	}
	if errors.Is(err, syscall.ENOSPC) {
		fmt.Fprintln(
			stderr,
			asRun(
				"ump: the disk is full; the store is consistent: free space (`ump gc` removes unreferenced blobs) "+
					"and rerun the same command to resume",
				inv,
			),
		)
	}
	return exitCode(err)
}

// exitClasses gives each error identity its exit code. An error is
// classed by what its chain holds, wherever it was wrapped; one holding
// several identities takes the first class listed.
var exitClasses = []struct {
	code int
	is   func(error) bool
}{
	{exitNondeterministic, isAny(fleet.ErrNondeterministic)},
	{
		exitStore,
		isAny(eventlog.ErrBusy, eventlog.ErrDamaged, eventlog.ErrNotStore, eventlog.ErrUnavailable, fleet.ErrRejected,
			artifacts.ErrUnavailable, artifacts.ErrNotFound, artifacts.ErrCorrupt, signing.ErrUntrusted, syscall.ENOSPC,
			datasets.ErrUnreachable, errOutputLost),
	},
	{exitBadInput, func(err error) bool { // cli.ExitCoder: urfave/cli's own usage errors (help for an unknown command)
		return errors.As(err, new(*manifests.Error)) || errors.As(err, new(badInput)) ||
			errors.As(err, new(cliargs.Error)) ||
			errors.As(err, new(cli.ExitCoder)) ||
			isAny(
				state.ErrBadArgument,
				eventlog.ErrNotDirectory,
				fleet.ErrEngineMismatch,
				pipeline.ErrOtherEngine,
				datasets.ErrNotInstalled,
				signing.ErrBadKey,
				stages.ErrBadInput,
				durable.ErrNotReplaceable,
				bounded.ErrNotRegular,
				bounded.ErrTooLarge,
			)(
				err,
			)
	}},
	{exitRequeue, func(err error) bool { return errors.As(err, new(requeue)) }},
	{exitInterrupted, isAny(pipeline.ErrInterrupted)},
}

// exitCode is err's exit code (exitClasses); exitCells for any other.
func exitCode(err error) int {
	for _, c := range exitClasses {
		if c.is(err) {
			return c.code
		}
	}
	return exitCells
}

func isAny(targets ...error) func(error) bool {
	return func(err error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
}

// findStore is the store ump uses where none is named (def, ./.ump):
// def where it is a store or no parent directory holds one, else the
// nearest parent's .ump that is a store, as git finds its repository.
func findStore(def string) string {
	if eventlog.IsStore(def) {
		return def
	}
	dir, err := os.Getwd()
	if err != nil {
		return def
	}
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return def
		}
		dir = parent
		if candidate := filepath.Join(dir, ".ump"); eventlog.IsStore(candidate) {
			return candidate
		}
	}
}

// globals are the options every command shares.
type globals struct {
	store     string
	data      *datasets.Library
	artifacts string // s3://BUCKET/PREFIX, or "" for the store's own blobs
	insecure  bool
	notes     io.Writer // stderr: says when a reader runs beside a writer; nil for none
	device    *gpu.Device
	exact     bool   // the CPU engine's cells train on device, in the exact program
	ump       string // the program and the global flags given, for hints that rerun a command
	key       string // this user's signing key file
}

func globalsOf(c *cli.Context) globals {
	return globals{store: c.String("store"), data: datasets.NewLibrary(c.String("data-dir")),
		artifacts: c.String("artifacts"), insecure: c.Bool("s3-insecure"), notes: c.App.ErrWriter,
		device: gpu.NewDevice(
			c.String("gpu-backend"),
		), exact: c.Bool("exact-gpu"), ump: invocation(c), key: c.String("key")}
}

// programKey keys, in the app's Metadata, the program as a hint names it;
// invocationKey, the program with the global flags given (invocation).
const (
	programKey    = "program"
	invocationKey = "invocation"
)

// asRun makes each command that s names in backquotes (`ump gc`,
// written so by the packages below, which cannot know how ump was run) name
// ump as it was run, with its global flags (invocation), so that pasted
// it sees the same store, data and key.
func asRun(s, invocation string) string {
	return strings.ReplaceAll(s, "`ump ", "`"+invocation+" ")
}

// hinted is s with its commands named as ump was run (asRun).
func (g globals) hinted(s string) string {
	return asRun(s, g.ump)
}

// program is how a hint names ump, run as arg0: as it was run, so that
// the hint runs the same binary (`make run` runs ./bin/ump, which is not
// on the PATH; `make build-gpu` makes bin/ump-gpu), by its absolute path
// where it was run by a relative one, so that the hint runs pasted in
// any directory.
func program(arg0 string) string {
	if arg0 == "" {
		return "ump"
	}
	if strings.Contains(arg0, "/") {
		arg0 = absolute(arg0)
	}
	return display.Shell(arg0)
}

// pathFlags are the global flags that name a file or directory: a hint
// names them by absolute paths. The store's is named even where it was
// not given (its default, ./.ump, is the working directory's).
var pathFlags = map[string]bool{"store": true, "data-dir": true, "key": true}

// invocation is the program with the global flags c was given (or their
// environment variables set), and the store, as a hint that reruns the
// command needs them in any directory.
func invocation(c *cli.Context) string {
	parts := []string{c.App.Metadata[programKey].(string)}
	for _, f := range c.App.Flags {
		name := f.Names()[0]
		switch _, boolean := f.(*cli.BoolFlag); {
		case !c.IsSet(name) && name != "store":
		case boolean:
			parts = append(parts, "--"+name)
		case pathFlags[name]:
			parts = append(parts, "--"+name, display.Shell(absolute(c.String(name))))
		default:
			parts = append(parts, "--"+name, display.Shell(c.String(name)))
		}
	}
	return strings.Join(parts, " ")
}

// absolute is path made absolute against the working directory (as it
// is where that cannot be known).
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// s3 connects to the S3 artifact store named by --artifacts, checking it
// first (endpoint, credentials, bucket, a probe write).
func (g globals) s3(ctx context.Context) (*artifacts.S3, error) {
	if g.artifacts == "" {
		return nil, badInput{fmt.Errorf("no S3 artifact store: set --artifacts s3://BUCKET/PREFIX (or UMP_ARTIFACTS)")}
	}
	var timeout time.Duration
	if v := os.Getenv("UMP_S3_TIMEOUT"); v != "" {
		var err error
		if timeout, err = time.ParseDuration(v); err != nil || timeout <= 0 {
			return nil, badInput{fmt.Errorf("UMP_S3_TIMEOUT=%q: want a positive duration such as 30s or 2m", v)}
		}
	}
	return artifacts.OpenS3(ctx, artifacts.S3Config{URL: g.artifacts, Endpoint: os.Getenv("UMP_S3_ENDPOINT"),
		AccessKey: os.Getenv(
			"AWS_ACCESS_KEY_ID",
		), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), Insecure: g.insecure, Timeout: timeout})
}

// remote connects to the S3 store of --artifacts for writing what runs on
// many machines share (fleet.Remote), after checking that the server
// honours create-only writes, on which commits rely. It signs with this
// user's key (created on first need, said on stderr) and trusts what the
// store does (trust).
func (g globals) remote(ctx context.Context, stderr io.Writer) (*fleet.Remote, error) {
	key, created, err := signing.LoadOrCreate(g.key)
	if err != nil {
		return nil, err
	}
	if created {
		fmt.Fprintf(
			stderr,
			"ump: created your signing key %s; it signs what you commit to S3. Collaborators who pull your results "+
				"run:\n"+
				"  ump trust add %s\n",
			key.Path,
			key.Public(),
		)
	}
	trust, err := g.trust(false)
	if err != nil {
		return nil, err
	}
	s3, err := g.s3(ctx)
	if err != nil {
		return nil, err
	}
	if err := s3.CheckCreateOnly(ctx, "probes/create-only"); err != nil {
		return nil, err
	}
	return fleet.NewRemote(s3, key, trust), nil
}

// reader connects to the S3 store of --artifacts for reading what runs
// share, trusting what the store does (trust).
func (g globals) reader(ctx context.Context, unsigned bool) (*fleet.Remote, error) {
	trust, err := g.trust(unsigned)
	if err != nil {
		return nil, err
	}
	s3, err := g.s3(ctx)
	if err != nil {
		return nil, err
	}
	return fleet.NewRemote(s3, nil, trust), nil
}

// trust is the set of keys whose signed commits the store accepts: this
// user's own (when it has one) and those `ump trust add` listed.
func (g globals) trust(unsigned bool) (*signing.Trust, error) {
	keys, bad, err := signing.ReadTrusted(pipeline.TrustedKeysPath(g.store))
	if err != nil {
		return nil, err
	}
	noteUntrustedLines(g.notes, bad)
	own, err := signing.Load(g.key)
	if err == nil {
		keys = append(keys, own.Public())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	trust, err := signing.NewTrust(keys...)
	if err != nil {
		return nil, err
	}
	trust.Unsigned = unsigned
	return trust, nil
}

// useArtifacts points the store's blobs at the S3 store when --artifacts
// is set.
func useArtifacts(ctx context.Context, g globals, store *pipeline.Store) error {
	if g.artifacts == "" {
		return nil
	}
	s3, err := g.s3(ctx)
	if err != nil {
		return err
	}
	store.Blobs = s3
	return nil
}

// newApp is ump's command line, run as arg0.
func newApp(arg0 string, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:     "ump",
		Metadata: map[string]any{programKey: program(arg0)},
		Usage:    "reproducible decentralized-SGD sweeps (D-SUM, GT-DSUM and baselines)",
		Description: "A manifest declares a sweep; every cell runs partition, topology, train and evaluate;\n" +
			"every stage is recorded in the store's event log and cached by its inputs.\n\n" + exitCodesHelp,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Value: "./.ump", EnvVars: []string{"UMP_STORE"},
				Usage: "the store `DIR` (event log, blobs); without it, ./.ump or the nearest .ump store above"},
			&cli.StringFlag{Name: "data-dir", Value: datasets.DefaultDir(), EnvVars: []string{"UMP_DATA"},
				Usage: "the data `DIR`, one subdirectory per data set (ump data fetch fills it)"},
			&cli.StringFlag{Name: "artifacts", EnvVars: []string{"UMP_ARTIFACTS"},
				Usage: "keep artifacts in S3 at `s3://BUCKET/PREFIX` (endpoint from " +
					"UMP_S3_ENDPOINT, credentials from " +
					"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, each request's time limit from UMP_S3_TIMEOUT, " +
					"default 1m); the event log stays in --store"},
			&cli.BoolFlag{Name: "s3-insecure", Usage: "talk to the S3 endpoint over plain HTTP"},
			&cli.StringFlag{Name: "key", Value: signing.DefaultPath(), EnvVars: []string{"UMP_KEY"},
				Usage: "your signing key `FILE`: it signs what you commit to S3 (created on first need; `ump key " +
					"show` prints its public half)"},
			&cli.StringFlag{Name: "gpu-backend", EnvVars: []string{"GOMLX_BACKEND"},
				Usage: "the GoMLX `BACKEND` GPU cells train on: xla:/abs/path/xla_cuda_plugin.so, or go for GoMLX's " +
					"pure-Go backend (default: the CUDA PJRT plugin of an installed jax-cuda package)"},
			&cli.BoolFlag{
				Name: "exact-gpu",
				Usage: "train the CPU engine's cells on the GPU in the exact program: its bits, " +
					"under its cell keys (docs/gpu.md)",
			},
		},
		Commands: []*cli.Command{runCommand(), statusCommand(), showCommand(), exportCommand(), verifyCommand(),
			dataCommand(), pushCommand(), pullCommand(), importCommand(), submitCommand(), workerCommand(),
			keyCommand(), trustCommand(), noteCommand(), forgetCommand(), diffCommand(), tableCommand(),
			plotCommand(), reportCommand(), compareCommand(), reproduceCommand(), serveCommand(), gcCommand(),
			doctorCommand()},
		Before: func(c *cli.Context) error {
			if !c.IsSet("store") { // as git finds its repository
				if found := findStore(c.String("store")); found != c.String("store") {
					fmt.Fprintf(c.App.ErrWriter, "using the store %s (found above the working directory)\n", found)
					if err := c.Set("store", found); err != nil {
						return err
					}
				}
			}
			c.App.Metadata[invocationKey] = invocation(c) // for the hints in errors (run)
			return nil
		},
		ExitErrHandler: func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError:   cliargs.UsageError,
		Version:        state.Version(),
		Suggest:        true, // "Did you mean …?" for a misspelt command or flag
	}
	cli.VersionFlag = &cli.BoolFlag{
		Name:  "version",
		Usage: "print ump's version and the VCS revision it was built from",
	}
	cliargs.CheckFlags(app.Commands)
	return app
}

// oneArg returns the single positional argument a command needs.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", badInput{fmt.Errorf("%s needs exactly one argument, %s (got %d)", c.Command.Name, what, c.NArg())}
	}
	return c.Args().First(), nil
}

// storeThere refuses a store directory that is not there, saying where ump
// looked.
func (g globals) storeThere() error {
	if _, err := os.Stat(g.store); err != nil {
		return badInput{fmt.Errorf("no store at %s, nor a .ump store in a directory above "+
			"(set --store or UMP_STORE; `ump run` creates one)", g.store)}
	}
	return nil
}

// openStore opens an existing store, with its artifacts where --artifacts
// says: holding it (pipeline.Open), or for a reading command beside a run
// that holds it (pipeline.OpenReader), which it notes on g.notes.
func openStore(ctx context.Context, g globals, command string, beside bool) (*pipeline.Store, error) {
	if err := g.storeThere(); err != nil {
		return nil, err
	}
	var store *pipeline.Store
	var err error
	if beside {
		store, err = pipeline.OpenReader(g.store)
	} else {
		store, err = pipeline.Open(g.store, command)
	}
	if err != nil {
		return nil, err
	}
	if store.Note != "" && g.notes != nil {
		fmt.Fprintln(g.notes, g.hinted(store.Note))
	}
	if err := useArtifacts(ctx, g, store); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// openQuiet opens the store for a command that only reads it but needs
// every event, not a running writer's prefix: OpenReader, refused beside
// a run.
func openQuiet(ctx context.Context, g globals, command string) (*pipeline.Store, error) {
	store, err := openStore(ctx, g, command, true)
	if err != nil {
		return nil, err
	}
	if store.Beside != "" {
		store.Close()
		return nil, fmt.Errorf(
			"%w: store %s is in use by %s; %s when it has finished",
			eventlog.ErrBusy,
			g.store,
			store.Beside,
			command,
		)
	}
	return store, nil
}

// openReport opens the store beside any run and folds the events of the manifest whose
// hash is or starts with hash. The caller closes the store.
func openReport(ctx context.Context, g globals, hash, command string) (*pipeline.Store, *state.Report, error) {
	store, err := openStore(ctx, g, command, true)
	if err != nil {
		return nil, nil, err
	}
	rep, err := store.Source().FindReport(hash)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, rep, nil
}
