package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report"
	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run every cell of a manifest (cached stages are skipped, interrupted training resumes)",
		ArgsUsage: "MANIFEST.yaml | EMBEDDED-NAME [PATH=VALUE ...]",
		Description: "Prints `manifest <hash>` as the first line of stdout, progress on stderr, and at the\n" +
			"end the final metrics of every cell (diverged cells show *) and the manifest's table\n" +
			"(as `ump table HASH` prints it). Each PATH=VALUE overrides a field of the manifest as if the file\n" +
			"said it (e.g. lr=0.1, algorithm.beta=0.5, sweep.seed=[1,2,3]): validated like the file, part of the hash.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name: "until",
				Usage: "run each cell's stages up to and including `STAGE` (partition, topology, train), " +
					"to inspect them with `ump show` before training; a plain rerun continues from there",
			},
			engineFlag, cohortFlag, scaleFlag, trustUnsignedFlag,
			&cli.IntFlag{
				Name:    "jobs",
				Aliases: []string{"j"},
				Value:   1,
				Usage: "run `N` cells at once (those not in a GPU cohort), each " +
					"engine on its share of the cores; results are bit-identical to one at a time",
			},
			&cli.StringFlag{
				Name: "other-engine",
				Usage: "what to do with cells that have results recorded under another engine (an earlier CPU " +
					"engine version, or another GPU " +
					"backend: the engine is part of each cell's key): `CHOICE` is use (keep them) or recompute (run " +
					"them on this one); by default ump stops and says so",
			},
			&cli.IntFlag{
				Name: "until-decided",
				Usage: "then add seeds, one at a time and up to `N` per choice, to the entries " +
					"whose choice of table.select is " +
					"within the noise (the chosen and the runner-up's cells, as the manifest's add block), " +
					"until each is decided or has N",
			},
		},
		Action: func(c *cli.Context) error {
			opts, err := runOptionsOf(c)
			if err != nil {
				return err
			}
			return runRun(c.Context, globalsOf(c), opts, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// The flags `ump run` shares with `ump submit`.
var (
	engineFlag = &cli.StringFlag{
		Name: "engine",
		Usage: "train data-set cells on `ENGINE` (cpu or gpu), as if the manifest said engine: ENGINE " +
			"(part of the hash; gpu needs a build with -tags xla, see `ump doctor`)",
	}
	cohortFlag = &cli.IntFlag{
		Name: "cohort",
		Usage: "train up to `N` GPU cells that share their shapes at once, in one device program " +
			"(default: as many as half the GPU's memory holds; results do not depend on it)",
	}
	scaleFlag = &cli.Float64Flag{
		Name:  "scale",
		Value: 1,
		Usage: "run every cell for rounds x `SCALE` rounds (a number in (0, 1]), as if the manifest said " +
			"scale: SCALE (part of the hash), for a quick look",
	}
	trustUnsignedFlag = &cli.BoolFlag{
		Name: "trust-unsigned",
		Usage: "with --artifacts, also resume from commits and uploads on S3 that carry no " +
			"signature (an ump from before signing wrote them); their results then count for this manifest alone",
	}
)

// runOptionsOf reads the flags of `ump run` (and those of them `ump
// submit` has).
func runOptionsOf(c *cli.Context) (runOptions, error) {
	opts := runOptions{
		until:         c.String("until"),
		engine:        c.String("engine"),
		cohort:        c.Int("cohort"),
		otherEngine:   c.String("other-engine"),
		trustUnsigned: c.Bool("trust-unsigned"),
		untilDecided:  c.Int("until-decided"),
	}
	if c.IsSet("until-decided") && opts.untilDecided < 1 || opts.untilDecided > 0 && opts.until != "" {
		return opts, badInput{
			fmt.Errorf("--until-decided %d: give a number of seeds >= 1, without --until", opts.untilDecided),
		}
	}
	if c.IsSet("jobs") {
		if opts.jobs = c.Int("jobs"); opts.jobs < 1 {
			return opts, badInput{fmt.Errorf("--jobs %d: use a number of cells >= 1", opts.jobs)}
		}
	}
	if o := opts.otherEngine; o != "" && o != "use" && o != "recompute" {
		return opts, badInput{fmt.Errorf("--other-engine %q: use `use` or `recompute`", o)}
	}
	if c.NArg() == 0 {
		return opts, badInput{
			fmt.Errorf(
				"%s needs the manifest file (or an embedded name), then any overrides PATH=VALUE",
				c.Command.Name,
			),
		}
	}
	opts.path, opts.overrides = c.Args().First(), c.Args().Tail()
	for _, ov := range opts.overrides {
		if !strings.Contains(ov, "=") {
			return opts, badInput{
				fmt.Errorf(
					"%s takes one manifest, then overrides PATH=VALUE; %q is neither (give one manifest per command)",
					c.Command.Name,
					ov,
				),
			}
		}
	}
	if opts.cohort < 0 {
		return opts, badInput{fmt.Errorf("--cohort %d: use a number of cells >= 1, or leave it out", opts.cohort)}
	}
	if c.IsSet("scale") {
		scale := c.Float64("scale")
		opts.scale = &scale
	}
	return opts, nil
}

// runOptions are the arguments and flags of `ump run`; zero values leave
// the manifest as it is.
type runOptions struct {
	path          string
	overrides     []string // PATH=VALUE
	until, engine string
	otherEngine   string
	trustUnsigned bool // resume from unsigned commits and uploads on S3
	scale         *float64
	cohort, jobs  int
	untilDecided  int // the most seeds --until-decided gives a choice; 0: off
}

// openPlan opens a manifest as its overrides, --engine and --scale change
// it, and returns the arguments that name this plan again.
func openPlan(opts runOptions) (*manifests.Plan, string, error) {
	plan, err := manifests.Open(opts.path, opts.overrides...)
	if err != nil {
		return nil, "", err
	}
	args := strings.Join(append([]string{opts.path}, display.ShellWords(opts.overrides)...), " ")
	if opts.engine != "" {
		if err := plan.SetEngine(opts.engine); err != nil {
			return nil, "", badInput{err}
		}
		args = "--engine " + opts.engine + " " + args
	}
	if opts.scale != nil {
		if err := plan.SetScale(*opts.scale); err != nil {
			return nil, "", badInput{err}
		}
		args = fmt.Sprintf("--scale %g %s", *opts.scale, args)
	}
	// The table block too is checked before anything is registered; its
	// labels against the manifest as its file says too (overrides may
	// narrow the sweep, leaving labels of rows it no longer has).
	plans := []*manifests.Plan{plan}
	if len(opts.overrides) > 0 {
		if base, err := manifests.Open(opts.path); err == nil {
			plans = append(plans, base)
		}
	}
	if err := report.CheckTable(plan, report.Layout(plan)); err != nil {
		return nil, "", fmt.Errorf("%s: %w", opts.path, err)
	}
	if err := report.CheckLabels(report.Layout(plan), plans...); err != nil {
		return nil, "", fmt.Errorf("%s: %w", opts.path, err)
	}
	return plan, args, nil
}

// howToRun is the flags of `ump run` that change how it runs, not what
// (-j, --cohort, --other-engine, --until-decided), each followed by a space, for a hint that
// reruns it as it ran.
func (o runOptions) howToRun() string {
	var flags string
	if o.jobs > 1 {
		flags += fmt.Sprintf("-j %d ", o.jobs)
	}
	if o.cohort > 0 {
		flags += fmt.Sprintf("--cohort %d ", o.cohort)
	}
	if o.otherEngine != "" {
		flags += "--other-engine " + o.otherEngine + " "
	}
	if o.untilDecided > 0 {
		flags += fmt.Sprintf("--until-decided %d ", o.untilDecided)
	}
	return flags
}

// changes lists what the options change from the manifest file, as
// overrides (Registration.Overrides).
func (o runOptions) changes() []string {
	changes := slices.Clone(o.overrides)
	if o.engine != "" {
		changes = append(changes, "engine="+o.engine)
	}
	if o.scale != nil {
		changes = append(changes, fmt.Sprintf("scale=%g", *o.scale))
	}
	return changes
}

func runRun(ctx context.Context, g globals, opts runOptions, stdout, stderr io.Writer) error {
	for k, ov := range opts.overrides {
		fmt.Fprintf(stderr, "override %d: %s\n", k+1, ov)
	}
	plan, rerun, err := openPlan(opts) // rerun: the arguments of `ump run` that rerun this
	if err != nil {
		return err
	}
	rerun = opts.howToRun() + rerun
	until := opts.until
	if err := pipeline.CheckUntil(g.cellStages(), until); err != nil {
		return badInput{err}
	}
	if err := g.gpuBuilt(plan); err != nil {
		return err
	}
	store, runner, err := g.openRun(ctx, opts, rerun, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx, stopWatching := watchStore(ctx, store)
	defer stopWatching()
	fmt.Fprintf(stdout, "manifest %s\n", plan.Hash)
	if cpu.Kernels() == "go" && usesCPUEngine(plan) {
		fmt.Fprintf(
			stderr,
			"note: the CPU engine runs its Go loops (kernel path go: UMP_KERNELS=go, a build without cgo, or a CPU "+
				"with neither AVX2 and FMA nor NEON), several times slower than its vector kernels; the numbers are "+
				"the same (`ump doctor` says more).\n",
		)
	}
	out, err := runner.Run(ctx, plan)
	if err == nil && opts.untilDecided > 0 {
		sd := &seeding{ump: g.ump, opts: opts, runner: runner, store: store, log: stderr}
		plan, out, err = sd.run(ctx, plan, out, rerun) // rerun stays the command as given: it adds the same seeds again
	}
	if removed := context.Cause(ctx); errors.Is(removed, eventlog.ErrUnavailable) {
		return removed
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "stopped at a safe point; rerun `%s run %s` to resume\n", g.ump, rerun)
		}
		return err
	}
	if until != "" {
		fmt.Fprintf(stderr, "%d cells ran up to %s (%d failed); `%s show %.12s` shows them, `%s run %s` continues\n",
			out.Cells, until, out.Failed, g.ump, plan.Hash, g.ump, rerun)
		if out.Failed > 0 {
			return errCells
		}
		return nil
	}
	fmt.Fprintf(stderr, "%d cells: %d completed, %d diverged, %d failed (%d fully cached)\n",
		out.Cells, out.Completed, out.Diverged, out.Failed, out.Cached)
	rep, err := store.Source().FindReport(plan.Hash)
	if err != nil {
		return err
	}
	figures, err := report.WriteFinal(ctx, stdout, store.Source(), rep)
	if err != nil {
		return err
	}
	if figures {
		fmt.Fprintf(
			stdout,
			"(every figure: %s export --manifest %.12s --table final --out final-%.12s.csv)\n",
			g.ump,
			rep.Plan.Hash,
			rep.Plan.Hash,
		)
	}
	grid, err := report.ReadGrid(ctx, store.Source(), rep, report.Layout(&rep.Plan))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ntable (%s table %.12s):\n%s", g.ump, rep.Plan.Hash, grid.Markdown())
	if out.Failed > 0 { // a diverged cell is a result (the paper's *), not a failure
		return errCells
	}
	return nil
}

// storeWatch is how often a run looks whether its store is still there.
const storeWatch = time.Second

// watchStore is ctx, cancelled with the store's Removed error where the
// store's directory goes away during the run (rm -rf, a moved disk), so
// that the run stops within seconds instead of writing into nothing; stop
// ends the watch.
func watchStore(ctx context.Context, store *pipeline.Store) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(storeWatch)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := store.Removed(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// openRun opens the store for a run and builds its runner as the options
// say, sharing the run through S3 with --artifacts.
func (g globals) openRun(
	ctx context.Context,
	opts runOptions,
	rerun string,
	stderr io.Writer,
) (*pipeline.Store, *pipeline.Runner, error) {
	store, err := pipeline.Open(g.store, "ump run "+rerun)
	if err != nil {
		return nil, nil, err
	}
	if store.Note != "" {
		fmt.Fprintln(stderr, g.hinted(store.Note))
	}
	runner := g.runner(store, stderr)
	runner.Until, runner.Cohort, runner.Jobs, runner.OtherEngine, runner.Overrides = opts.until, opts.cohort,
		opts.jobs, opts.otherEngine, opts.changes()
	if g.artifacts != "" { // each finished cell is committed there
		remote, err := g.remote(ctx, stderr)
		if err != nil {
			store.Close()
			return nil, nil, err
		}
		remote.Trust.Unsigned = opts.trustUnsigned
		store.Blobs, runner.Fleet = remote.Bucket, remote
	}
	runner.Blobs = store.Blobs
	return store, runner, nil
}

// gpuBuilt refuses, before anything runs, cells that train on the GPU (GPU cells, or with
// --exact-gpu the CPU engine's) on a build without it: a choice the user can change.
func (g globals) gpuBuilt(plan *manifests.Plan) error {
	for i, cell := range plan.Cells {
		if onGPU := cell.Config.OnGPU(); onGPU || (g.exact && cell.Config.Task.Kind().Samples) {
			if _, err := g.device.Name(); !errors.Is(err, gpu.ErrNoGPU) {
				return nil
			} else if onGPU {
				return badInput{fmt.Errorf("cell %d trains on the GPU engine (engine: gpu, or --engine gpu), and %w; "+
					"or run it on the CPU engine (--engine cpu)", i+1, err)}
			}
			return badInput{
				fmt.Errorf(
					"--exact-gpu trains cell %d on the GPU, and %w; or run it without --exact-gpu",
					i+1,
					gpu.ErrNoGPU,
				),
			}
		}
	}
	return nil
}

// usesCPUEngine reports whether some cell trains a model on the CPU
// engine (a task without samples does not use the CPU engine).
func usesCPUEngine(plan *manifests.Plan) bool {
	for i := range plan.Cells {
		if c := &plan.Cells[i].Config; c.Task.Kind().Samples && !c.OnGPU() {
			return true
		}
	}
	return false
}
