package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/ump-lab/ump/fleet"
	"github.com/urfave/cli/v2"
)

func submitCommand() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "run a manifest on a Slurm or Kubernetes cluster: store its worklist on S3 and write the job that runs `ump worker` per task",
		ArgsUsage: "MANIFEST.yaml | EMBEDDED-NAME [PATH=VALUE ...]",
		Description: "Needs --artifacts s3://BUCKET/PREFIX: S3 is the only state the machines share. Prints `run <id>`\n" +
			"and writes an sbatch array script (--slurm) or a Kubernetes Indexed Job (--k8s) to --out. Each task\n" +
			"runs `ump worker --run <id>`; a cell is committed once however often its task runs, and a task\n" +
			"requeued or preempted resumes from its last checkpoint on S3. `ump status --remote HASH` shows\n" +
			"progress; `ump pull HASH` brings the results home. See docs/cluster.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "slurm", Usage: "write an sbatch array script"},
			&cli.BoolFlag{Name: "k8s", Usage: "write a Kubernetes Indexed Job"},
			&cli.IntFlag{Name: "cells-per-task", Usage: "cells each task runs, one after another (default: 1, or more to keep " +
				"a Slurm array under 1,000 tasks)"},
			&cli.BoolFlag{Name: "only-missing", Usage: "leave out the cells already committed on S3"},
			&cli.BoolFlag{Name: "now", Usage: "submit the Slurm script with sbatch at once"},
			&cli.StringFlag{Name: "out", Usage: "write the script or Job to `FILE` (- for stdout; default ump-RUN.sbatch or ump-RUN.yaml)"},
			&cli.StringSliceFlag{Name: "sbatch-option", Usage: "add `OPTION` to the script as an #SBATCH line (e.g. --partition=gpu, --gres=gpu:1, --time=12:00:00)"},
			&cli.StringFlag{Name: "image", Usage: "the container `IMAGE` with ump (and the data sets at $UMP_DATA) for --k8s"},
			&cli.StringFlag{Name: "secret", Value: "ump-s3", Usage: "the Kubernetes Secret `NAME` whose keys become the worker's environment " +
				"(UMP_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"},
			&cli.StringFlag{Name: "key-secret", Value: "ump-key", Usage: "the Kubernetes Secret `NAME` holding your signing key as signing-key, " +
				"with which the workers sign their commits (kubectl create secret generic ump-key --from-file=signing-key=KEYFILE)"},
			&cli.IntFlag{Name: "parallelism", Usage: "pods that run at once for --k8s (default: every task)"},
			engineFlag, scaleFlag, trustUnsignedFlag,
		},
		Action: func(c *cli.Context) error {
			opts := submitOptions{slurm: c.Bool("slurm"), k8s: c.Bool("k8s"), perTask: c.Int("cells-per-task"), onlyMissing: c.Bool("only-missing"),
				now: c.Bool("now"), out: c.String("out"), sbatch: c.StringSlice("sbatch-option"), image: c.String("image"),
				secret: c.String("secret"), keySecret: c.String("key-secret"), parallelism: c.Int("parallelism")}
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

// maxArray is Slurm's default MaxArraySize less one: array indices run
// from 0 to maxArray-1.
const maxArray = 1000

// check refuses flags that do not fit together, before anything is stored.
func (o *submitOptions) check(g globals) error {
	switch {
	case o.slurm == o.k8s:
		return badInput{fmt.Errorf("submit needs exactly one of --slurm and --k8s")}
	case g.artifacts == "":
		return badInput{fmt.Errorf("submit needs --artifacts s3://BUCKET/PREFIX (or UMP_ARTIFACTS): S3 is the only state the machines share")}
	case o.perTask < 0:
		return badInput{fmt.Errorf("--cells-per-task %d: use a number of cells >= 1", o.perTask)}
	case o.now && !o.slurm:
		return badInput{fmt.Errorf("--now submits with sbatch: use it with --slurm (apply a Kubernetes Job with kubectl apply -f)")}
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
	var cells []int
	done := map[int]bool{}
	if opts.onlyMissing {
		if done, err = remote.Committed(ctx, plan.Hash); err != nil {
			return err
		}
	}
	for i := range plan.Cells {
		if !done[i] {
			cells = append(cells, i)
		}
	}
	if len(cells) == 0 {
		fmt.Fprintf(stdout, "every cell of manifest %s is committed on %s; nothing to submit (`ump pull %s` brings them home)\n", plan.Hash, remote.Bucket, plan.Hash)
		return nil
	}
	perTask := opts.perTask
	if perTask == 0 {
		perTask = 1
		if opts.slurm {
			perTask = (len(cells) + maxArray - 1) / maxArray
		}
	}
	wl := &fleet.Worklist{Plan: *plan, Trusted: remote.Trust.Keys(), TrustUnsigned: opts.run.trustUnsigned}
	for start := 0; start < len(cells); start += perTask {
		wl.Tasks = append(wl.Tasks, cells[start:min(start+perTask, len(cells))])
	}
	if opts.slurm && len(wl.Tasks) > maxArray {
		return badInput{fmt.Errorf("--cells-per-task %d gives %d tasks; a Slurm array holds at most %d by default: raise --cells-per-task to %d",
			perTask, len(wl.Tasks), maxArray, (len(cells)+maxArray-1)/maxArray)}
	}
	run, err := remote.Submit(ctx, wl)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	key, err := filepath.Abs(remote.Signer.Path)
	if err != nil {
		return err
	}
	job := jobSpec{Run: run, Short: run[:12], Hash: plan.Hash, Name: plan.Manifest.Name, Cells: len(cells), PerTask: perTask,
		Tasks: len(wl.Tasks), LastTask: len(wl.Tasks) - 1, Artifacts: g.artifacts, Insecure: g.insecure, Ump: self, Key: key, Sbatch: opts.sbatch,
		Image: opts.image, Secret: opts.secret, KeySecret: opts.keySecret, Parallelism: opts.parallelism, Requeue: exitRequeue, Fail: []int{exitBadInput, exitNondeterministic}}
	if job.Parallelism == 0 {
		job.Parallelism = job.Tasks
	}
	tmpl, ext := slurmScript, "sbatch"
	if opts.k8s {
		tmpl, ext = k8sJob, "yaml"
	}
	var text strings.Builder
	if err := tmpl.Execute(&text, job); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s\n", run)
	out := opts.out
	if out == "" {
		out = fmt.Sprintf("ump-%s.%s", job.Short, ext)
	}
	if out == "-" {
		_, err := io.WriteString(stdout, text.String())
		return err
	}
	if err := os.WriteFile(out, []byte(text.String()), 0o644); err != nil {
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

// jobSpec is what the templates fill in.
type jobSpec struct {
	Run, Short, Hash, Name, Artifacts, Ump, Key, Image, Secret, KeySecret string
	Cells, PerTask, Tasks, LastTask, Parallelism, Requeue                 int
	Insecure                                                              bool
	Sbatch                                                                []string
	Fail                                                                  []int // exit codes a retry cannot fix
}

// quote writes a value as a YAML or shell-safe double-quoted string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shellQuote writes a value as a shell word: bare when the shell takes
// each of its characters literally, else single-quoted.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

var funcs = template.FuncMap{"quote": quote, "shell": shellQuote, "json": func(v any) string { b, _ := json.Marshal(v); return string(b) }}

// slurmScript is an sbatch array: one task per index, requeued when ump
// worker stops at a safe point (SIGTERM from a time limit, preemption or
// scontrol requeue), resuming from its checkpoint on S3.
var slurmScript = template.Must(template.New("sbatch").Funcs(funcs).Parse(`#!/bin/bash
#SBATCH --job-name=ump-{{.Short}}
#SBATCH --array=0-{{.LastTask}}
#SBATCH --requeue
#SBATCH --signal=B:TERM@120
#SBATCH --open-mode=append
#SBATCH --output=ump-{{.Short}}-%a.out
{{- range .Sbatch}}
#SBATCH {{.}}
{{- end}}
# ump submit: run {{.Run}}
# manifest {{.Name}} {{.Hash}}: {{.Cells}} cells, {{.PerTask}} per task.
# The workers read UMP_S3_ENDPOINT, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and
# UMP_DATA) from the environment sbatch passes on from the submitting shell, and
# sign their commits with the submitter's key (--key below).
# SIGTERM (the time limit's, with --signal above, or preemption) makes ump save a
# checkpoint and exit {{.Requeue}}; the task is then requeued and resumes from it.
set -u
{{shell .Ump}} --artifacts {{shell .Artifacts}}{{if .Insecure}} --s3-insecure{{end}} --key {{shell .Key}} worker --run {{.Run}} &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
wait "$pid"; rc=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
if [ "$rc" -eq {{.Requeue}} ]; then
	scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" || true
fi
exit "$rc"
`))

// k8sJob is an Indexed Job: one completion per task; a disruption
// (eviction, preemption) and a worker stopped at a safe point do not count
// against the index's retries, bad input and nondeterminism fail the index
// at once.
var k8sJob = template.Must(template.New("k8s").Funcs(funcs).Parse(`# ump submit: run {{.Run}}
# manifest {{.Name}} {{.Hash}}: {{.Cells}} cells, {{.PerTask}} per task.
# The Secret {{.Secret}} holds UMP_S3_ENDPOINT, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY;
# the Secret {{.KeySecret}} holds the signing key the workers sign their commits with:
#   kubectl create secret generic {{.KeySecret}} --from-file=signing-key={{.Key}}
# the image has ump on its PATH and the data sets at $UMP_DATA.
apiVersion: batch/v1
kind: Job
metadata:
  name: ump-{{.Short}}
  labels:
    app.kubernetes.io/name: ump
    ump/run: {{quote .Short}}
spec:
  completionMode: Indexed
  completions: {{.Tasks}}
  parallelism: {{.Parallelism}}
  backoffLimitPerIndex: 3
  podReplacementPolicy: Failed
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions:
      - type: DisruptionTarget
    - action: Ignore
      onExitCodes:
        containerName: ump
        operator: In
        values: [{{.Requeue}}]
    - action: FailIndex
      onExitCodes:
        containerName: ump
        operator: In
        values: {{json .Fail}}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ump
        ump/run: {{quote .Short}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 120
      containers:
      - name: ump
        image: {{quote .Image}}
        command: ["ump"]
        args: [{{quote "--artifacts"}}, {{quote .Artifacts}},{{if .Insecure}} "--s3-insecure",{{end}} "--key", "/etc/ump/signing-key", "worker", "--run", {{quote .Run}}]
        envFrom:
        - secretRef:
            name: {{quote .Secret}}
        volumeMounts:
        - name: signing-key
          mountPath: /etc/ump
          readOnly: true
      volumes:
      - name: signing-key
        secret:
          secretName: {{quote .KeySecret}}
          defaultMode: 0400
`))
