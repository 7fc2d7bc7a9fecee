package artifacts

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

func TestArrowRoundTrip(t *testing.T) {
	in := &Table{Columns: []Column{
		{Name: "round", Ints: []int64{1, 2, 3}},
		{Name: "loss", Floats: []float64{0.5, math.NaN(), 1e-300}},
		{Name: "algorithm", Strings: []string{"d-sum", "gt-dsum", ""}},
	}}
	data, err := WriteArrow(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:6]) != "ARROW1" {
		t.Fatalf("not an Arrow IPC file: starts %q", data[:6])
	}
	out, err := ReadArrow(data)
	if err != nil {
		t.Fatal(err)
	}
	if out.Rows() != 3 || !reflect.DeepEqual(out.Column("round").Ints, in.Columns[0].Ints) ||
		!reflect.DeepEqual(out.Column("algorithm").Strings, in.Columns[2].Strings) {
		t.Fatalf("round trip changed the table: %+v", out)
	}
	f := out.Column("loss").Floats
	if f[0] != 0.5 || !math.IsNaN(f[1]) || f[2] != 1e-300 {
		t.Fatalf("floats changed: %v", f)
	}
	again, _ := WriteArrow(out)
	if string(again) != string(data) {
		t.Error("writing the same table twice gave different bytes")
	}
}

func TestWriteCSV(t *testing.T) {
	tab := &Table{Columns: []Column{
		{Name: "round", Ints: []int64{1, 2}},
		{Name: "gap", Floats: []float64{0.1, math.Inf(1)}},
		{Name: "name", Strings: []string{"a,b", "c"}},
	}}
	var b strings.Builder
	if err := WriteCSV(&b, tab); err != nil {
		t.Fatal(err)
	}
	want := "round,gap,name\n1,0.1,\"a,b\"\n2,+Inf,c\n"
	if b.String() != want {
		t.Errorf("CSV = %q, want %q", b.String(), want)
	}
	bad := &Table{Columns: []Column{{Name: "a", Ints: []int64{1}}, {Name: "b", Ints: []int64{}}}}
	if err := WriteCSV(&b, bad); err == nil {
		t.Error("ragged table accepted")
	}
}

func TestParquetRoundTripKeepsNullsBoolsAndMetadata(t *testing.T) {
	in := &Table{Columns: []Column{
		{Name: "cell", Ints: []int64{1, 2, 3}},
		{Name: "alpha", Floats: []float64{2, 0, math.Inf(-1)}, Null: []bool{false, true, false}},
		{Name: "status", Strings: []string{"completed", "", "diverged"}, Null: []bool{false, false, true}},
		{Name: "diverged", Bools: []bool{false, false, true}},
	}, Metadata: map[string]string{"ump.table": "final"}}
	var b strings.Builder
	if err := WriteParquet(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadParquet([]byte(b.String()), 1<<27)
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{Columns: []Column{
		{Name: "cell", Ints: []int64{1, 2, 3}},
		{Name: "alpha", Floats: []float64{2, 0, math.Inf(-1)}, Null: []bool{false, true, false}},
		{Name: "status", Strings: []string{"completed", "", ""}, Null: []bool{false, false, true}},
		{Name: "diverged", Bools: []bool{false, false, true}},
	}, Metadata: map[string]string{"ump.table": "final"}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("read back %+v\nwant %+v", out, want)
	}
	_, err = ReadParquet([]byte("PAR1 not really"), 1<<27)
	if err == nil || !strings.Contains(err.Error(), "Parquet") {
		t.Fatalf("a damaged file gave %v, want an error naming Parquet", err)
	}
}

// TestParquetReadsATableOfNoRows: the final table of a sweep with no
// finished cell has no rows (and no columns, the parameter columns coming
// from the cells); it reads back as such, with its metadata (arrow-go
// alone finds no column readers to open and fails).
func TestParquetReadsATableOfNoRows(t *testing.T) {
	for _, in := range []*Table{
		{Metadata: map[string]string{"ump.table": "final"}},
		{Columns: []Column{{Name: "cell", Ints: []int64{}}, {Name: "status", Strings: []string{}, Null: []bool{}}},
			Metadata: map[string]string{"ump.table": "final"}},
	} {
		var b strings.Builder
		if err := WriteParquet(&b, in); err != nil {
			t.Fatal(err)
		}
		out, err := ReadParquet([]byte(b.String()), 1<<27)
		if err != nil {
			t.Fatalf("%d columns: %v", len(in.Columns), err)
		}
		if out.Rows() != 0 || len(out.Columns) != len(in.Columns) || out.Metadata["ump.table"] != "final" {
			t.Fatalf("read back %+v", out)
		}
	}
}

// TestParquetReadsATableOfSeveralBatches reads a table longer than one
// of ReadParquet's batches back whole and in order.
func TestParquetReadsATableOfSeveralBatches(t *testing.T) {
	n := 2*parquetBatchRows + 5
	in := &Table{
		Columns: []Column{
			{Name: "row", Ints: make([]int64, n)},
			{Name: "half", Floats: make([]float64, n), Null: make([]bool, n)},
		},
	}
	for i := range n {
		in.Columns[0].Ints[i] = int64(i)
		in.Columns[1].Floats[i] = float64(i) / 2
		in.Columns[1].Null[i] = i%3 == 0
	}
	var b bytes.Buffer
	if err := WriteParquet(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadParquet(b.Bytes(), 1<<27)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if in.Columns[1].Null[i] {
			in.Columns[1].Floats[i] = 0 // a null reads back as the zero value
		}
	}
	if !reflect.DeepEqual(out.Columns, in.Columns) {
		t.Fatalf("a table of %d rows read back as %d rows, or changed", n, out.Rows())
	}
}

// TestReadParquetTurnsDamageIntoErrors damages a valid file one byte at
// a time: arrow-go panics on some of these files (a negative length, a
// column shorter than the row count, an unknown logical type), and
// ReadParquet must return an error instead.
func TestReadParquetTurnsDamageIntoErrors(t *testing.T) {
	var b bytes.Buffer
	in := &Table{
		Columns: []Column{
			{Name: "cell", Ints: []int64{1, 2}},
			{Name: "status", Strings: []string{"completed", "diverged"}},
			{Name: "accuracy", Floats: []float64{0.5, 0.25}},
		},
		Metadata: map[string]string{"ump.table": "final"},
	}
	if err := WriteParquet(&b, in); err != nil {
		t.Fatal(err)
	}
	for pos := range b.Len() {
		for _, v := range []byte{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff} {
			damaged := bytes.Clone(b.Bytes())
			damaged[pos] = v
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("byte %d set to %#x: ReadParquet panicked: %v", pos, v, r)
					}
				}()
				_, _ = ReadParquet(damaged, 1<<27) // any error is right; a panic is not
			}()
		}
	}
}

// TestReadParquetSurvivesALyingFooter rewrites a valid file's footer to
// claim a column chunk of 1 TiB, or 2^33 rows: arrow-go would reserve
// that much memory and die of it (fatal, not a panic), and ReadParquet
// must refuse each file instead.
func TestReadParquetSurvivesALyingFooter(t *testing.T) {
	var b bytes.Buffer
	if err := WriteParquet(&b, &Table{Columns: []Column{{Name: "cell", Ints: []int64{1, 2, 3}}, {Name: "status",
		Strings: []string{"a", "b", "c"}}}}); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rg := pf.MetaData().RowGroup(0)
	col, err := rg.ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	// In the footer's Thrift compact encoding an i64 field that follows
	// the field before it is a header byte 0x16 and a zigzag varint. So
	// are ColumnMetaData's fields 6 and 7 (uncompressed and compressed
	// sizes), RowGroup's fields 2 and 3 (byte size and rows), and
	// FileMetaData's field 3 (rows), between the schema list's last stop
	// byte and the header of the one-struct list of row groups (0x19 0x1c).
	field := func(v int64) []byte { return binary.AppendUvarint([]byte{0x16}, uint64(v<<1)) }
	chunkSizes := func(compressed int64) []byte {
		return append(field(col.TotalUncompressedSize()), field(compressed)...)
	}
	groupRows := func(rows int64) []byte { return append(field(rg.TotalByteSize()), field(rows)...) }
	fileRows := func(rows int64) []byte { return append(append([]byte{0x00}, field(rows)...), 0x19, 0x1c) }
	for _, c := range []struct {
		name, want string
		edits      [][2][]byte // the footer's bytes, and what they become
		maxValues  int64
	}{
		{"a chunk of 1 TiB", "outside the file",
			[][2][]byte{{chunkSizes(col.TotalCompressedSize()), chunkSizes(1 << 40)}}, 1 << 40},
		{"a row group of 2^33 rows in a file of 3", "its row groups 8589934592",
			[][2][]byte{{groupRows(3), groupRows(1 << 33)}}, 1 << 40},
		{"a row group and a file of 2^33 rows", "its columns hold 3",
			[][2][]byte{{groupRows(3), groupRows(1 << 33)}, {fileRows(3), fileRows(1 << 33)}}, 1 << 40},
		// Refused before any decoding, where the reader knows how many
		// values such a file can hold.
		{"a file of 2^33 rows, past the values it can hold",
			"claims 8589934592 rows of 2 columns, more than the 134217728 values",
			[][2][]byte{{groupRows(3), groupRows(1 << 33)}, {fileRows(3), fileRows(1 << 33)}}, 1 << 27},
	} {
		footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		footer := bytes.Clone(data[len(data)-8-footerLen : len(data)-8])
		for _, e := range c.edits {
			if n := bytes.Count(footer, e[0]); n != 1 {
				t.Fatalf("%s: the footer holds %x %d times, want once", c.name, e[0], n)
			}
			footer = bytes.Replace(footer, e[0], e[1], 1)
		}
		lying := append(bytes.Clone(data[:len(data)-8-footerLen]), footer...)
		lying = binary.LittleEndian.AppendUint32(lying, uint32(len(footer)))
		lying = append(lying, "PAR1"...)
		if _, err := ReadParquet(lying, c.maxValues); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s gave %v, want an error naming %q", c.name, err, c.want)
		}
	}
}

func TestSelectTakesTheRowsInOrder(t *testing.T) {
	in := &Table{Columns: []Column{
		{Name: "cell", Ints: []int64{1, 2, 3}},
		{Name: "acc", Floats: []float64{0.1, 0.2, 0.3}, Null: []bool{false, true, false}},
		{Name: "status", Strings: []string{"a", "b", "c"}},
		{Name: "diverged", Bools: []bool{true, false, false}},
	}, Metadata: map[string]string{"k": "v"}}
	got := in.Select([]int{2, 0})
	want := &Table{Columns: []Column{
		{Name: "cell", Ints: []int64{3, 1}},
		{Name: "acc", Floats: []float64{0.3, 0.1}, Null: []bool{false, false}},
		{Name: "status", Strings: []string{"c", "a"}},
		{Name: "diverged", Bools: []bool{false, true}},
	}, Metadata: map[string]string{"k": "v"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Select gave %+v, want %+v", got, want)
	}
	if none := in.Select(nil); none.Rows() != 0 || none.Columns[1].Floats == nil || none.Columns[3].Bools == nil {
		t.Fatalf("Select of no rows lost the columns' types: %+v", none)
	}
}
