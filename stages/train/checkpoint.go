package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// TrainState is everything needed to resume training after Round rounds: every
// named optimizer and exchange vector of every worker, the exchange's
// counters and the metric rows so far.
type TrainState struct {
	Round    int
	Diverged bool                   // training stopped at Round as diverged
	Vectors  map[string][][]float32 // name -> worker -> values
	Counters map[string]float64     // name -> value
	Columns  []string               // metric column names, "round" first
	Rows     [][]float64
}

const checkpointMagic = "UMPCKPT1"

type checkpointHeader struct {
	Round    int                `json:"round"`
	Diverged bool               `json:"diverged,omitempty"`
	Workers  int                `json:"workers"`
	Dim      int                `json:"dim"`
	Names    []string           `json:"names"`
	Counters map[string]float64 `json:"counters,omitempty"`
	Columns  []string           `json:"columns"`
	Rows     int                `json:"rows"`
}

// Encode writes a checkpoint: magic, a length-prefixed JSON header, the
// vectors (names sorted, workers in order) as little-endian float32, then
// the metric rows as little-endian float64. Equal states give equal bytes.
func (s *TrainState) Encode() []byte {
	h := checkpointHeader{
		Round:    s.Round,
		Diverged: s.Diverged,
		Counters: s.Counters,
		Columns:  s.Columns,
		Rows:     len(s.Rows),
	}
	for name, vs := range s.Vectors {
		h.Names = append(h.Names, name)
		h.Workers = len(vs)
		if len(vs) > 0 {
			h.Dim = len(vs[0])
		}
	}
	sort.Strings(h.Names)
	head, _ := json.Marshal(h)
	var b bytes.Buffer
	b.WriteString(checkpointMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(head)))
	b.Write(head)
	for _, name := range h.Names {
		for _, v := range s.Vectors[name] {
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	for _, row := range s.Rows {
		binary.Write(&b, binary.LittleEndian, row)
	}
	return b.Bytes()
}

// DecodeTrainState reads a checkpoint written by Encode.
func DecodeTrainState(data []byte) (*TrainState, error) {
	bad := func(why string) (*TrainState, error) { return nil, fmt.Errorf("checkpoint: %s", why) }
	if len(data) < len(checkpointMagic)+4 || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return bad("not an ump checkpoint (bad magic)")
	}
	data = data[len(checkpointMagic):]
	n := binary.LittleEndian.Uint32(data)
	data = data[4:]
	if uint64(n) > uint64(len(data)) {
		return bad("truncated header")
	}
	var h checkpointHeader
	if err := json.Unmarshal(data[:n], &h); err != nil {
		return bad("header: " + err.Error())
	}
	data = data[n:]
	want := len(h.Names)*h.Workers*h.Dim*4 + h.Rows*len(h.Columns)*8
	if len(data) != want {
		return bad(fmt.Sprintf("body has %d bytes, want %d", len(data), want))
	}
	s := &TrainState{
		Round:    h.Round,
		Diverged: h.Diverged,
		Vectors:  map[string][][]float32{},
		Counters: h.Counters,
		Columns:  h.Columns,
	}
	for _, name := range h.Names {
		vs := make([][]float32, h.Workers)
		for i := range vs {
			vs[i] = make([]float32, h.Dim)
			for k := range vs[i] {
				vs[i][k] = math.Float32frombits(binary.LittleEndian.Uint32(data))
				data = data[4:]
			}
		}
		s.Vectors[name] = vs
	}
	for r := 0; r < h.Rows; r++ {
		row := make([]float64, len(h.Columns))
		for k := range row {
			row[k] = math.Float64frombits(binary.LittleEndian.Uint64(data))
			data = data[8:]
		}
		s.Rows = append(s.Rows, row)
	}
	return s, nil
}
