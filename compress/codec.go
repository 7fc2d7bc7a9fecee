package compress

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/ump-lab/ump/codecs"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
)

// Message is one encoded vector: the payload a worker would send and its
// size in bits (the payload holds ceil(Bits/8) bytes).
type Message struct {
	Payload []byte
	Bits    int
}

// Draw names one message, and so its randomness: the cell seed, the round,
// the vector kind and the sending worker.
type Draw struct {
	Seed   uint64
	Round  int
	Kind   string
	Worker int
}

// own is the sender's private stream (stochastic rounding).
func (d Draw) own() *rand.Rand {
	return rng.New(d.Seed, "compress/"+d.Kind, uint64(d.Round), uint64(d.Worker))
}

// shared is the stream every worker draws alike in a round for a kind
// (randomk's indices, powersgd's test matrix), so receivers regenerate it.
func (d Draw) shared() *rand.Rand {
	return rng.New(d.Seed, "compress-shared/"+d.Kind, uint64(d.Round))
}

// Codec turns a vector into a message and back. Implementations are
// stateless and safe for concurrent use.
type Codec interface {
	Encode(t []float32, at Draw) Message
	// Decode writes the decoded vector into dst, whose length is the
	// encoded vector's.
	Decode(m Message, at Draw, dst []float32)
}

// unbiased is a codec whose decoded message is an unbiased estimate of
// its input, with E|C(t) - t|^2 <= omega |t|^2 for d entries.
type unbiased interface {
	omega(d int) float64
}

// Spec is a codec with its parameters (the manifest's compression block):
// Params as Codecs declares them for the codec; missing ones take their
// defaults.
type Spec struct {
	Codec  string
	Params kinds.Values
}

// newCodec is a codec's constructor.
type newCodec func(v kinds.Values) Codec

// Codecs binds each codec codecs.Family declares to its constructor.
var Codecs = kinds.Bind(&codecs.Family, map[string]newCodec{
	"none":      func(kinds.Values) Codec { return plain{} },
	"fp16":      func(kinds.Values) Codec { return fp16{} },
	"topk":      func(v kinds.Values) Codec { return topk{v.Float("ratio")} },
	"randomk":   func(v kinds.Values) Codec { return randomk{v.Float("ratio")} },
	"threshold": func(v kinds.Values) Codec { return threshold{v.Float("tau")} },
	"qsgd":      func(v kinds.Values) Codec { return qsgd{v.Int("levels"), v.Int("bucket")} },
	"terngrad":  func(kinds.Values) Codec { return terngrad{} },
	"sign":      func(kinds.Values) Codec { return sign{} },
	"efsign":    func(kinds.Values) Codec { return sign{} },
	"onebit":    func(kinds.Values) Codec { return onebit{} },
	"natural":   func(kinds.Values) Codec { return natural{} },
	"powersgd":  func(v kinds.Values) Codec { return powersgd{v.Int("rank")} },
})

// NewCodec returns the codec s names, after filling its parameters'
// defaults and checking them.
func NewCodec(s Spec) (Codec, error) {
	c, _, err := newCodecOf(s)
	return c, err
}

// newCodecOf is NewCodec that also returns the parameters it used.
func newCodecOf(s Spec) (Codec, kinds.Values, error) {
	k, ok := Codecs.Lookup(s.Codec)
	if !ok {
		return nil, nil, fmt.Errorf("unknown codec %q; use one of %v", s.Codec, Codecs.Names())
	}
	params := k.WithDefaults(s.Params, kinds.Cell{})
	if problems := k.ValidateParams(params); len(problems) > 0 {
		return nil, nil, fmt.Errorf("%s: %s: %s", s.Codec, problems[0].Param, problems[0].Msg)
	}
	return k.New(params), params, nil
}

// plain sends float32 values (32 bits each).
type plain struct{}

func (plain) Encode(t []float32, _ Draw) Message {
	w := newWriter(32 * len(t))
	for _, v := range t {
		w.f32(v)
	}
	return w.message()
}

func (plain) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		dst[k] = r.f32()
	}
}

// fp16 sends IEEE half-precision values (16 bits each, round to nearest
// even; beyond 65504 they become infinite).
type fp16 struct{}

func (fp16) Encode(t []float32, _ Draw) Message {
	w := newWriter(16 * len(t))
	for _, v := range t {
		w.bits(uint64(toHalf(v)), 16)
	}
	return w.message()
}

func (fp16) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		dst[k] = fromHalf(uint16(r.bits(16)))
	}
}

// toHalf rounds a float32 to the nearest half (ties to even).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp, mant := int(b>>23&0xff), b&0x7fffff
	if exp == 0xff { // Inf, NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // a half subnormal: m 2^-24 with m = M 2^(exp-126)
		shift := uint(126 - exp)
		if shift > 24 {
			return sign
		}
		return sign | uint16(roundShift(mant|0x800000, shift))
	}
	m := roundShift(mant, 13)
	// A carry out of the mantissa moves to the next exponent, and from the
	// largest finite half to infinity: both are plain additions.
	return sign | uint16(uint32(e)<<10+m)
}

// roundShift is m >> shift rounded to nearest, ties to even.
func roundShift(m uint32, shift uint) uint32 {
	q, rem, half := m>>shift, m&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp, m := uint32(h>>10&0x1f), uint32(h&0x3ff)
	switch exp {
	case 0:
		v := float32(m) * (1.0 / (1 << 24))
		if sign != 0 {
			return -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | m<<13)
}

// sparse writes entries as (uint32 index, float32 value) pairs: 64 bits
// each.
func sparse(t []float32, idx []int) Message {
	w := newWriter(64 * len(idx))
	for _, k := range idx {
		w.bits(uint64(k), 32)
		w.f32(t[k])
	}
	return w.message()
}

func decodeSparse(m Message, dst []float32) {
	clear(dst)
	r := reader{b: m.Payload}
	for range m.Bits / 64 {
		k := r.bits(32)
		dst[k] = r.f32()
	}
}

// keep is how many of d entries topk and randomk send: max(1, floor(ratio d)).
func keep(ratio float64, d int) int { return max(1, int(ratio*float64(d))) }

// topk sends the k entries of largest magnitude (ties: lower index first),
// as index-value pairs.
type topk struct{ ratio float64 }

func (c topk) Encode(t []float32, _ Draw) Message {
	return sparse(t, largest(t, keep(c.ratio, len(t))))
}

func (topk) Decode(m Message, _ Draw, dst []float32) { decodeSparse(m, dst) }

// largest returns, ascending, the indices of the k entries of t with the
// largest magnitude; among equal magnitudes the lower indices.
func largest(t []float32, k int) []int {
	if k >= len(t) {
		idx := make([]int, len(t))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	mag := make([]float32, len(t))
	for i, v := range t {
		mag[i] = float32(math.Abs(float64(v)))
	}
	cut := kthLargest(slices.Clone(mag), k)
	above := 0 // entries strictly above the cut all go in
	for _, v := range mag {
		if v > cut {
			above++
		}
	}
	ties := k - above
	idx := make([]int, 0, k)
	for i, v := range mag {
		if v > cut || (v == cut && ties > 0) {
			if v == cut {
				ties--
			}
			idx = append(idx, i)
		}
	}
	return idx
}

// kthLargest returns the k-th largest value of a (1-based), reordering a
// (quickselect with median-of-three pivots).
func kthLargest(a []float32, k int) float32 {
	lo, hi, want := 0, len(a)-1, k-1 // want: index in descending order
	for lo < hi {
		mid := lo + (hi-lo)/2
		p := median3(a[lo], a[mid], a[hi])
		i, j := lo, hi
		for i <= j {
			for a[i] > p {
				i++
			}
			for a[j] < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return a[want]
		}
	}
	return a[want]
}

func median3(a, b, c float32) float32 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// randomk sends the values of k entries chosen at random, the same indices
// on every worker in a round (drawn from the cell seed, so none are sent).
// Decoding is unscaled, as in GRACE, so it is contractive (what
// CHOCO-gossip needs); d/k times the decoded vector is unbiased.
type randomk struct{ ratio float64 }

// indices draws k distinct indices of d, ascending (Floyd's algorithm).
func (c randomk) indices(d int, at Draw) []int {
	k, r := keep(c.ratio, d), at.shared()
	chosen := make(map[int]bool, k)
	for j := d - k; j < d; j++ {
		v := r.IntN(j + 1)
		if chosen[v] {
			v = j
		}
		chosen[v] = true
	}
	idx := make([]int, 0, k)
	for v := range chosen {
		idx = append(idx, v)
	}
	slices.Sort(idx)
	return idx
}

func (c randomk) Encode(t []float32, at Draw) Message {
	idx := c.indices(len(t), at)
	w := newWriter(32 * len(idx))
	for _, k := range idx {
		w.f32(t[k])
	}
	return w.message()
}

func (c randomk) Decode(m Message, at Draw, dst []float32) {
	clear(dst)
	r := reader{b: m.Payload}
	for _, k := range c.indices(len(dst), at) {
		dst[k] = r.f32()
	}
}

// threshold sends the entries with |t| > tau as index-value pairs; the
// message size varies.
type threshold struct{ tau float64 }

func (c threshold) Encode(t []float32, _ Draw) Message {
	var idx []int
	for k, v := range t {
		if math.Abs(float64(v)) > c.tau {
			idx = append(idx, k)
		}
	}
	return sparse(t, idx)
}

func (threshold) Decode(m Message, _ Draw, dst []float32) { decodeSparse(m, dst) }

// qsgd (Alistarh et al.) sends, per bucket of entries, the bucket's L2
// norm (32 bits) and per entry a sign bit and a level l in 0..levels
// (bits.Len(levels) bits), rounded stochastically so that
// E[norm sign l/levels] = t: unbiased.
type qsgd struct{ levels, bucket int }

// omega is QSGD's variance bound min(b/s^2, sqrt(b)/s) for buckets of b.
func (c qsgd) omega(d int) float64 {
	b, s := float64(min(c.bucket, d)), float64(c.levels)
	return min(b/(s*s), math.Sqrt(b)/s)
}

func (c qsgd) width() int { return bits.Len(uint(c.levels)) }

func (c qsgd) Encode(t []float32, at Draw) Message {
	buckets := (len(t) + c.bucket - 1) / c.bucket
	w := newWriter(32*buckets + (1+c.width())*len(t))
	r := at.own()
	s := float64(c.levels)
	for b := 0; b < buckets; b++ {
		part := t[b*c.bucket : min(len(t), (b+1)*c.bucket)]
		norm := 0.0
		for _, v := range part {
			norm += float64(float64(v) * float64(v))
		}
		norm = math.Sqrt(norm)
		w.f32(float32(norm))
		for _, v := range part {
			level := 0
			if norm > 0 {
				level = int(float64(math.Abs(float64(v))/norm*s) + float64(r.Float64()))
			}
			w.bits(signBit(v), 1)
			w.bits(uint64(min(level, c.levels)), c.width())
		}
	}
	return w.message()
}

func (c qsgd) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for b := 0; b*c.bucket < len(dst); b++ {
		norm := float64(r.f32())
		for k := b * c.bucket; k < min(len(dst), (b+1)*c.bucket); k++ {
			neg := r.bits(1)
			v := float32(norm * float64(r.bits(c.width())) / float64(c.levels))
			if neg == 1 {
				v = -v
			}
			dst[k] = v
		}
	}
}

func signBit(v float32) uint64 {
	if v < 0 {
		return 1
	}
	return 0
}

// terngrad (Wen et al.) sends s = max|t| (32 bits) and per entry 2 bits for
// a value in {-1, 0, 1}, nonzero with probability |t|/s: unbiased. (No
// gradient clipping, which would bias it.)
type terngrad struct{}

func (terngrad) Encode(t []float32, at Draw) Message {
	w := newWriter(32 + 2*len(t))
	s := 0.0
	for _, v := range t {
		s = max(s, math.Abs(float64(v)))
	}
	w.f32(float32(s))
	r := at.own()
	for _, v := range t {
		code := uint64(0) // 0: zero, 1: +s, 2: -s
		if s > 0 && r.Float64() < math.Abs(float64(v))/s {
			code = 1 + signBit(v)
		}
		w.bits(code, 2)
	}
	return w.message()
}

// omega: E|C(t) - t|^2 = max|t| |t|_1 - |t|^2 <= (sqrt(d) - 1) |t|^2.
func (terngrad) omega(d int) float64 { return math.Sqrt(float64(d)) - 1 }

func (terngrad) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	s := r.f32()
	for k := range dst {
		switch r.bits(2) {
		case 0:
			dst[k] = 0
		case 1:
			dst[k] = s
		default:
			dst[k] = -s
		}
	}
}

// sign sends mean|t| (32 bits) and one sign bit per entry (0 counts as
// positive); it decodes to ±mean|t|. efsign is the same message, always
// with error feedback.
type sign struct{}

func (sign) Encode(t []float32, _ Draw) Message {
	w := newWriter(32 + len(t))
	s := 0.0
	for _, v := range t {
		s += math.Abs(float64(v))
	}
	w.f32(float32(s / float64(len(t))))
	for _, v := range t {
		w.bits(signBit(v), 1)
	}
	return w.message()
}

func (sign) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	s := r.f32()
	for k := range dst {
		dst[k] = s
		if r.bits(1) == 1 {
			dst[k] = -s
		}
	}
}

// onebit (1-bit SGD, Seide et al.) sends the means of the non-negative and
// of the negative entries (32 bits each) and one bit per entry choosing
// between them.
type onebit struct{}

func (onebit) Encode(t []float32, _ Draw) Message {
	w := newWriter(64 + len(t))
	var pos, neg float64
	var np, nn int
	for _, v := range t {
		if v < 0 {
			neg += float64(v)
			nn++
		} else {
			pos += float64(v)
			np++
		}
	}
	w.f32(float32(pos / float64(max(np, 1))))
	w.f32(float32(neg / float64(max(nn, 1))))
	for _, v := range t {
		w.bits(signBit(v), 1)
	}
	return w.message()
}

func (onebit) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	pos, neg := r.f32(), r.f32()
	for k := range dst {
		dst[k] = pos
		if r.bits(1) == 1 {
			dst[k] = neg
		}
	}
}

// natural (Horváth et al.) rounds every entry stochastically to one of the
// two nearest powers of two, unbiased, and sends a sign bit and the 8-bit
// float32 exponent code (0 for zero): 9 bits per entry.
type natural struct{}

func (natural) Encode(t []float32, at Draw) Message {
	w := newWriter(9 * len(t))
	r := at.own()
	for _, v := range t {
		b := math.Float32bits(v)
		code, mant := b>>23&0xff, b&0x7fffff
		// |v| = (1 + mant/2^23) 2^(code-127): round up with probability
		// mant/2^23. Below the smallest normal, |v| = mant 2^-149 rounds
		// to 2^-126 (code 1) with probability mant/2^23, else to 0.
		if mant != 0 && r.Uint32()&0x7fffff < mant {
			code++
		}
		w.bits(uint64(b>>31), 1)
		w.bits(uint64(min(code, 254)), 8)
	}
	return w.message()
}

// omega: rounding to a power of two has variance at most |t|^2/8.
func (natural) omega(int) float64 { return 1.0 / 8 }

func (natural) Decode(m Message, _ Draw, dst []float32) {
	r := reader{b: m.Payload}
	for k := range dst {
		neg := uint32(r.bits(1))
		dst[k] = math.Float32frombits(neg<<31 | uint32(r.bits(8))<<23)
	}
}

// powersgd (Vogels et al.) views the vector as a rows x cols matrix M
// (cols = ceil(sqrt d), zero-padded) and sends a rank-r approximation from
// one power iteration: P = M Q with Q a Gaussian matrix drawn alike on
// every worker each round, P orthonormalised, then Q' = M^T P; the message
// is P and Q' (32 bits per entry), the decoded vector P Q'^T. r is capped
// at min(rows, cols). There is no warm start: Q is fresh every round.
type powersgd struct{ rank int }

func (c powersgd) shape(d int) (rows, cols, rank int) {
	cols = int(math.Ceil(math.Sqrt(float64(d))))
	rows = (d + cols - 1) / cols
	return rows, cols, min(c.rank, rows, cols)
}

func (c powersgd) Encode(t []float32, at Draw) Message {
	rows, cols, rank := c.shape(len(t))
	entry := func(i, j int) float64 {
		if k := i*cols + j; k < len(t) {
			return float64(t[k])
		}
		return 0
	}
	q := make([]float64, cols*rank)
	r := at.shared()
	for k := range q {
		q[k] = rng.Normal(r)
	}
	p := make([]float64, rows*rank) // P = M Q
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if m := entry(i, j); m != 0 {
				for a := 0; a < rank; a++ {
					p[i*rank+a] += float64(m * q[j*rank+a])
				}
			}
		}
	}
	orthonormalise(p, rows, rank)
	clear(q) // Q' = M^T P
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if m := entry(i, j); m != 0 {
				for a := 0; a < rank; a++ {
					q[j*rank+a] += float64(m * p[i*rank+a])
				}
			}
		}
	}
	w := newWriter(32 * rank * (rows + cols))
	for _, v := range p {
		w.f32(float32(v))
	}
	for _, v := range q {
		w.f32(float32(v))
	}
	return w.message()
}

// orthonormalise applies Gram-Schmidt to the columns of the rows x rank
// matrix p (row-major); a column that vanishes stays zero.
func orthonormalise(p []float64, rows, rank int) {
	for a := 0; a < rank; a++ {
		for b := 0; b < a; b++ {
			dot := 0.0
			for i := 0; i < rows; i++ {
				dot += float64(p[i*rank+a] * p[i*rank+b])
			}
			for i := 0; i < rows; i++ {
				p[i*rank+a] -= float64(dot * p[i*rank+b])
			}
		}
		norm := 0.0
		for i := 0; i < rows; i++ {
			norm += float64(p[i*rank+a] * p[i*rank+a])
		}
		if norm = math.Sqrt(norm); norm > 1e-30 {
			for i := 0; i < rows; i++ {
				p[i*rank+a] /= norm
			}
		} else {
			for i := 0; i < rows; i++ {
				p[i*rank+a] = 0
			}
		}
	}
}

func (c powersgd) Decode(m Message, _ Draw, dst []float32) {
	rows, cols, rank := c.shape(len(dst))
	r := reader{b: m.Payload}
	p, q := make([]float32, rows*rank), make([]float32, cols*rank)
	for k := range p {
		p[k] = r.f32()
	}
	for k := range q {
		q[k] = r.f32()
	}
	for k := range dst {
		i, j := k/cols, k%cols
		s := float32(0)
		for a := 0; a < rank; a++ {
			s += float32(p[i*rank+a] * q[j*rank+a])
		}
		dst[k] = s
	}
}

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
