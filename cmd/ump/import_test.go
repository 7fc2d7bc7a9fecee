package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/report/resultsdir"
)

// importManifest is a quick sweep of two seeds on the quadratic.
const importManifest = `version: 1
name: imports
task: {dataset: quadratic, quadratic: {dim: 40, sigma: 0.5}}
workers: 4
rounds: 30
local_steps: 2
lr: 0.05
algorithm: {name: d-sum, alpha: 2, beta: 0.9}
evaluate: {every: 5}
checkpoint: {every: 10}
sweep:
  seed: [1, 2]
`

// keyEnv is an environment whose signing key is dir/NAME.key, and that
// key's public half (created by `ump key show`).
func keyEnv(t *testing.T, dir, name string) ([]string, string) {
	t.Helper()
	env := []string{"UMP_KEY=" + filepath.Join(dir, name+".key")}
	r := umpEnv(t, env, t.TempDir(), "key", "show")
	if r.code != 0 {
		t.Fatalf("key show: %d %s", r.code, r.stderr)
	}
	return env, strings.TrimSpace(r.stdout)
}

// reportOf runs and reports a manifest (its file, then overrides) in a
// new store under env, and returns the store, the hash and the results
// directory.
func reportOf(t *testing.T, env []string, manifest string, overrides ...string) (store, hash, dir string) {
	t.Helper()
	store = t.TempDir()
	run := umpEnv(t, env, store, append([]string{"run", manifest}, overrides...)...)
	if run.code != 0 {
		t.Fatalf("run: %d %s", run.code, run.stderr)
	}
	hash = hashOf(t, run)
	return store, hash, reportDir(t, env, store, hash)
}

// reportDir writes the report of a manifest of store and returns its
// results directory.
func reportDir(t *testing.T, env []string, store, hash string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report")
	if r := umpEnv(t, env, store, "report", "--out", out, hash); r.code != 0 {
		t.Fatalf("report: %d %s", r.code, r.stderr)
	}
	dirs, err := filepath.Glob(filepath.Join(out, "*-"+hash[:12]))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("the report wrote %v, %v", dirs, err)
	}
	return dirs[0]
}

// cellsOf reads a directory's cells file.
func cellsOf(t *testing.T, dir string) []resultsdir.CellRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, resultsdir.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	var cells []resultsdir.CellRecord
	for _, line := range strings.Split(strings.TrimSpace(string(plain)), "\n") {
		var c resultsdir.CellRecord
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	return cells
}

// TestImportThenExtend: Bob imports Alice's published directory once he
// trusts her key, and a run of her sweep with one more seed computes the
// new cell alone; its table is that of the whole sweep computed in one
// store. Her cells stay hers: his report signs his cell and leaves hers
// with her signature, and its record is no one's.
func TestImportThenExtend(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	alice, aliceKey := keyEnv(t, keys, "alice")
	bob, _ := keyEnv(t, keys, "bob")
	m := writeFile(t, "m.yaml", importManifest)
	_, hash, dir := reportOf(t, alice, m)

	store := t.TempDir()
	before := tree(t, store)
	refused := umpEnv(t, bob, store, "import", dir)
	if refused.code != 3 || !strings.Contains(refused.stderr, "trust add "+aliceKey) {
		t.Fatalf("an import of a key Bob does not trust: exit %d %s", refused.code, refused.stderr)
	}
	if after := tree(t, store); after != before {
		t.Errorf("a refused import changed the store:\n%s\nwas\n%s", after, before)
	}
	imported := umpEnv(t, bob, store, "import", "--trust", aliceKey, dir)
	if imported.code != 0 || !strings.Contains(imported.stdout, "2 of its 2 finished cells brought in") {
		t.Fatalf("import: exit %d %s %s", imported.code, imported.stdout, imported.stderr)
	}
	show := umpEnv(t, bob, store, "show", hash)
	if !strings.Contains(show.stdout, "imported from results directory "+dir+", signed by "+aliceKey) {
		t.Errorf("show does not name where the cells came from:\n%s", show.stdout)
	}

	extended := umpEnv(t, bob, store, "run", m, "sweep.seed=[1,2,3]")
	if extended.code != 0 {
		t.Fatalf("the extended sweep: %d %s", extended.code, extended.stderr)
	}
	n := strings.Count(extended.stderr, "imported from results directory")
	trained := strings.Count(extended.stderr, "train: done")
	if n != 2 || trained != 1 {
		t.Errorf("the extended sweep took %d cells from the import and trained %d; want 2 and 1:\n%s",
			n, trained, extended.stderr)
	}
	wide := hashOf(t, extended)
	whole := t.TempDir()
	if r := umpEnv(t, bob, whole, "run", m, "sweep.seed=[1,2,3]"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if got, want := exportCSV(t, store, wide, "rounds"), exportCSV(t, whole, wide, "rounds"); got != want {
		t.Errorf("the extended sweep's rounds differ from the sweep computed in one store:\n%s\nwant\n%s", got, want)
	}

	if r := umpEnv(t, bob, store, "verify", hash); r.code != 0 || strings.Count(r.stdout, ": ok, ") != 2 {
		t.Errorf("verify of the imported cells: exit %d; want both computed again and ok:\n%s%s",
			r.code, r.stdout, r.stderr)
	}

	mixed := reportDir(t, bob, store, wide)
	signers := map[int]string{}
	for _, c := range cellsOf(t, mixed) {
		signers[c.Cell] = c.Signer
	}
	_, bobKey := keyEnv(t, keys, "bob")
	if signers[1] != aliceKey || signers[2] != aliceKey || signers[3] != bobKey {
		t.Errorf("the cells of Bob's report are signed by %v; want cells 1 and 2 by Alice, 3 by Bob", signers)
	}
	if r := recordOf(t, mixed); r.Signer != "" {
		t.Errorf("the record of a report with Alice's cells is signed by %s; want no one's", r.Signer)
	}
}

// recordOf reads a results directory's record.
func recordOf(t *testing.T, dir string) resultsdir.Record {
	t.Helper()
	var r resultsdir.Record
	data, err := os.ReadFile(filepath.Join(dir, resultsdir.RecordFile))
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestImportRefusesWhatIsNotTheDirectorysOwn: an edited file, a cell
// whose outputs were changed (the record's digests made to fit), and the
// cells of another manifest under this one's registration are refused,
// each naming the file, and leave the store as it was.
func TestImportRefusesWhatIsNotTheDirectorysOwn(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	alice, aliceKey := keyEnv(t, keys, "alice")
	m := writeFile(t, "m.yaml", importManifest)
	_, _, dir := reportOf(t, alice, m)
	_, _, other := reportOf(t, alice, m, "lr=0.04")

	edited := copyDir(t, dir)
	os.WriteFile(filepath.Join(edited, resultsdir.FinalCSVFile), []byte("manifest,cell\n"), 0o644)

	forged := copyDir(t, dir)
	cells := cellsOf(t, forged)
	for name := range cells[0].Outputs {
		if strings.HasPrefix(name, "train/checkpoint") {
			cells[0].Outputs[name] = "sha256:" + strings.Repeat("0", 64)
		}
	}
	writeCells(t, forged, cells)

	swapped := copyDir(t, dir)
	writeCells(t, swapped, cellsOf(t, other))

	truncated := copyDir(t, dir)
	whole, _ := os.ReadFile(filepath.Join(truncated, resultsdir.CellsFile))
	os.WriteFile(filepath.Join(truncated, resultsdir.CellsFile), whole[:len(whole)/2], 0o644)

	for _, c := range []struct {
		name, dir, file string
		code            int
	}{
		{"an edited final.csv", edited, resultsdir.FinalCSVFile, 2},
		{"a cell whose outputs were changed", forged, aliceKey, 3},
		{"another manifest's cells", swapped, resultsdir.CellsFile, 2},
		{"a cells file cut short", truncated, resultsdir.CellsFile, 2},
	} {
		store := t.TempDir()
		before := tree(t, store)
		r := umpEnv(t, alice, store, "import", c.dir)
		if r.code != c.code || !strings.Contains(r.stderr, c.file) {
			t.Errorf("%s: exit %d %s; want exit %d naming %s", c.name, r.code, r.stderr, c.code, c.file)
		}
		if after := tree(t, store); after != before {
			t.Errorf("%s changed the store:\n%s\nwas\n%s", c.name, after, before)
		}
	}
}

// copyDir copies a results directory's files into a new one.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeCells writes cells as a directory's cells file and lists its
// digest in the directory's record, as a forger would.
func writeCells(t *testing.T, dir string, cells []resultsdir.CellRecord) {
	t.Helper()
	var plain bytes.Buffer
	for _, c := range cells {
		line, _ := json.Marshal(c)
		plain.Write(append(line, '\n'))
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(plain.Bytes())
	w.Close()
	path := filepath.Join(dir, resultsdir.CellsFile)
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := recordOf(t, dir)
	r.Files[resultsdir.CellsFile] = fmt.Sprintf("sha256:%x", sha256.Sum256(gz.Bytes()))
	r.Signer, r.Signature = "", ""
	data, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(dir, resultsdir.RecordFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAPartialDirectoryContinuedIsOneRun: a sweep stopped after its first
// cell is reported as partial (naming the cells it lacks); imported into
// a new store and run to its end there, it gives the numbers of the sweep
// run at once.
func TestAPartialDirectoryContinuedIsOneRun(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	alice, aliceKey := keyEnv(t, keys, "alice")
	longer := strings.NewReplacer("dim: 40", "dim: 20000", "rounds: 30", "rounds: 120",
		"seed: [1, 2]", "seed: [1, 2, 3]")
	m := writeFile(t, "m.yaml", longer.Replace(importManifest))

	stopped := t.TempDir()
	cmd := exec.Command(umpBin, "--store", stopped, "run", m)
	cmd.Env = append(os.Environ(), alice...)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	inCell2 := func(s *eventlog.Snapshot) bool {
		return s != nil && s.PID == cmd.Process.Pid && s.Cell >= 2 && s.Stage == "train"
	}
	for s := snapshot(stopped); !inCell2(s); s = snapshot(stopped) {
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached cell 2's training: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, cmd.Wait()); code != 130 {
		t.Fatalf("the interrupted run: exit %d %s", code, stderr.String())
	}
	hash := hashOf(t, result{stdout: stdout.String()})
	dir := reportDir(t, alice, stopped, hash)
	finished := len(cellsOf(t, dir))
	if finished < 1 || finished > 2 {
		t.Fatalf("the stopped run finished %d cells; the test needs 1 or 2 of 3", finished)
	}
	report, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "report.md"))
	if want := fmt.Sprintf("**partial**: %d of 3 finished", finished); !strings.Contains(string(report), want) {
		t.Errorf("the report of the stopped sweep does not say %q:\n%s", want, report)
	}

	missing := "3"
	if finished == 1 {
		missing = "2–3"
	}
	checking := t.TempDir()
	checked := umpEnv(t, alice, checking, "reproduce", dir)
	if want := fmt.Sprintf("1 (%d distinct cells,", finished); !strings.Contains(checked.stderr, want) {
		t.Errorf("reproduce of the partial directory does not count %d cells to compute:\n%s", finished, checked.stderr)
	}
	want := fmt.Sprintf("%d finished cells identical bit for bit (status, final row and %d evaluated rounds); "+
		"%d of them computed in this run", finished, 24*finished, finished)
	lacks := fmt.Sprintf("partial: %d of its 3 cells finished where it was reported, cells %s not (not computed",
		finished, missing)
	if checked.code != 0 || !strings.Contains(checked.stdout, want) || !strings.Contains(checked.stdout, lacks) {
		t.Errorf("reproduce of the partial directory: exit %d; want %q and %q:\n%s%s",
			checked.code, want, lacks, checked.stdout, checked.stderr)
	}

	if st := ump(t, checking, "status", hash).stdout; !strings.Contains(st, fmt.Sprintf("%d pending", 3-finished)) {
		t.Errorf("reproduce computed cells the partial directory lacks; want %d pending:\n%s", 3-finished, st)
	}

	store := t.TempDir()
	again := filepath.Join(dir, resultsdir.ManifestFile)
	if r := umpEnv(t, alice, store, "import", dir); r.code != 0 || !strings.Contains(r.stdout, "run "+again) {
		t.Fatalf("import of the partial directory: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := umpEnv(t, alice, store, "run", again); r.code != 0 || hashOf(t, r) != hash {
		t.Fatalf("the partial sweep continued: exit %d %s", r.code, r.stderr)
	}
	once := t.TempDir()
	if r := umpEnv(t, alice, once, "run", m); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, table := range []string{"final", "rounds"} {
		if got, want := exportCSV(t, store, hash, table), exportCSV(t, once, hash, table); got != want {
			t.Errorf("the %s table of the continued sweep differs from the sweep run at once:\n%s\nwant\n%s",
				table, got, want)
		}
	}
	whole := reportDir(t, alice, store, hash)
	for _, c := range cellsOf(t, whole) {
		if c.Signer != aliceKey {
			t.Errorf("cell %d of the continued sweep is signed by %q; want Alice's key", c.Cell, c.Signer)
		}
	}
}

// TestAnImportedUnsignedCellIsNeverSigned: cells a keyless store reported
// are imported only with --trust-unsigned; reported again by a user with
// a key, they stay unsigned and so does the record; they serve their own
// manifest alone, so a sweep that extends it computes them again.
func TestAnImportedUnsignedCellIsNeverSigned(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	keyless := []string{"UMP_KEY=" + filepath.Join(keys, "none", "key")}
	bob, _ := keyEnv(t, keys, "bob")
	m := writeFile(t, "m.yaml", importManifest)
	_, hash, dir := reportOf(t, keyless, m)

	store := t.TempDir()
	if r := umpEnv(t, bob, store, "import", dir); r.code != 3 || !strings.Contains(r.stderr, "--trust-unsigned") {
		t.Fatalf("an unsigned import without --trust-unsigned: exit %d %s", r.code, r.stderr)
	}
	if r := umpEnv(t, bob, store, "import", "--trust-unsigned", dir); r.code != 0 {
		t.Fatalf("import --trust-unsigned: exit %d %s", r.code, r.stderr)
	}
	again := reportDir(t, bob, store, hash)
	for _, c := range cellsOf(t, again) {
		if c.Signer != "" || c.Signature != "" {
			t.Errorf("cell %d imported unsigned is signed by %q in Bob's report", c.Cell, c.Signer)
		}
	}
	if r := recordOf(t, again); r.Signer != "" {
		t.Errorf("the record of a report of unsigned cells is signed by %s", r.Signer)
	}
	extended := umpEnv(t, bob, store, "run", m, "sweep.seed=[1,2,3]")
	if trained := strings.Count(extended.stderr, "train: done"); extended.code != 0 || trained != 3 {
		t.Errorf("an extended sweep trained %d cells (exit %d); unsigned imports serve their own manifest alone, "+
			"so want 3:\n%s", trained, extended.code, extended.stderr)
	}
}

// TestAnImportedCellIsNotPushed: a push from a store that imported some
// of a manifest's cells commits only the cells it computed, and names the
// others: their checkpoints stayed behind, and a commit would sign them
// with the pusher's key.
func TestAnImportedCellIsNotPushed(t *testing.T) {
	t.Parallel()
	_, s3env, _ := startS3(t)
	keys := t.TempDir()
	alice, aliceKey := keyEnv(t, keys, "alice")
	bob, _ := keyEnv(t, keys, "bob")
	m := writeFile(t, "m.yaml", importManifest)
	_, hash, dir := reportOf(t, alice, m)
	store := t.TempDir()
	if r := umpEnv(t, bob, store, "import", "--trust", aliceKey, dir); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	wide := hashOf(t, umpEnv(t, bob, store, "run", m, "sweep.seed=[1,2,3]"))
	env := append(slices.Clone(s3env), bob...)
	r := umpEnv(t, env, store, "--s3-insecure", "push", hash)
	if r.code != 0 || !strings.Contains(r.stdout, " 0 cells committed") ||
		strings.Count(r.stderr, "imported from results directory "+dir+", not pushed") != 2 {
		t.Errorf("push of the imported manifest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = umpEnv(t, env, store, "--s3-insecure", "push", wide)
	if r.code != 0 || !strings.Contains(r.stdout, " 1 cells committed") {
		t.Errorf("push of the sweep that extends it: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
