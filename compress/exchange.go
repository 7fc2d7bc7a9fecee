package compress

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/codecs"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/kinds"
)

// Config is a cell's communication: the codec with its parameters (with
// CHOCO's gamma and the all-reduce messages' memory), and the cell seed.
type Config struct {
	Spec Spec
	Seed uint64
}

// Exchange implements algorithms.Comm for a cell and counts what it sends.
// With codec none it is exact (the algorithms' own arithmetic, bit for bit)
// and counts 32 bits per entry. Otherwise gossip is CHOCO-gossip: worker i
// sends q_i = C(x_i - xh_i), every holder of the public copy xh_i adds q_i,
// then x_i += gamma sum_j w_ij (xh_j - xh_i). An unbiased codec with
// variance bound omega (qsgd, terngrad, natural) adds q_i / (1 + omega)
// instead, CHOCO's rescaling that makes it contractive. An average sends
// t_i = x_i - from_i (plus the residual e_i with error feedback, then
// e_i = t_i - q_i) and every worker sets x_i = from_i + mean_j q_j.
//
// A message reaches every holder of the sender's copy and is counted once
// per sender (bits per worker are the mean over workers). Its state
// (copies, residuals, counters) goes into checkpoints through State and
// Counters, and comes back with Restore.
type Exchange struct {
	cfg    Config
	codec  Codec        // nil for none
	params kinds.Values // the codec's, with defaults: gamma, memory
	dim    int
	// copies and residuals per kind, created at a kind's first message.
	copies, residuals map[string][][]float32
	// sent and decoded hold each worker's message before encoding and
	// after decoding (scratch, reused every call).
	sent, decoded [][]float32
	stats         map[string]*kindStats
}

var _ algorithms.Comm = (*Exchange)(nil)

// kindStats counts one kind's messages: cumulative bits per worker, and
// the window of rounds since the last Row.
type kindStats struct {
	bits                  float64 // cumulative, per worker
	windowBits, windowRaw float64 // per worker; raw = 32 bits per entry
	errSum                float64 // sum over the window's rounds of the mean relative error
	rounds                int
}

// NewExchange returns the exchange of a cell whose workers hold dim-long vectors.
func NewExchange(cfg Config, n, dim int) (*Exchange, error) {
	e := &Exchange{cfg: cfg, dim: dim, copies: map[string][][]float32{}, residuals: map[string][][]float32{},
		sent: vectors(n, dim), decoded: vectors(n, dim), stats: map[string]*kindStats{}}
	if cfg.Spec.Codec != "none" {
		var err error
		if e.codec, e.params, err = newCodecOf(cfg.Spec); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Gossip is exact gossip (codec none) or CHOCO-gossip.
func (e *Exchange) Gossip(t int, kind string, start []float32, x [][]float32, m algorithms.Mixing) {
	if e.codec == nil {
		m.Apply(e.decoded, x)
		algorithms.Parallel(len(x), func(i int) { copy(x[i], e.decoded[i]) })
		e.count(kind, float64(32*e.dim), 0)
		return
	}
	xh, ok := e.copies[kind]
	if !ok {
		xh = vectors(len(x), e.dim)
		for i := range xh {
			copy(xh[i], start)
		}
		e.copies[kind] = xh
	}
	scale := float32(1)
	if u, ok := e.codec.(unbiased); ok {
		scale = float32(1 / (1 + u.omega(e.dim)))
	}
	bits, errs := make([]int, len(x)), make([]float64, len(x))
	algorithms.Parallel(len(x), func(i int) {
		diff, q := e.sent[i], e.decoded[i]
		for k := range diff {
			diff[k] = x[i][k] - xh[i][k]
		}
		bits[i], errs[i] = e.send(diff, q, Draw{Seed: e.cfg.Seed, Round: t, Kind: kind, Worker: i})
		for k, v := range q {
			xh[i][k] += float32(v * scale)
		}
	})
	gamma := e.params.Float("gamma")
	algorithms.Parallel(len(x), func(i int) {
		row := m.Rows[i]
		for k := range x[i] {
			s := 0.0
			for _, en := range row {
				s += float64(en.W * (float64(xh[en.J][k]) - float64(xh[i][k])))
			}
			x[i][k] += float32(gamma * s)
		}
	})
	e.countAll(kind, bits, errs)
}

// Average is the exact mean (codec none) or a compressed one, with error
// feedback when configured.
func (e *Exchange) Average(t int, kind string, x, from [][]float32) {
	if e.codec == nil {
		mean := e.decoded[0]
		algorithms.Mean(mean, x)
		algorithms.Parallel(len(x), func(i int) { copy(x[i], mean) })
		e.count(kind, float64(32*e.dim), 0)
		return
	}
	var res [][]float32
	if e.params.String("memory") == "residual" {
		if res = e.residuals[kind]; res == nil {
			res = vectors(len(x), e.dim)
			e.residuals[kind] = res
		}
	}
	bits, errs := make([]int, len(x)), make([]float64, len(x))
	q := e.decoded
	algorithms.Parallel(len(x), func(i int) {
		msg := e.sent[i]
		for k := range msg {
			msg[k] = x[i][k] - from[i][k]
			if res != nil {
				msg[k] += res[i][k]
			}
		}
		bits[i], errs[i] = e.send(msg, q[i], Draw{Seed: e.cfg.Seed, Round: t, Kind: kind, Worker: i})
		if res != nil {
			for k := range msg {
				res[i][k] = msg[k] - q[i][k]
			}
		}
	})
	mean := e.sent[0] // the messages are sent
	algorithms.Mean(mean, q)
	algorithms.Parallel(len(x), func(i int) {
		for k := range mean {
			x[i][k] = from[i][k] + mean[k]
		}
	})
	e.countAll(kind, bits, errs)
}

// CountExact counts one exact message of kind from every worker, as
// Gossip and Average do with codec none, for a round whose communication
// ran elsewhere (the GPU engine's device-resident rounds).
func (e *Exchange) CountExact(kind string) { e.count(kind, float64(32*e.dim), 0) }

// send encodes t and decodes the message into q; it returns the message's
// bits and the relative error |q - t| / |t| (0 when t = 0).
func (e *Exchange) send(t, q []float32, at Draw) (int, float64) {
	msg := e.codec.Encode(t, at)
	e.codec.Decode(msg, at, q)
	var diff, norm float64
	for k, v := range t {
		d := float64(q[k]) - float64(v)
		diff += float64(d * d)
		norm += float64(float64(v) * float64(v))
	}
	if norm == 0 {
		return msg.Bits, 0
	}
	return msg.Bits, math.Sqrt(diff / norm)
}

func (e *Exchange) countAll(kind string, bits []int, errs []float64) {
	var b, r float64
	for i := range bits {
		b += float64(bits[i])
		r += errs[i]
	}
	n := float64(len(bits))
	e.count(kind, b/n, r/n)
}

// count records one round's message of a kind: bits per worker and the
// mean relative error.
func (e *Exchange) count(kind string, bits, relErr float64) {
	s := e.stats[kind]
	if s == nil {
		s = &kindStats{}
		e.stats[kind] = s
	}
	s.bits += bits
	s.windowBits += bits
	s.windowRaw += float64(32 * e.dim)
	s.errSum += relErr
	s.rounds++
}

// Row returns the values of Columns now and starts a new window.
func (e *Exchange) Row() []float64 {
	row := []float64{0}
	others := slices.DeleteFunc(
		slices.Sorted(maps.Keys(e.stats)),
		func(k string) bool { return slices.Contains(codecs.Sent, k) },
	)
	for _, k := range slices.Concat(codecs.Sent, others) { // a fixed order: the sum's
		if s := e.stats[k]; s != nil {
			row[0] += s.bits
		}
	}
	for _, k := range codecs.Sent {
		s := e.stats[k]
		if s == nil {
			row = append(row, math.NaN(), math.NaN(), math.NaN())
			continue
		}
		ratio, relErr := math.NaN(), math.NaN()
		if s.rounds > 0 {
			ratio, relErr = s.windowRaw/s.windowBits, s.errSum/float64(s.rounds)
		}
		row = append(row, s.bits, ratio, relErr)
		s.windowBits, s.windowRaw, s.errSum, s.rounds = 0, 0, 0, 0
	}
	return row
}

// State returns the exchange's vectors by checkpoint name.
func (e *Exchange) State() map[string][][]float32 {
	out := map[string][][]float32{}
	for k, v := range e.copies {
		out["choco_"+k] = v
	}
	for k, v := range e.residuals {
		out["residual_"+k] = v
	}
	return out
}

// Counters returns the counters a checkpoint keeps.
func (e *Exchange) Counters() map[string]float64 {
	out := map[string]float64{}
	for k, s := range e.stats {
		out["bits_"+k] = s.bits
		out["window_bits_"+k] = s.windowBits
		out["window_raw_"+k] = s.windowRaw
		out["window_error_"+k] = s.errSum
		out["window_rounds_"+k] = float64(s.rounds)
	}
	return out
}

// Restore loads what State and Counters saved; vectors of other names are
// ignored.
func (e *Exchange) Restore(vecs map[string][][]float32, counters map[string]float64) error {
	for name, v := range vecs {
		for prefix, into := range map[string]map[string][][]float32{"choco_": e.copies, "residual_": e.residuals} {
			k, ok := strings.CutPrefix(name, prefix)
			if !ok {
				continue
			}
			if len(v) != len(e.sent) || len(v[0]) != e.dim {
				return fmt.Errorf(
					"checkpoint state %s has %d x %d entries, want %d x %d",
					name,
					len(v),
					len(v[0]),
					len(e.sent),
					e.dim,
				)
			}
			into[k] = v
		}
	}
	for name, bits := range counters {
		if k, ok := strings.CutPrefix(name, "bits_"); ok {
			e.stats[k] = &kindStats{
				bits:       bits,
				windowBits: counters["window_bits_"+k],
				windowRaw:  counters["window_raw_"+k],
				errSum:     counters["window_error_"+k],
				rounds:     int(counters["window_rounds_"+k]),
			}
		}
	}
	return nil
}

func vectors(n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
	}
	return out
}
