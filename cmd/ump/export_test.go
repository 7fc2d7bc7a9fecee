package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/pipeline"
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
	modules, _ := filepath.Abs("../../.npm-tools/node_modules")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; .ci/run installs it")
	}
	if _, err := os.Stat(filepath.Join(modules, "parquet-wasm")); err != nil {
		t.Skipf("npm readers are not in %s (.ci/run installs them)", modules)
	}
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12").Replace(longManifest))
	hash := hashOf(t, ump(t, store, "run", m))
	m2 := writeFile(t, "m2.yaml", strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12", "{name: gt-dsum}", "{name: local-sgd-m, beta: 0.9}").Replace(longManifest))
	hash2 := hashOf(t, ump(t, store, "run", m2))
	csvRows, err := csv.NewReader(strings.NewReader(ump(t, store, "export", "--manifest", hash, "--manifest", hash2[:12], "--out", "-").stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(csvRows[0], name) }
	first, last := csvRows[1], csvRows[len(csvRows)-1]
	if col("lambda") >= 0 || first[col("lambda_")] != "0.8" || last[col("lambda_")] != "" || last[col("nesterov")] != "false" ||
		first[col("nesterov")] != "" || first[col("cell")] != "1" || last[col("cell")] != "2" || last[col("manifest")] != hash2 ||
		first[col("batch_size")] != "" || first[col("objective_gap")] == "" {
		t.Errorf("CSV export: want lambda_ 0.8 then empty, nesterov empty then false, cells 1 and 2, batch_size empty; first row %v, last %v", first, last)
	}
	if !slices.Equal(csvRows[0][:len(pipeline.ParamColumns())], pipeline.ParamColumns()) {
		t.Fatalf("CSV columns %v do not start with the cell parameter columns %v", csvRows[0], pipeline.ParamColumns())
	}
	for _, format := range []string{"arrow", "parquet"} {
		out := filepath.Join(t.TempDir(), "rounds."+format)
		if r := ump(t, store, "export", "--manifest", hash, "--manifest", hash2, "--format", format, "--out", out); r.code != 0 {
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
		if md := got.Metadata; md["ump.manifests"] != hash+","+hash2 || !strings.Contains(md["ump.engines"], "go-cpu-float32") || md["ump.version"] == "" {
			t.Errorf("%s: schema metadata %v; want the two manifests, the engine and the ump build", format, md)
		}
		if got.Rows != len(csvRows)-1 || len(got.Columns) != len(csvRows[0]) {
			t.Fatalf("%s: %d rows x %d columns, CSV has %d x %d", format, got.Rows, len(got.Columns), len(csvRows)-1, len(csvRows[0]))
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
