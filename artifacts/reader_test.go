package artifacts

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// npmTools is where .ci/run installs the independent readers (npm
// apache-arrow and parquet-wasm).
func npmTools(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("../.npm-tools/node_modules")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; .ci/run installs it with the readers")
	}
	for _, m := range []string{"apache-arrow", "parquet-wasm"} {
		if _, err := os.Stat(filepath.Join(dir, m)); err != nil {
			t.Skipf(
				"npm %s is not in %s (npm install --no-save --prefix .npm-tools apache-arrow@21 parquet-wasm@0.8; "+
					".ci/run installs them)",
				m,
				dir,
			)
		}
	}
	return dir
}

// TestIndependentReaders writes a table as Arrow IPC and Parquet and reads
// both back with the npm readers.
func TestIndependentReaders(t *testing.T) {
	modules := npmTools(t)
	tbl := &Table{Columns: []Column{
		{Name: "round", Ints: []int64{1, 2, 3}},
		{Name: "loss", Floats: []float64{0.5, math.NaN(), 1e-300}},
		{Name: "algorithm", Strings: []string{"d-sum", "gt-dsum", "ünï"}},
	}}
	dir := t.TempDir()
	ipc, err := WriteArrow(tbl)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "t.arrow"), ipc, 0o644)
	var pq bytes.Buffer
	if err := WriteParquet(&pq, tbl); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "t.parquet"), pq.Bytes(), 0o644)
	for _, format := range []string{"arrow", "parquet"} {
		cmd := exec.Command("node", "testdata/read_table.js", format, filepath.Join(dir, "t."+format))
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: node reader: %v\n%s", format, err, out)
		}
		var got struct {
			Rows    int
			Columns []struct {
				Name, Type string
				Values     []any
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out)
		}
		if got.Rows != 3 || len(got.Columns) != 3 {
			t.Fatalf("%s: %d rows, %d columns", format, got.Rows, len(got.Columns))
		}
		want := [][]any{{"1", "2", "3"}, {0.5, "NaN", 1e-300}, {"d-sum", "gt-dsum", "ünï"}}
		types := []string{"Int64", "Float64", "Utf8"}
		for i, c := range got.Columns {
			if c.Name != tbl.Columns[i].Name || c.Type != types[i] {
				t.Errorf("%s: column %d is %s %s, want %s %s", format, i, c.Name, c.Type, tbl.Columns[i].Name, types[i])
			}
			for r, v := range c.Values {
				if strconv.Quote(jsonString(v)) != strconv.Quote(jsonString(want[i][r])) {
					t.Errorf("%s: %s[%d] = %v, want %v", format, c.Name, r, v, want[i][r])
				}
			}
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
