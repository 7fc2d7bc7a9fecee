package train

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestCheckpointRoundTrip(t *testing.T) {
	s := &TrainState{Round: 7, Diverged: true,
		Vectors: map[string][][]float32{"x": {{1, 2, 3}, {4, float32(math.Inf(1)), 6}}, "v": {{0, -1, 2}, {3, 4, 5}}},
		Columns: []string{"round", "gap"},
		Rows:    [][]float64{{1, 0.5}, {2, math.NaN()}}}
	data := s.Encode()
	got, err := DecodeTrainState(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Round != 7 || !got.Diverged || !reflect.DeepEqual(got.Vectors, s.Vectors) ||
		!reflect.DeepEqual(got.Columns, s.Columns) ||
		got.Rows[0][1] != 0.5 ||
		!math.IsNaN(got.Rows[1][1]) {
		t.Fatalf("round trip changed the state: %+v", got)
	}
	if string(got.Encode()) != string(data) {
		t.Error("encoding is not deterministic")
	}
	for name, bad := range map[string][]byte{
		"magic":     append([]byte("NOTCKPT1"), data[8:]...),
		"truncated": data[:len(data)-3],
		"empty":     nil,
	} {
		if _, err := DecodeTrainState(bad); err == nil || !strings.Contains(err.Error(), "checkpoint") {
			t.Errorf("%s: %v, want a checkpoint error", name, err)
		}
	}
}
