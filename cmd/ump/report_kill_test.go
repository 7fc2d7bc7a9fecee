package main

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInPlaceReportSurvivesKills SIGKILLs `ump report OUT --out OUT`
// (a report regenerated in place, as results/ is) at random moments:
// after every kill the directory reports again (`ump report OUT` exits
// 0), and the next uninterrupted run leaves exactly what a run that was
// never killed leaves, with nothing of the killed runs beside it.
func TestInPlaceReportSurvivesKills(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report")
	reported(t, out)
	start := time.Now()
	if r := ump(t, t.TempDir(), "report", out, "--out", out); r.code != 0 { // from now on the same bytes every time
		t.Fatalf("report in place: exit %d\n%s", r.code, r.stderr)
	}
	whole := time.Since(start)
	want := treeOf(t, out)
	r := rand.New(rand.NewPCG(8, 1))
	killed := 0
	for killed < 12 {
		delay := time.Duration(r.Int64N(int64(whole)))
		if !killedAfter(t, delay, nil, "--store", t.TempDir(), "report", out, "--out", out) {
			continue
		}
		killed++
		if r := ump(t, t.TempDir(), "report", out, "--out", t.TempDir()); r.code != 0 {
			t.Fatalf("kill %d after %v: the report does not read: exit %d\n%s", killed, delay, r.code, r.stderr)
		}
	}
	if r := ump(t, t.TempDir(), "report", out, "--out", out); r.code != 0 {
		t.Fatalf("the rerun after %d kills: exit %d\n%s", killed, r.code, r.stderr)
	}
	got := treeOf(t, out)
	for name, data := range want {
		if got[name] != data {
			t.Errorf("after %d kills and a rerun, %s differs from an uninterrupted report's", killed, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("after %d kills and a rerun, %s is left over", killed, name)
		}
	}
}

// killedAfter starts ump with args and kills it (-9) after delay, unless
// it exits first, calling beforeKill (if not nil) with its PID just
// before; it reports whether it killed it. An exit of its own that
// failed ends the test.
func killedAfter(t *testing.T, delay time.Duration, beforeKill func(pid int), args ...string) bool {
	t.Helper()
	cmd := exec.Command(umpBin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ump %s exited with %v", strings.Join(args, " "), err)
		}
		return false
	case <-time.After(delay):
		if beforeKill != nil {
			beforeKill(cmd.Process.Pid)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return true
	}
}

// treeOf is every file under dir, by its path there, with its contents.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[strings.TrimPrefix(path, dir+"/")] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestExportAndPlotSurviveKills: ump export --out F and ump plot --out
// DIR, killed (-9) at random moments, never leave a broken or foreign
// file: F is absent or what an uninterrupted export writes, and DIR holds
// some of the uninterrupted plot's files, each whole, and nothing else.
func TestExportAndPlotSurviveKills(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	hash := hashOf(t, ump(t, store, "run", m))
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"export", func(out string) []string {
			return []string{"export", "--manifest", hash, "--format", "parquet", "--out", filepath.Join(out,
				"rounds.parquet")}
		}},
		{"plot", func(out string) []string { return []string{"plot", hash, "--out", out} }},
	} {
		whole := t.TempDir()
		start := time.Now()
		if r := ump(t, store, c.args(whole)...); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.name, r.code, r.stderr)
		}
		took := time.Since(start)
		want := treeOf(t, whole)
		r := rand.New(rand.NewPCG(9, 2))
		out := t.TempDir()
		for killed := 0; killed < 10; {
			if killedAfter(
				t,
				time.Duration(r.Int64N(int64(took))),
				nil,
				append([]string{"--store", store}, c.args(out)...)...) {
				killed++
			}
			for name, data := range treeOf(t, out) {
				if w, ok := want[name]; !ok || data != w {
					t.Fatalf(
						"%s after %d kills: %s is %s",
						c.name,
						killed,
						name,
						map[bool]string{false: "not a file it writes", true: "not whole"}[ok],
					)
				}
			}
		}
	}
}
