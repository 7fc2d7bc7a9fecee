package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/signing"
	"github.com/urfave/cli/v2"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run one task of a submitted run (`ump submit`) on this machine, with S3 as the only shared state",
		Description: "The task is --index, else $SLURM_ARRAY_TASK_ID, else $JOB_COMPLETION_INDEX.\n" +
			"The worker keeps a private event log in a temporary directory (--store is not used)\n" +
			"and its artifacts in --artifacts. Each cell starts from what S3 holds of it (a committed\n" +
			"cell is all cache hits; otherwise the furthest checkpoint any attempt uploaded), uploads\n" +
			"its events at every checkpoint, and commits its result once.\n" +
			"Exit codes: 0 every cell committed (by this task or, with the same outputs, by another);\n" +
			"75 interrupted by SIGTERM after saving a checkpoint (run the task again); 4 another attempt\n" +
			"committed other outputs; 2 bad input (a cell's engine or data differ from those pinned on S3);\n" +
			"3 S3 or the local disk failed.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run `ID` that `ump submit` printed"},
			&cli.StringFlag{
				Name:  "index",
				Usage: "the task `I` to run, from 0 (default: $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX)",
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return badInput{
					fmt.Errorf("worker takes no arguments (got %q); name the run with --run", c.Args().Slice()),
				}
			}
			return runWorker(c.Context, globalsOf(c), c.String("run"), c.String("index"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

// requeue marks a worker interrupted at a safe point: the engine should
// run the task again (exitRequeue).
type requeue struct{ error }

func (e requeue) Unwrap() error { return e.error }

// taskIndex is the worker's task: the flag, else the engine's variable.
func taskIndex(flag string, tasks int) (int, error) {
	value, from := flag, "--index"
	for _, env := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
		if value != "" {
			break
		}
		value, from = os.Getenv(env), "$"+env
	}
	if value == "" {
		return 0, badInput{
			errors.New(
				"no task index: give --index I, or run under a Slurm array ($SLURM_ARRAY_TASK_ID) or a Kubernetes " +
					"Indexed Job ($JOB_COMPLETION_INDEX)",
			),
		}
	}
	i, err := strconv.Atoi(value)
	if err != nil || i < 0 || i >= tasks {
		return 0, badInput{fmt.Errorf("%s=%q: the run has tasks 0 to %d", from, value, tasks-1)}
	}
	return i, nil
}

func runWorker(ctx context.Context, g globals, run, index string, stdout, stderr io.Writer) error {
	remote, err := g.remote(ctx, stderr)
	if err != nil {
		return err
	}
	wl, err := remote.Worklist(ctx, run)
	if err != nil {
		return err
	}
	task, err := taskIndex(index, len(wl.Tasks))
	if err != nil {
		return err
	}
	// The worker trusts its own key and what the submitting store trusted
	// (--store is not the worker's).
	if remote.Trust, err = signing.NewTrust(append(wl.Trusted, remote.Signer.Public())...); err != nil {
		return fmt.Errorf("%w: the run's trusted keys: %w", fleet.ErrRejected, err)
	}
	remote.Trust.Unsigned = wl.TrustUnsigned
	dir, err := os.MkdirTemp("", "ump-worker-")
	if err != nil {
		return fmt.Errorf("%w: the worker's scratch store: %w", eventlog.ErrUnavailable, err)
	}
	defer os.RemoveAll(dir)
	store, err := pipeline.Open(dir, fmt.Sprintf("ump worker --run %.12s --index %d", run, task))
	if err != nil {
		return err
	}
	defer store.Close()
	store.Blobs = remote.Bucket
	cells := wl.Tasks[task]
	fmt.Fprintf(
		stderr,
		"run %.12s task %d: %d cells of manifest %.12s, attempt %s\n",
		run,
		task,
		len(cells),
		wl.Plan.Hash,
		remote.Attempt,
	)
	runner := g.runner(store, stderr)
	runner.Cells, runner.Fleet = cells, remote
	out, err := runner.Run(ctx, &wl.Plan)
	if errors.Is(err, pipeline.ErrInterrupted) {
		fmt.Fprintf(
			stderr,
			"stopped at a safe point with its checkpoint on S3; run the task again to resume (exit %d)\n",
			exitRequeue,
		)
		return requeue{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(
		stdout,
		"run %.12s task %d: %d cells: %d completed, %d diverged, %d failed\n",
		run,
		task,
		out.Cells,
		out.Completed,
		out.Diverged,
		out.Failed,
	)
	if out.Failed > 0 {
		return errCells
	}
	return nil
}
