package compress

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ump-lab/ump/kinds"
)

func randomVector(seed uint64, d int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	t := make([]float32, d)
	for k := range t {
		t[k] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()))
	}
	return t
}

func mustCodec(t *testing.T, s Spec) Codec {
	t.Helper()
	c, err := NewCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBitsFromFirstPrinciples checks, for every codec and several sizes,
// that the message size is what the codec's format says and that the
// payload holds exactly that many bits, and that decoding fills the shape.
func TestBitsFromFirstPrinciples(t *testing.T) {
	for _, d := range []int{1, 7, 100, 1001} {
		vec := randomVector(uint64(d), d)
		vec[0] = 0 // a zero entry
		above := 0
		for _, v := range vec {
			if math.Abs(float64(v)) > 0.5 {
				above++
			}
		}
		k10 := max(1, d/10)
		cols := int(math.Ceil(math.Sqrt(float64(d))))
		rows := (d + cols - 1) / cols
		cases := []struct {
			spec Spec
			bits int
		}{
			{Spec{Codec: "none"}, 32 * d},
			{Spec{Codec: "fp16"}, 16 * d},
			{Spec{Codec: "topk", Params: kinds.Values{"ratio": 0.1}}, 64 * k10},
			{Spec{Codec: "randomk", Params: kinds.Values{"ratio": 0.1}}, 32 * k10},
			{Spec{Codec: "threshold", Params: kinds.Values{"tau": 0.5}}, 64 * above},
			{Spec{Codec: "qsgd", Params: kinds.Values{"levels": 16, "bucket": 64}}, 32*((d+63)/64) + (1+5)*d},
			{Spec{Codec: "qsgd", Params: kinds.Values{"levels": 1, "bucket": 512}}, 32*((d+511)/512) + 2*d},
			{Spec{Codec: "terngrad"}, 32 + 2*d},
			{Spec{Codec: "sign"}, 32 + d},
			{Spec{Codec: "efsign"}, 32 + d},
			{Spec{Codec: "onebit"}, 64 + d},
			{Spec{Codec: "natural"}, 9 * d},
			{Spec{Codec: "powersgd", Params: kinds.Values{"rank": 2}}, 32 * min(2, rows, cols) * (rows + cols)},
		}
		for _, c := range cases {
			codec := mustCodec(t, c.spec)
			at := Draw{Seed: 1, Round: 3, Kind: "x", Worker: 2}
			msg := codec.Encode(vec, at)
			if msg.Bits != c.bits || len(msg.Payload) != (c.bits+7)/8 {
				t.Errorf(
					"%s d=%d: %d bits in %d bytes, want %d bits in %d bytes",
					c.spec.Codec,
					d,
					msg.Bits,
					len(msg.Payload),
					c.bits,
					(c.bits+7)/8,
				)
			}
			out := make([]float32, d)
			for k := range out {
				out[k] = float32(math.NaN())
			}
			codec.Decode(msg, at, out)
			for k, v := range out {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s d=%d: decoded entry %d is %v", c.spec.Codec, d, k, v)
				}
			}
		}
	}
}

func TestNoneIsExact(t *testing.T) {
	vec := randomVector(1, 333)
	vec[5] = float32(math.Inf(1))
	out := make([]float32, len(vec))
	c := mustCodec(t, Spec{Codec: "none"})
	c.Decode(c.Encode(vec, Draw{}), Draw{}, out)
	if !slices.Equal(out, vec) {
		t.Fatal("none does not decode to its input")
	}
}

// TestUnbiased: the mean of many encodings of one vector approaches it at
// the rate 1/sqrt(N) for randomk (scaled by d/k), qsgd, terngrad and
// natural; sign, which is biased, does not.
func TestUnbiased(t *testing.T) {
	const d = 64
	vec := randomVector(11, d)
	cases := []struct {
		spec   Spec
		scale  float32
		biased bool
	}{
		{Spec{Codec: "randomk", Params: kinds.Values{"ratio": 0.25}}, 4, false},
		{Spec{Codec: "qsgd", Params: kinds.Values{"levels": 4, "bucket": 16}}, 1, false},
		{Spec{Codec: "terngrad"}, 1, false},
		{Spec{Codec: "natural"}, 1, false},
		{Spec{Codec: "sign"}, 1, true},
	}
	for _, c := range cases {
		codec := mustCodec(t, c.spec)
		// worst z-score over entries of the mean of n encodings.
		worstZ := func(n int, offset int) float64 {
			sum, sq := make([]float64, d), make([]float64, d)
			out := make([]float32, d)
			for i := range n {
				at := Draw{Seed: 9, Round: offset + i, Kind: "x", Worker: 1}
				codec.Decode(codec.Encode(vec, at), at, out)
				for k, v := range out {
					f := float64(v * c.scale)
					sum[k] += f
					sq[k] += f * f
				}
			}
			worst := 0.0
			for k := range sum {
				mean := sum[k] / float64(n)
				sd := math.Sqrt(max(sq[k]/float64(n)-mean*mean, 0))
				if diff := math.Abs(mean - float64(vec[k])); diff > 0 {
					worst = max(worst, diff/(max(sd, 1e-12)/math.Sqrt(float64(n))))
				}
			}
			return worst
		}
		z := worstZ(20000, 0)
		// 64 entries: the largest of 64 |N(0,1)| exceeds 4.5 with
		// probability ~4e-4.
		if !c.biased && z > 4.5 {
			t.Errorf("%s: the mean of 20000 encodings is %.1f standard errors from the input", c.spec.Codec, z)
		}
		if c.biased && z < 50 {
			t.Errorf("%s: expected a clear bias, worst z-score %.1f", c.spec.Codec, z)
		}
	}
}

// TestErrorFeedbackInvariant: with error feedback, the decoded messages
// plus the final residual add up to the inputs, for a biased codec.
func TestErrorFeedbackInvariant(t *testing.T) {
	for _, spec := range []Spec{{Codec: "topk", Params: kinds.Values{"ratio": 0.05}}, {Codec: "sign"}, {
		Codec: "powersgd", Params: kinds.Values{"rank": 1}}} {
		ex, err := NewExchange(Config{Spec: spec, Seed: 3}, 3, 200)
		if err != nil {
			t.Fatal(err)
		}
		x, from := vectors(3, 200), vectors(3, 200)
		inputs, sent := make([]float64, 200), make([]float64, 200)
		for round := range 40 {
			for i := range x {
				for k, v := range randomVector(uint64(100*round+i), 200) {
					x[i][k] = from[i][k] + v
					inputs[k] += float64(v) / 3
				}
			}
			prev := slices.Clone(from[0])
			ex.Average(round, "x", x, from)
			for k := range sent {
				sent[k] += float64(x[0][k]) - float64(prev[k])
			}
			for i := range x {
				if !slices.Equal(x[i], x[0]) {
					t.Fatalf("%s: workers differ after a compressed average", spec.Codec)
				}
				copy(from[i], x[i])
			}
		}
		res := ex.residuals["x"]
		worst := 0.0
		for k := range inputs {
			r := 0.0
			for i := range res {
				r += float64(res[i][k]) / 3
			}
			worst = max(worst, math.Abs(sent[k]+r-inputs[k]))
		}
		if worst > 1e-3 {
			t.Errorf("%s: sum of sent means + mean residual misses the sum of input means by %g", spec.Codec, worst)
		}
	}
}

func TestCodecParameterErrors(t *testing.T) {
	for _, s := range []Spec{{Codec: "topk", Params: kinds.Values{"ratio": 0.0}}, {Codec: "randomk",
		Params: kinds.Values{"ratio": 1.5}}, {Codec: "qsgd", Params: kinds.Values{"levels": 0, "bucket": 8}},
		{Codec: "powersgd", Params: kinds.Values{"rank": 0}}, {Codec: "zip"}, {Codec: "threshold",
			Params: kinds.Values{"tau": -1.0}}} {
		if _, err := NewCodec(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

// TestSharedDrawsAreAlikeOnEveryWorker: randomk's indices and powersgd's
// test matrix come from the stream every worker draws alike in a round,
// so every worker's message of a round is decoded with the same indices
// and matrix; another round draws others.
func TestSharedDrawsAreAlikeOnEveryWorker(t *testing.T) {
	const d = 200
	in := make([]float32, d)
	for k := range in {
		in[k] = float32(k%7) - 3
	}
	for _, spec := range []Spec{{Codec: "randomk", Params: kinds.Values{"ratio": 0.1}}, {Codec: "powersgd"}} {
		c, err := NewCodec(spec)
		if err != nil {
			t.Fatal(err)
		}
		decoded := func(worker, round int) []float32 {
			at := Draw{Seed: 9, Round: round, Kind: "x", Worker: worker}
			out := make([]float32, d)
			c.Decode(c.Encode(in, at), at, out)
			return out
		}
		if w0, w3 := decoded(0, 4), decoded(3, 4); !slices.Equal(w0, w3) {
			t.Errorf(
				"%s: workers 0 and 3 compress the same vector differently in one round: the shared draws differ",
				spec.Codec,
			)
		}
		if slices.Equal(decoded(0, 4), decoded(0, 5)) {
			t.Errorf("%s: rounds 4 and 5 draw alike", spec.Codec)
		}
	}
}
