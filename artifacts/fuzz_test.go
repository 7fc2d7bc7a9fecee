package artifacts

import (
	"bytes"
	"math"
	"testing"
)

// FuzzReadParquet feeds ReadParquet mutations of valid files (ints,
// floats with nulls, text, booleans, metadata; no rows; no columns):
// nothing may panic, and what it accepts holds no more values than its
// bound and columns of one length. make test fuzzes it for a bounded
// time; go test runs its seeds.
func FuzzReadParquet(f *testing.F) {
	for _, t := range []*Table{
		{Columns: []Column{
			{Name: "cell", Ints: []int64{1, 2, 3}},
			{Name: "alpha", Floats: []float64{2, 0, math.Inf(-1)}, Null: []bool{false, true, false}},
			{Name: "status", Strings: []string{"completed", "", "diverged"}, Null: []bool{false, false, true}},
			{Name: "diverged", Bools: []bool{false, false, true}},
		}, Metadata: map[string]string{"ump.table": "final"}},
		{Columns: []Column{{Name: "cell", Ints: []int64{}}}},
		{Metadata: map[string]string{"ump.table": "final"}},
	} {
		var b bytes.Buffer
		if err := WriteParquet(&b, t); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	const bound = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ReadParquet(data, bound)
		if err != nil {
			return
		}
		rows := tb.Rows()
		if int64(rows)*int64(len(tb.Columns)) > bound {
			t.Fatalf("accepted %d rows of %d columns, past the bound of %d values", rows, len(tb.Columns), bound)
		}
		for _, c := range tb.Columns {
			if n := max(len(c.Ints), len(c.Floats), len(c.Strings), len(c.Bools)); n != rows {
				t.Fatalf("column %s holds %d values of a table of %d rows", c.Name, n, rows)
			}
		}
	})
}
