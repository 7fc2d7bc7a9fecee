package compress

import (
	"fmt"
	"math/rand/v2"

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
