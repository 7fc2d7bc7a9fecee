package artifacts

import (
	"math"
	"reflect"
	"strings"
	"testing"
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
	out, err := ReadParquet([]byte(b.String()))
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
	if _, err := ReadParquet([]byte("PAR1 not really")); err == nil || !strings.Contains(err.Error(), "Parquet") {
		t.Fatalf("a damaged file gave %v, want an error naming Parquet", err)
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
