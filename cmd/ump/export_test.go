package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/report"
)

// TestExportsReadByIndependentReaders exports the rounds table of two
// manifests (D-SUM and GT-DSUM with nesterov-less Local SGD, so some
// parameters apply to one cell and not another) as Arrow IPC and Parquet
// and reads both with npm apache-arrow and parquet-wasm: the same columns
// (cell parameters first, lambda as lambda_) and values as the CSV export,
// null where a parameter or figure does not apply (an empty CSV field),
// booleans as booleans, cells counted from 1, and the schema metadata
// naming both manifests, the engine and the ump build.
func TestExportsReadByIndependentReaders(t *testing.T) {
	t.Parallel()
	modules, _ := filepath.Abs("../../.npm-tools/node_modules")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; .ci/run installs it")
	}
	if _, err := os.Stat(filepath.Join(modules, "parquet-wasm")); err != nil {
		t.Skipf("npm readers are not in %s (.ci/run installs them)", modules)
	}
	store := t.TempDir()
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12").Replace(longManifest),
	)
	hash := hashOf(t, ump(t, store, "run", m))
	m2 := writeFile(
		t,
		"m2.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12", "{name: gt-dsum}", "{name: "+
			"local-sgd-m, beta: 0.9}").
			Replace(longManifest),
	)
	hash2 := hashOf(t, ump(t, store, "run", m2))
	csvRows, err := csv.NewReader(strings.NewReader(ump(t, store, "export", "--manifest", hash, "--manifest",
		hash2[:12], "--out", "-").stdout)).
		ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(csvRows[0], name) }
	first, last := csvRows[1], csvRows[len(csvRows)-1]
	if col("lambda") >= 0 || first[col("lambda_")] != "0.8" || last[col("lambda_")] != "" ||
		last[col("nesterov")] != "false" ||
		first[col("nesterov")] != "" ||
		first[col("cell")] != "1" ||
		last[col("cell")] != "2" ||
		last[col("manifest")] != hash2 ||
		first[col("batch_size")] != "" ||
		first[col("objective_gap")] == "" {
		t.Errorf(
			"CSV export: want lambda_ 0.8 then empty, nesterov empty then false, cells 1 and 2, batch_size empty; "+
				"first row %v, last %v",
			first,
			last,
		)
	}
	if !slices.Equal(csvRows[0][:len(report.ParamColumns())], report.ParamColumns()) {
		t.Fatalf("CSV columns %v do not start with the cell parameter columns %v", csvRows[0], report.ParamColumns())
	}
	for _, format := range []string{"arrow", "parquet"} {
		out := filepath.Join(t.TempDir(), "rounds."+format)
		if r := ump(t, store, "export", "--manifest", hash, "--manifest", hash2, "--format", format, "--out",
			out); r.code != 0 {
			t.Fatalf("export %s: %s", format, r.stderr)
		}
		cmd := exec.Command("node", "../../artifacts/testdata/read_table.js", format, out)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		data, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s reader: %v\n%s", format, err, data)
		}
		var got struct {
			Rows     int
			Metadata map[string]string
			Columns  []struct {
				Name   string
				Values []any
			}
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if md := got.Metadata; md["ump.manifests"] != hash+","+hash2 ||
			!strings.Contains(md["ump.engines"], "go-cpu-float32") ||
			md["ump.version"] == "" {
			t.Errorf("%s: schema metadata %v; want the two manifests, the engine and the ump build", format, md)
		}
		if got.Rows != len(csvRows)-1 || len(got.Columns) != len(csvRows[0]) {
			t.Fatalf(
				"%s: %d rows x %d columns, CSV has %d x %d",
				format,
				got.Rows,
				len(got.Columns),
				len(csvRows)-1,
				len(csvRows[0]),
			)
		}
		for i, c := range got.Columns {
			if c.Name != csvRows[0][i] {
				t.Errorf("%s: column %d is %q, CSV has %q", format, i, c.Name, csvRows[0][i])
			}
			for r, v := range c.Values {
				want := csvRows[r+1][i]
				same := false
				switch v := v.(type) {
				case nil:
					same = want == ""
				case bool:
					same = strconv.FormatBool(v) == want
				case float64:
					w, err := strconv.ParseFloat(want, 64)
					same = err == nil && w == v
				case string: // strings, int64 (as decimal text), NaN and infinities
					same = v == want && v != ""
				}
				if !same {
					t.Errorf("%s: %s row %d = %v, CSV has %s", format, c.Name, r, v, want)
				}
			}
		}
	}
}

// TestNotebookReproducesTable executes examples/notebook.ipynb with
// Debian's nbconvert on a manifest's CSV exports: its table (the tuned
// lr's mean ± std over seeds per setting) equals `ump table --csv`, and it
// draws the curve.
func TestNotebookReproducesTable(t *testing.T) {
	t.Parallel()
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import nbconvert, ipykernel, pandas, matplotlib").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip(
			"needs python3 with nbconvert, ipykernel, pandas and matplotlib (Debian python3-nbconvert " +
				"python3-ipykernel python3-pandas python3-matplotlib; .ci/run installs them)",
		)
	}
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", tableManifest)))
	dir := executeNotebook(t, python, store, hash)
	read := func(data string) [][]string {
		rows, err := csv.NewReader(strings.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows[1:]
	}
	mine, _ := os.ReadFile(filepath.Join(dir, "table.csv"))
	table := ump(t, store, "table", hash, "--csv").stdout
	header := strings.Split(strings.SplitN(table, "\n", 2)[0], ",")
	ours := read(table)          // algorithm, topology.kind, mean, std, … selected_lr, status
	theirs := read(string(mine)) // topology, alpha, lr, mean, std, seeds
	key := func(mean, std, lr string) string {
		m, _ := strconv.ParseFloat(mean, 64)
		s, _ := strconv.ParseFloat(std, 64)
		return fmt.Sprintf("%.12g %.12g %s", m, s, lr)
	}
	var a, b []string
	for _, r := range ours {
		a = append(
			a,
			key(
				r[slices.Index(header, "objective_gap_mean")],
				r[slices.Index(header, "objective_gap_std")],
				r[slices.Index(header, "selected_lr")],
			),
		)
	}
	for _, r := range theirs {
		b = append(b, key(r[3], r[4], r[2]))
	}
	slices.Sort(a)
	slices.Sort(b)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("the notebook's entries (mean std lr) %v differ from ump table's %v", b, a)
	}
	if f, err := os.Open(filepath.Join(dir, "curve.png")); err != nil {
		t.Errorf("the notebook drew no curve: %v", err)
	} else if _, err := png.Decode(f); err != nil {
		t.Errorf("curve.png: %v", err)
	}
	// Settings of algorithms with different parameters: each curve's
	// label names only those its algorithm takes.
	mixed := strings.Replace(
		tableManifest,
		"algorithm: [{name: d-sum}, {name: d-sum, alpha: 0}]",
		"algorithm: [{name: d-sum}, {name: qg-dsgdm}]",
		1,
	)
	hash = hashOf(t, ump(t, store, "run", writeFile(t, "mixed.yaml", mixed)))
	executed, _ := os.ReadFile(filepath.Join(executeNotebook(t, python, store, hash), "executed.ipynb"))
	if curves := regexp.MustCompile(`curve: [^"\\]*`).FindAllString(string(executed), -1); len(curves) != 4 ||
		strings.Contains(strings.Join(curves, "\n"), "nan") {
		t.Errorf("the notebook's curve labels: %q; want 4, none naming an absent parameter (nan)", curves)
	}
}

// executeNotebook exports a manifest's final and rounds tables as CSV
// beside a copy of examples/notebook.ipynb, runs it with nbconvert as the
// README says, and returns the directory.
func executeNotebook(t *testing.T, python, store, hash string) string {
	t.Helper()
	dir := t.TempDir()
	for _, table := range []string{"final", "rounds"} {
		if r := ump(t, store, "export", "--manifest", hash, "--table", table, "--out", filepath.Join(dir, table+
			".csv")); r.code != 0 {
			t.Fatalf("export %s: %s", table, r.stderr)
		}
	}
	nb, err := os.ReadFile("../../examples/notebook.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notebook.ipynb"), nb, 0o644)
	cmd := exec.Command(
		python,
		"-m",
		"nbconvert",
		"--to",
		"notebook",
		"--execute",
		"--output",
		"executed.ipynb",
		"notebook.ipynb",
	)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("executing the notebook: %v\n%s", err, out)
	}
	return dir
}

// TestExportFormatFollowsTheFileName: without --format, --out's extension
// names the format (.parquet, .arrow, .csv; anything else is CSV); a
// --format that the extension contradicts is refused (exit 2) and writes
// nothing, and so is a file in a directory that does not exist.
func TestExportFormatFollowsTheFileName(t *testing.T) {
	t.Parallel()
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	hash := hashOf(t, ump(t, store, "run", m))
	for name, magic := range map[string]string{"oops.parquet": "PAR1", "t.arrow": "ARROW1", "t.csv": "manifest,",
		"t.txt": "manifest,", "T.PARQUET": "PAR1"} {
		out := filepath.Join(dir, name)
		if r := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", out); r.code != 0 {
			t.Fatalf("export --out %s: exit %d\n%s", name, r.code, r.stderr)
		}
		if data, _ := os.ReadFile(out); !strings.HasPrefix(string(data), magic) {
			t.Errorf("export --out %s wrote %.8q, want a file starting %q", name, data, magic)
		}
	}
	out := filepath.Join(dir, "mismatch.parquet")
	r := ump(t, store, "export", "--manifest", hash, "--format", "csv", "--out", out)
	if _, err := os.Stat(out); r.code != 2 || !strings.Contains(r.stderr, "--format csv with --out") || err == nil {
		t.Errorf(
			"--format csv --out mismatch.parquet: exit %d, %q, file written: %v; want exit 2 naming both, nothing "+
				"written",
			r.code,
			r.stderr,
			err == nil,
		)
	}
	missing := filepath.Join(dir, "nodir", "final.parquet")
	if r := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", missing); r.code != 2 ||
		!strings.Contains(
			r.stderr,
			"the directory "+filepath.Dir(missing)+" does not exist",
		) || strings.Contains(r.stderr, ".tmp") {
		t.Errorf("export into a missing directory: exit %d, %q; want exit 2 naming the directory", r.code, r.stderr)
	}
}

// TestOutNeverWritesThroughALink: export and plot write a file the user
// names under a fresh name beside it and rename it into place, so a link
// planted at the file, or at the name a writer once used beside it
// (NAME.tmp), is never followed; a link, directory or FIFO at the name
// is refused, exit 2, and nothing is left beside it; a regular file is
// replaced.
func TestOutNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	store, dir := t.TempDir(), t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "dim: 30000", "dim: 30", 1))
	hash := hashOf(t, ump(t, store, "run", m))
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	kept := func(what string) {
		t.Helper()
		if data, _ := os.ReadFile(victim); string(data) != "keep" {
			t.Errorf("%s wrote through a link into its target: %q", what, data)
		}
	}
	out := filepath.Join(dir, "f.csv")
	os.Symlink(victim, out+".tmp")
	if r := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", out); r.code != 0 {
		t.Fatalf("export beside a planted f.csv.tmp: exit %d\n%s", r.code, r.stderr)
	}
	kept("export beside a planted f.csv.tmp")
	if fi, err := os.Lstat(out); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("export --out %s: not a regular file (%v)", out, err)
	}
	if r := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", out); r.code != 0 {
		t.Errorf("export over its own earlier file: exit %d\n%s", r.code, r.stderr)
	}
	linked, fifo := filepath.Join(dir, "linked.csv"), filepath.Join(dir, "fifo.csv")
	os.Symlink(victim, linked)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ out, kind string }{{linked, "a symbolic link"}, {dir, "a directory"}, {fifo, "a " +
		"FIFO"}} {
		r := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", bad.out)
		if r.code != 2 || !strings.Contains(r.stderr, bad.out+" is "+bad.kind+", which ump does not replace") {
			t.Errorf("export --out %s: exit %d, %q; want exit 2, refused as %s", bad.out, r.code, r.stderr, bad.kind)
		}
	}
	kept("export --out a link")
	plots := filepath.Join(dir, "plots")
	os.MkdirAll(plots, 0o755)
	os.Symlink(victim, filepath.Join(plots, "curves.png"))
	if r := ump(t, store, "plot", hash, "--out", plots); r.code != 2 ||
		!strings.Contains(r.stderr, "curves.png is a symbolic link") {
		t.Errorf("plot --out a directory holding a planted curves.png link: exit %d, %q; want exit 2", r.code, r.stderr)
	}
	kept("plot --out a directory holding a planted link")
	real, dirLink := filepath.Join(dir, "real"), filepath.Join(dir, "plots-link")
	os.MkdirAll(real, 0o755)
	os.Symlink(real, dirLink)
	for _, cmd := range [][]string{{"plot", hash}, {"report", hash}} {
		r := ump(t, store, append(cmd, "--out", dirLink)...)
		entries, _ := os.ReadDir(real)
		if r.code != 2 || !strings.Contains(r.stderr, "is a symbolic link") || len(entries) > 0 {
			t.Errorf("%s --out a link to a directory: exit %d, %q, %d entries written there; want exit 2",
				cmd[0], r.code, r.stderr, len(entries))
		}
	}
	for _, d := range []string{dir, plots} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				t.Errorf("a write left %s beside its file", e.Name())
			}
		}
	}
}
