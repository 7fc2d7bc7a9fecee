package compress

import (
	"encoding/binary"
	"math"
)

// writer packs values into bytes, least significant bit first.
type writer struct {
	b []byte
	n int // bits written
}

func newWriter(bits int) *writer { return &writer{b: make([]byte, (bits+7)/8)} }

func (w *writer) bits(v uint64, width int) {
	for width > 0 {
		off := w.n % 8
		take := min(width, 8-off)
		w.b[w.n/8] |= byte(v&(1<<take-1)) << off
		v >>= take
		width -= take
		w.n += take
	}
}

func (w *writer) f32(v float32) {
	if w.n%8 == 0 {
		binary.LittleEndian.PutUint32(w.b[w.n/8:], math.Float32bits(v))
		w.n += 32
		return
	}
	w.bits(uint64(math.Float32bits(v)), 32)
}

func (w *writer) message() Message { return Message{Payload: w.b, Bits: w.n} }

// reader unpacks what writer packed.
type reader struct {
	b []byte
	n int
}

func (r *reader) bits(width int) uint64 {
	var v uint64
	for got := 0; got < width; {
		off := r.n % 8
		take := min(width-got, 8-off)
		v |= uint64(r.b[r.n/8]>>off&(1<<take-1)) << got
		got += take
		r.n += take
	}
	return v
}

func (r *reader) f32() float32 {
	if r.n%8 == 0 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(r.b[r.n/8:]))
		r.n += 32
		return v
	}
	return math.Float32frombits(uint32(r.bits(32)))
}

// signBit is 1 for a negative value, 0 for any other.
func signBit(v float32) uint64 {
	if v < 0 {
		return 1
	}
	return 0
}
