package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running one-node cluster.
type Cluster struct {
	Dir  string   // config, state, logs
	Env  []string // SLURM_CONF for the client commands
	Node string
}

// slurmConf is the one-node cluster's slurm.conf: its host, the
// controller's and the node's ports, munged's socket, the cluster's
// directory and the node's CPUs.
const slurmConf = `ClusterName=umptest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
AuthType=auth/munge
AuthInfo=socket=%[4]s,cred_expire=10
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[6]d State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`

// Start starts the cluster; the test skips if it cannot.
func Start(t *testing.T) *Cluster {
	t.Helper()
	for _, bin := range []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf(
				"Slurm is not installed (%s not on PATH; apt-get install slurmd slurmctld slurm-client munge; "+
					".ci/run installs it)",
				bin,
			)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("a Slurm cluster needs root (slurmd runs jobs as their user)")
	}
	munge, err := user.Lookup("munge")
	if err != nil {
		t.Skipf("no munge user: %v", err)
	}
	dir, err := os.MkdirTemp("", "slurmtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	c := &Cluster{Dir: dir, Node: host, Env: []string{"SLURM_CONF=" + filepath.Join(dir, "slurm.conf")}}

	socket := c.startMunge(t, munge)
	for _, d := range []string{"state", "spool"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	conf := fmt.Sprintf(slurmConf, host, freePort(t), freePort(t), socket, dir, runtime.NumCPU())
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.daemon(t, "slurmctld", "slurmctld", "-D", "-i", "-f", filepath.Join(dir, "slurm.conf"))
	c.daemon(t, "slurmd", "slurmd", "-D", "-f", filepath.Join(dir, "slurm.conf"))
	waitFor(t, "the node to be idle", 30*time.Second, func() bool {
		out, _ := c.Command("sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	t.Cleanup(func() {
		c.Command("scancel", "--full", "--user=root").Run()
		waitFor(t, "the jobs to end", 30*time.Second, func() bool {
			out, _ := c.Command("squeue", "-h").Output()
			return len(bytes.TrimSpace(out)) == 0
		})
	})
	return c
}

// startMunge starts munged, as the munge user, with its socket in the
// cluster's directory, and returns the socket's path.
func (c *Cluster) startMunge(t *testing.T, munge *user.User) string {
	mungeDir := filepath.Join(c.Dir, "munge")
	os.Mkdir(mungeDir, 0o755)
	var uid, gid int
	fmt.Sscan(munge.Uid, &uid)
	fmt.Sscan(munge.Gid, &gid)
	os.Chown(mungeDir, uid, gid)
	socket := filepath.Join(mungeDir, "munge.sock")
	c.daemon(t, "munged", "runuser", "-u", "munge", "--", "munged", "-F", "--socket="+socket,
		"--pid-file="+filepath.Join(mungeDir, "munged.pid"), "--log-file="+filepath.Join(mungeDir, "munged.log"),
		"--seed-file="+filepath.Join(mungeDir, "munged.seed"))
	waitFor(t, "munged's socket", 10*time.Second, func() bool { _, err := os.Stat(socket); return err == nil })
	return socket
}

// daemon starts a foreground daemon, stopped (SIGTERM, then SIGKILL) when
// the test ends.
func (c *Cluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	log, _ := os.Create(filepath.Join(c.Dir, name+".out"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
}

// Command returns a Slurm client command pointed at the cluster.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(context.Background(), name, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	return cmd
}

// Log returns the cluster's daemon logs, for a failing test to show.
func (c *Cluster) Log() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmd.log"} {
		data, _ := os.ReadFile(filepath.Join(c.Dir, name))
		lines := strings.Split(string(data), "\n")
		fmt.Fprintf(&b, "--- %s (last lines)\n%s\n", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
	return b.String()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("slurmtest: waited %s for %s", limit, what)
		}
	}
}
