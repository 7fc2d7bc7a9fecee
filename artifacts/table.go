package artifacts

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	pqmetadata "github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Column is a named column; exactly one of Ints, Floats, Strings, Bools is
// used. Null, when set, marks the rows that hold no value (null in Arrow
// and Parquet, an empty field in CSV).
type Column struct {
	Name    string
	Ints    []int64
	Floats  []float64
	Strings []string
	Bools   []bool
	Null    []bool
}

// Len returns the number of values in the column.
func (c *Column) Len() int { return max(len(c.Ints), len(c.Floats), len(c.Strings), len(c.Bools)) }

// valid is the Arrow validity of the column's rows (nil: all valid).
func (c *Column) valid() []bool {
	if c.Null == nil {
		return nil
	}
	v := make([]bool, len(c.Null))
	for i, null := range c.Null {
		v[i] = !null
	}
	return v
}

// Table is a list of equally long columns, with key-value metadata that
// Arrow and Parquet files carry in their schema.
type Table struct {
	Columns  []Column
	Metadata map[string]string
}

// Rows returns the number of rows.
func (t *Table) Rows() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return t.Columns[0].Len()
}

// Column returns the column with the given name, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// Select is a new table of the given rows of t, in that order, with t's
// metadata.
func (t *Table) Select(rows []int) *Table {
	out := &Table{Columns: make([]Column, len(t.Columns)), Metadata: t.Metadata}
	for i, c := range t.Columns {
		o := &out.Columns[i]
		o.Name = c.Name
		switch {
		case c.Ints != nil:
			o.Ints = []int64{}
		case c.Strings != nil:
			o.Strings = []string{}
		case c.Bools != nil:
			o.Bools = []bool{}
		default:
			o.Floats = []float64{}
		}
		for _, r := range rows {
			switch {
			case c.Ints != nil:
				o.Ints = append(o.Ints, c.Ints[r])
			case c.Strings != nil:
				o.Strings = append(o.Strings, c.Strings[r])
			case c.Bools != nil:
				o.Bools = append(o.Bools, c.Bools[r])
			default:
				o.Floats = append(o.Floats, c.Floats[r])
			}
			if c.Null != nil {
				o.Null = append(o.Null, c.Null[r])
			}
		}
	}
	return out
}

func (t *Table) check() error {
	for _, c := range t.Columns {
		if c.Len() != t.Rows() || c.Null != nil && len(c.Null) != t.Rows() {
			return fmt.Errorf(
				"table column %q has %d values (%d null flags), want %d",
				c.Name,
				c.Len(),
				len(c.Null),
				t.Rows(),
			)
		}
	}
	return nil
}

// record builds the table's Arrow record batch; the caller releases it.
func (t *Table) record() (arrow.RecordBatch, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(t.Columns))
	arrays := make([]arrow.Array, len(t.Columns))
	for i, c := range t.Columns {
		valid := c.valid()
		switch {
		case c.Ints != nil:
			b := array.NewInt64Builder(mem)
			b.AppendValues(c.Ints, valid)
			fields[i], arrays[i] = arrow.Field{Name: c.Name, Type: arrow.PrimitiveTypes.Int64}, b.NewArray()
		case c.Strings != nil:
			b := array.NewStringBuilder(mem)
			b.AppendValues(c.Strings, valid)
			fields[i], arrays[i] = arrow.Field{Name: c.Name, Type: arrow.BinaryTypes.String}, b.NewArray()
		case c.Bools != nil:
			b := array.NewBooleanBuilder(mem)
			b.AppendValues(c.Bools, valid)
			fields[i], arrays[i] = arrow.Field{Name: c.Name, Type: arrow.FixedWidthTypes.Boolean}, b.NewArray()
		default:
			b := array.NewFloat64Builder(mem)
			b.AppendValues(c.Floats, valid)
			fields[i], arrays[i] = arrow.Field{Name: c.Name, Type: arrow.PrimitiveTypes.Float64}, b.NewArray()
		}
		fields[i].Nullable = c.Null != nil // stage outputs have none: their bytes, and digests, stay as they were
		defer arrays[i].Release()
	}
	var meta *arrow.Metadata
	if len(t.Metadata) > 0 {
		keys := slices.Sorted(maps.Keys(t.Metadata))
		values := make([]string, len(keys))
		for i, k := range keys {
			values[i] = t.Metadata[k]
		}
		m := arrow.NewMetadata(keys, values)
		meta = &m
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, meta), arrays, int64(t.Rows())), nil
}

// WriteArrow encodes the table as an Arrow IPC file.
func WriteArrow(t *Table) ([]byte, error) {
	rec, err := t.record()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteParquet writes the table as a Parquet file (Snappy-compressed, one
// row group).
func WriteParquet(w io.Writer, t *Table) error {
	rec, err := t.record()
	if err != nil {
		return err
	}
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	return pqarrow.WriteTable(tbl, w, max(1, tbl.NumRows()), props, pqarrow.DefaultWriterProps())
}

// ReadArrow decodes an Arrow IPC file written by WriteArrow (or any IPC
// file of int64, float64, string and boolean columns).
func ReadArrow(data []byte) (*Table, error) {
	r, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading Arrow table: %w", err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for k := 0; k < r.NumRecords(); k++ {
		rec, err := r.RecordBatch(k)
		if err != nil {
			return nil, fmt.Errorf("reading Arrow table: %w", err)
		}
		recs = append(recs, rec)
	}
	t, err := fromRecords(r.Schema(), recs)
	if err != nil {
		return nil, fmt.Errorf("reading Arrow table: %w", err)
	}
	return t, nil
}

// ReadParquet decodes a Parquet file written by WriteParquet (or any file
// of int64, float64, string and boolean columns), its nulls and metadata
// included, of at most maxValues values (rows × columns), which the
// footer's claim is checked against before anything is decoded: a file
// of a few bytes can claim a hundred million rows of one repeated value.
// A malformed file is an error, never a panic.
func ReadParquet(data []byte, maxValues int64) (*Table, error) {
	schema, recs, kv, err := decodeParquet(data, maxValues)
	if err != nil {
		return nil, fmt.Errorf("reading Parquet table: %w", err)
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	t, err := fromRecords(schema, recs)
	if err != nil {
		return nil, fmt.Errorf("reading Parquet table: %w", err)
	}
	for i, k := range kv.Keys() {
		if k == "ARROW:schema" { // pqarrow's copy of the schema, not the table's metadata
			continue
		}
		if t.Metadata == nil {
			t.Metadata = map[string]string{}
		}
		t.Metadata[k] = kv.Values()[i]
	}
	return t, nil
}

// decodeParquet reads a Parquet file with arrow-go into record batches
// (the caller releases them) and the file's key-value metadata. arrow-go
// trusts a file's footer: a column chunk that lies outside the file, or a
// row count of 2^33, makes it allocate more than any machine has (a fatal
// error, which no recover catches), so the footer is checked first and
// rows are read in batches. What arrow-go does on other malformed input
// (it panics: a negative length, a column shorter than the row count, an
// unknown logical type) is an error here.
func decodeParquet(data []byte, maxValues int64) (
	schema *arrow.Schema, recs []arrow.RecordBatch, kv pqmetadata.KeyValueMetadata, err error,
) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed file: %v", r)
		}
		if err != nil { // recs holds what was read before the error
			for _, rec := range recs {
				rec.Release()
			}
			schema, recs, kv = nil, nil, nil
		}
	}()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, nil, err
	}
	defer pf.Close()
	if err := checkFooter(pf.MetaData(), int64(len(data))); err != nil {
		return nil, nil, nil, err
	}
	footerRows, cols := pf.NumRows(), int64(pf.MetaData().Schema.NumColumns())
	if footerRows < 0 || footerRows > 0 && cols > maxValues/footerRows {
		return nil, nil, nil, fmt.Errorf("its footer claims %d rows of %d columns, "+
			"more than the %d values such a file can hold", footerRows, cols, maxValues)
	}
	// arrow-go reserves room for a whole batch before it decodes one.
	fr, err := pqarrow.NewFileReader(
		pf,
		pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows},
		memory.NewGoAllocator(),
	)
	if err != nil {
		return nil, nil, nil, err
	}
	if footerRows == 0 { // a table of no rows: its schema alone (arrow-go finds no column readers to open)
		schema, err := fr.Schema()
		return schema, nil, pf.MetaData().KeyValueMetadata(), err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return nil, recs, nil, err
	}
	if claimed := pf.NumRows(); rows != claimed {
		return nil, recs, nil, fmt.Errorf("its footer claims %d rows, its columns hold %d", claimed, rows)
	}
	return rr.Schema(), recs, pf.MetaData().KeyValueMetadata(), nil
}

// parquetBatchRows is how many rows ReadParquet decodes at a time.
const parquetBatchRows = 1 << 16

// checkFooter reports a column chunk whose bytes, as the footer gives
// them, do not lie inside a file of size bytes, and row groups whose rows
// do not add up to the file's.
func checkFooter(md *pqmetadata.FileMetaData, size int64) error {
	var rows int64
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		rows += rg.NumRows()
		for c := range rg.NumColumns() {
			col, err := rg.ColumnChunk(c)
			if err != nil {
				return err
			}
			start := col.DataPageOffset()
			if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && col.DictionaryPageOffset() < start {
				start = col.DictionaryPageOffset()
			}
			if n := col.TotalCompressedSize(); start < 0 || n < 0 || n > size-start {
				return fmt.Errorf(
					"row group %d, column %d: the footer puts its %d bytes at offset %d, outside the file's %d bytes",
					g,
					c,
					n,
					start,
					size,
				)
			}
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("the footer gives the file %d rows and its row groups %d", md.NumRows, rows)
	}
	return nil
}

// fromRecords gathers record batches of one schema into a Table; a
// column's Null is set where its field is nullable or a row is null.
func fromRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (*Table, error) {
	t := &Table{Columns: make([]Column, schema.NumFields())}
	if md := schema.Metadata(); md.Len() > 0 {
		t.Metadata = map[string]string{}
		for i, k := range md.Keys() {
			t.Metadata[k] = md.Values()[i]
		}
	}
	for i, f := range schema.Fields() {
		t.Columns[i].Name = f.Name
		switch f.Type.ID() {
		case arrow.INT64:
			t.Columns[i].Ints = []int64{}
		case arrow.FLOAT64:
			t.Columns[i].Floats = []float64{}
		case arrow.STRING:
			t.Columns[i].Strings = []string{}
		case arrow.BOOL:
			t.Columns[i].Bools = []bool{}
		default:
			return nil, fmt.Errorf("column %q has unsupported type %s", f.Name, f.Type)
		}
		if f.Nullable { // written so, and written back so (Table.record)
			t.Columns[i].Null = []bool{}
		}
	}
	for _, rec := range recs {
		for i := range t.Columns {
			c, a := &t.Columns[i], rec.Column(i)
			for j := 0; j < a.Len(); j++ {
				if a.IsNull(j) && c.Null == nil {
					c.Null = make([]bool, c.Len())
				}
				if c.Null != nil {
					c.Null = append(c.Null, a.IsNull(j))
				}
				switch a := a.(type) {
				case *array.Int64:
					c.Ints = append(c.Ints, a.Value(j))
				case *array.Float64:
					c.Floats = append(c.Floats, a.Value(j))
				case *array.String:
					c.Strings = append(c.Strings, a.Value(j))
				case *array.Boolean:
					c.Bools = append(c.Bools, a.Value(j))
				}
			}
		}
	}
	return t, t.check()
}

// WriteCSV writes the table with a header row. Floats use Go's shortest
// round-trip form, so the CSV holds the exact values; a null is an empty
// field. CSV has no place for the metadata.
func WriteCSV(w io.Writer, t *Table) error {
	if err := t.check(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	row := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		row[i] = c.Name
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for r := 0; r < t.Rows(); r++ {
		for i, c := range t.Columns {
			switch {
			case c.Null != nil && c.Null[r]:
				row[i] = ""
			case c.Bools != nil:
				row[i] = strconv.FormatBool(c.Bools[r])
			case c.Ints != nil:
				row[i] = strconv.FormatInt(c.Ints[r], 10)
			case c.Strings != nil:
				row[i] = c.Strings[r]
			default:
				row[i] = strconv.FormatFloat(c.Floats[r], 'g', -1, 64)
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Formats are the file formats Encode writes, by name.
var Formats = []string{"csv", "arrow", "parquet"}

// Encode writes the table in a format of Formats: CSV, an Arrow IPC file
// or Parquet.
func Encode(t *Table, format string) ([]byte, error) {
	var b bytes.Buffer
	var err error
	switch format {
	case "csv":
		err = WriteCSV(&b, t)
	case "arrow":
		return WriteArrow(t)
	case "parquet":
		err = WriteParquet(&b, t)
	default:
		return nil, fmt.Errorf("format %q: use csv, arrow or parquet", format)
	}
	return b.Bytes(), err
}
