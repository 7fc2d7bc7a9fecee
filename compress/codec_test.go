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
				t.Errorf("%s d=%d: %d bits in %d bytes, want %d bits in %d bytes", c.spec.Codec, d, msg.Bits, len(msg.Payload), c.bits, (c.bits+7)/8)
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

// TestHalfRoundTrip: every finite half survives float32 and back, and
// float32 values round to the nearest half.
func TestHalfRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN
		}
		if got := toHalf(fromHalf(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x -> %g -> %#04x", h, fromHalf(uint16(h)), got)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		f := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(50)-30)))
		got := float64(fromHalf(toHalf(f)))
		// The nearest half: compare with the neighbours of the result.
		h := toHalf(f)
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb&0x7c00 == 0x7c00 {
				continue
			}
			if other := float64(fromHalf(nb)); math.Abs(other-float64(f)) < math.Abs(got-float64(f)) && math.Abs(float64(f)) < 65504 {
				t.Fatalf("%g -> %g, but %g is nearer", f, got, other)
			}
		}
	}
	if !math.IsInf(float64(fromHalf(toHalf(1e6))), 1) || fromHalf(toHalf(1e-9)) != 0 {
		t.Error("fp16 overflow must give +Inf and underflow 0")
	}
}

// TestTopKSelectsExactly compares topk with a full sort, with ties.
func TestTopKSelectsExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		d := 1 + r.IntN(300)
		vec := make([]float32, d)
		for k := range vec {
			vec[k] = float32(r.IntN(21) - 10) // many ties, zeros, both signs
		}
		ratio := r.Float64()
		want := make([]int, d)
		for k := range want {
			want[k] = k
		}
		slices.SortStableFunc(want, func(a, b int) int {
			ma, mb := math.Abs(float64(vec[a])), math.Abs(float64(vec[b]))
			switch {
			case ma > mb:
				return -1
			case ma < mb:
				return 1
			}
			return 0
		})
		want = want[:keep(ratio, d)]
		slices.Sort(want)
		if got := largest(vec, keep(ratio, d)); !slices.Equal(got, want) {
			t.Fatalf("trial %d d=%d k=%d: indices %v, want %v", trial, d, keep(ratio, d), got, want)
		}
		c := mustCodec(t, Spec{Codec: "topk", Params: kinds.Values{"ratio": ratio}})
		out := make([]float32, d)
		c.Decode(c.Encode(vec, Draw{}), Draw{}, out)
		for k := range out {
			if in := slices.Contains(want, k); (in && out[k] != vec[k]) || (!in && out[k] != 0) {
				t.Fatalf("trial %d: decoded entry %d = %g", trial, k, out[k])
			}
		}
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
	for _, spec := range []Spec{{Codec: "topk", Params: kinds.Values{"ratio": 0.05}}, {Codec: "sign"}, {Codec: "powersgd", Params: kinds.Values{"rank": 1}}} {
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
	for _, s := range []Spec{{Codec: "topk", Params: kinds.Values{"ratio": 0.0}}, {Codec: "randomk", Params: kinds.Values{"ratio": 1.5}}, {Codec: "qsgd", Params: kinds.Values{"levels": 0, "bucket": 8}},
		{Codec: "powersgd", Params: kinds.Values{"rank": 0}}, {Codec: "zip"}, {Codec: "threshold", Params: kinds.Values{"tau": -1.0}}} {
		if _, err := NewCodec(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

// TestOnebitDecodesTheTwoMeans: onebit sends the mean of the non-negative
// entries and the mean of the negative ones; each entry decodes to its
// sign's mean.
func TestOnebitDecodesTheTwoMeans(t *testing.T) {
	in := []float32{3, -1, 1, -3, 0}
	c, err := NewCodec(Spec{Codec: "onebit"})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(in))
	c.Decode(c.Encode(in, Draw{}), Draw{}, got)
	pos, neg := float32(4.0/3), float32(-2) // (3+1+0)/3 and (-1-3)/2, by hand
	if want := []float32{pos, neg, pos, neg, pos}; !slices.Equal(got, want) {
		t.Errorf("onebit decodes %v as %v, want %v", in, got, want)
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
			t.Errorf("%s: workers 0 and 3 compress the same vector differently in one round: the shared draws differ", spec.Codec)
		}
		if slices.Equal(decoded(0, 4), decoded(0, 5)) {
			t.Errorf("%s: rounds 4 and 5 draw alike", spec.Codec)
		}
	}
}
