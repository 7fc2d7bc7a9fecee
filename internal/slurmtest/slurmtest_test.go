package slurmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArrayRuns starts the cluster and runs a two-task array: each task
// writes its index.
func TestArrayRuns(t *testing.T) {
	c := Start(t)
	out := t.TempDir()
	if b, err := c.Command("sbatch", "--array=0-1", "--output="+out+"/%a.out", "--wrap", "echo task "+
		"$SLURM_ARRAY_TASK_ID").CombinedOutput(); err != nil {
		t.Fatalf("sbatch: %v %s\n%s", err, b, c.Log())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		b, _ := c.Command("squeue", "-h").Output()
		if strings.TrimSpace(string(b)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the array did not finish:\n%s\n%s", b, c.Log())
		}
	}
	for _, task := range []string{"0", "1"} {
		if b, _ := os.ReadFile(filepath.Join(out, task+".out")); string(b) != "task "+task+"\n" {
			t.Errorf("task %s wrote %q", task, b)
		}
	}
}
