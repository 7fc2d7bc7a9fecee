package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/durable"
	"github.com/urfave/cli/v2"
)

func submitCommand() *cli.Command {
	return &cli.Command{
		Name: "submit",
		Usage: "run a manifest on a Slurm or Kubernetes cluster: store its worklist on S3 and write the job that " +
			"runs `ump worker` per task",
		ArgsUsage: "MANIFEST.yaml | EMBEDDED-NAME [PATH=VALUE ...]",
		Description: "Needs --artifacts s3://BUCKET/PREFIX: S3 is the only state the machines share.\n" +
			"Prints `run <id>` and writes an sbatch array script (--slurm) or a Kubernetes Indexed Job\n" +
			"(--k8s) to --out. Each task runs `ump worker --run <id>`; a cell is committed once however\n" +
			"often its task runs, and a task requeued or preempted resumes from its last checkpoint on S3.\n" +
			"`ump status --remote HASH` shows progress; `ump pull HASH` brings the " +
			"results home.\nSee docs/cluster.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "slurm", Usage: "write an sbatch array script"},
			&cli.BoolFlag{Name: "k8s", Usage: "write a Kubernetes Indexed Job"},
			&cli.IntFlag{
				Name: "cells-per-task",
				Usage: "cells each task runs, one after another (default: 1, or more to keep " +
					"a Slurm array under 1,000 tasks)",
			},
			&cli.BoolFlag{Name: "only-missing", Usage: "leave out the cells already committed on S3"},
			&cli.BoolFlag{Name: "now", Usage: "submit the Slurm script with sbatch at once"},
			&cli.StringFlag{
				Name:  "out",
				Usage: "write the script or Job to `FILE` (- for stdout; default ump-RUN.sbatch or ump-RUN.yaml)",
			},
			&cli.StringSliceFlag{
				Name: "sbatch-option",
				Usage: "add `OPTION` to the script as an #SBATCH line (e.g. --partition=gpu, " +
					"--gres=gpu:1, --time=12:00:00)",
			},
			&cli.StringFlag{
				Name:  "image",
				Usage: "the container `IMAGE` with ump (and the data sets at $UMP_DATA) for --k8s",
			},
			&cli.StringFlag{
				Name:  "secret",
				Value: "ump-s3",
				Usage: "the Kubernetes Secret `NAME` whose keys become the worker's environment " +
					"(UMP_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)",
			},
			&cli.StringFlag{
				Name:  "key-secret",
				Value: "ump-key",
				Usage: "the Kubernetes Secret `NAME` holding your signing key as signing-key, " +
					"with which the workers sign their commits (kubectl create secret generic ump-key " +
					"--from-file=signing-key=KEYFILE)",
			},
			&cli.IntFlag{Name: "parallelism", Usage: "pods that run at once for --k8s (default: every task)"},
			engineFlag, scaleFlag, trustUnsignedFlag,
		},
		Action: func(c *cli.Context) error {
			opts := submitOptions{
				slurm:       c.Bool("slurm"),
				k8s:         c.Bool("k8s"),
				perTask:     c.Int("cells-per-task"),
				onlyMissing: c.Bool("only-missing"),
				now: c.Bool(
					"now",
				),
				out:         c.String("out"),
				sbatch:      c.StringSlice("sbatch-option"),
				image:       c.String("image"),
				secret:      c.String("secret"),
				keySecret:   c.String("key-secret"),
				parallelism: c.Int("parallelism"),
			}
			var err error
			if opts.run, err = runOptionsOf(c); err != nil {
				return err
			}
			return runSubmit(c.Context, globalsOf(c), opts, c.App.Writer, c.App.ErrWriter)
		},
	}
}

type submitOptions struct {
	slurm, k8s, onlyMissing, now  bool
	perTask, parallelism          int
	out, image, secret, keySecret string
	sbatch                        []string
	run                           runOptions
}

// check refuses flags that do not fit together, before anything is stored.
func (o *submitOptions) check(g globals) error {
	switch {
	case o.slurm == o.k8s:
		return badInput{fmt.Errorf("submit needs exactly one of --slurm and --k8s")}
	case g.artifacts == "":
		return badInput{
			fmt.Errorf(
				"submit needs --artifacts s3://BUCKET/PREFIX (or UMP_ARTIFACTS): S3 is " +
					"the only state the machines share",
			),
		}
	case o.perTask < 0:
		return badInput{fmt.Errorf("--cells-per-task %d: use a number of cells >= 1", o.perTask)}
	case o.now && !o.slurm:
		return badInput{
			fmt.Errorf("--now submits with sbatch: use it with --slurm (apply a Kubernetes Job with kubectl apply -f)"),
		}
	case o.k8s && o.image == "":
		return badInput{fmt.Errorf("--k8s needs --image: a container image with ump on its PATH")}
	case o.parallelism < 0:
		return badInput{fmt.Errorf("--parallelism %d: use a number of pods >= 1", o.parallelism)}
	}
	for _, opt := range o.sbatch {
		if !strings.HasPrefix(opt, "-") || strings.ContainsAny(opt, "\n\r") {
			return badInput{fmt.Errorf("--sbatch-option %q: give one sbatch option such as --partition=gpu", opt)}
		}
	}
	if o.out != "" && o.out != "-" {
		if err := durable.CheckOut(o.out); err != nil {
			return badInput{fmt.Errorf("--out: %w", err)}
		}
	}
	return nil
}

func runSubmit(ctx context.Context, g globals, opts submitOptions, stdout, stderr io.Writer) error {
	if err := opts.check(g); err != nil {
		return err
	}
	plan, _, err := openPlan(opts.run)
	if err != nil {
		return err
	}
	remote, err := g.remote(ctx, stderr)
	if err != nil {
		return err
	}
	done := map[int]bool{}
	if opts.onlyMissing {
		if done, err = remote.Committed(ctx, plan.Hash); err != nil {
			return err
		}
	}
	var cells []int
	for i := range plan.Cells {
		if !done[i] {
			cells = append(cells, i)
		}
	}
	if len(cells) == 0 {
		fmt.Fprintf(
			stdout,
			"every cell of manifest %s is committed on %s; nothing to submit (`%s pull %s` brings them home)\n",
			plan.Hash,
			remote.Bucket,
			g.ump,
			plan.Hash,
		)
		return nil
	}
	tasks, perTask, err := fleet.Split(cells, opts.perTask, opts.slurm)
	if err != nil {
		return err
	}
	wl := &fleet.Worklist{
		Plan:          *plan,
		Tasks:         tasks,
		Trusted:       remote.Trust.Keys(),
		TrustUnsigned: opts.run.trustUnsigned,
	}
	run, err := remote.Submit(ctx, wl)
	if err != nil {
		return err
	}
	job, err := opts.job(g, run, wl, perTask, remote)
	if err != nil {
		return err
	}
	text, ext, err := opts.script(job)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s\n", run)
	out := opts.out
	if out == "" {
		out = fmt.Sprintf("ump-%s.%s", job.Short, ext)
	}
	if out == "-" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	if err := durable.WriteOut(out, []byte(text)); err != nil {
		return badInput{fmt.Errorf("--out %s: %w", out, err)}
	}
	each := "one cell each"
	if perTask > 1 {
		each = fmt.Sprintf("up to %d cells each", perTask)
	}
	fmt.Fprintf(stdout, "wrote %s: %d tasks of %s (%d cells of manifest %s: `%s status --remote %s` follows them)\n",
		out, job.Tasks, each, len(cells), plan.Hash, g.ump, plan.Hash)
	if !opts.now {
		if opts.slurm {
			fmt.Fprintf(stdout, "submit it with: sbatch %s\n", out)
		} else {
			fmt.Fprintf(stdout, "submit it with: kubectl apply -f %s\n", out)
		}
		return nil
	}
	cmd := exec.CommandContext(ctx, "sbatch", out)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sbatch %s: %w (the run is stored; submit the script again when sbatch works)", out, err)
	}
	return nil
}

// script is the job's script (an sbatch script, or with --k8s a
// Kubernetes manifest) and its file's extension.
func (opts submitOptions) script(job *fleet.Job) (text, ext string, err error) {
	write, ext := job.Slurm, "sbatch"
	if opts.k8s {
		write, ext = job.Kubernetes, "yaml"
	}
	var b strings.Builder
	err = write(&b)
	return b.String(), ext, err
}

// job is the job that runs a submitted worklist's tasks as workers: this
// ump, with the user's key and S3 store.
func (opts submitOptions) job(
	g globals,
	run string,
	wl *fleet.Worklist,
	perTask int,
	remote *fleet.Remote,
) (*fleet.Job, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	key, err := filepath.Abs(remote.Signer.Path)
	if err != nil {
		return nil, err
	}
	cells := 0
	for _, t := range wl.Tasks {
		cells += len(t)
	}
	job := &fleet.Job{
		Run:     run,
		Short:   run[:12],
		Hash:    wl.Plan.Hash,
		Name:    wl.Plan.Manifest.Name,
		Cells:   cells,
		PerTask: perTask,
		Tasks: len(
			wl.Tasks,
		),
		LastTask:    len(wl.Tasks) - 1,
		Artifacts:   g.artifacts,
		Insecure:    g.insecure,
		Ump:         self,
		Key:         key,
		Sbatch:      opts.sbatch,
		Image:       opts.image,
		Secret:      opts.secret,
		KeySecret:   opts.keySecret,
		Parallelism: opts.parallelism,
		Requeue:     exitRequeue,
		Fail:        []int{exitBadInput, exitNondeterministic},
	}
	if job.Parallelism == 0 {
		job.Parallelism = job.Tasks
	}
	return job, nil
}
