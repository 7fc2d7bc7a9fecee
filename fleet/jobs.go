package fleet

import (
	"encoding/json"
	"io"
	"text/template"

	"github.com/ump-lab/ump/internal/display"
)

// Job is what the script of a submitted run says: the run and its
// manifest, how its cells are cut into tasks, how a worker reaches the
// store and signs (ump's path, the signing key, or on Kubernetes the image
// and Secrets), and the exit codes that requeue a task or fail it.
type Job struct {
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

var funcs = template.FuncMap{
	"quote": quote,
	"shell": display.Shell,
	"json":  func(v any) string { b, _ := json.Marshal(v); return string(b) },
}

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

// Slurm writes the job as an sbatch array script.
func (j Job) Slurm(w io.Writer) error { return slurmScript.Execute(w, j) }

// Kubernetes writes the job as a Kubernetes Indexed Job.
func (j Job) Kubernetes(w io.Writer) error { return k8sJob.Execute(w, j) }

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
