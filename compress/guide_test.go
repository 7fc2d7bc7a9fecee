package compress

import (
	"encoding/binary"
	"math"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/ump-lab/ump/codecs"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
)

// int8codec is the codec docs/adding-a-codec.md adds: max|t| (32 bits) and
// per entry t/max|t| rounded to one of 255 levels (8 bits).
type int8codec struct{}

func (int8codec) Encode(t []float32, _ Draw) Message {
	var s float32
	for _, v := range t {
		s = max(s, float32(math.Abs(float64(v))))
	}
	w := newWriter(32 + 8*len(t))
	w.f32(s)
	for _, v := range t {
		q := 0.0
		if s > 0 {
			q = math.Round(float64(v / s * 127))
		}
		w.bits(uint64(uint8(int8(q))), 8)
	}
	return w.message()
}

func (int8codec) Decode(m Message, _ Draw, dst []float32) {
	r := &reader{b: m.Payload}
	s := r.f32()
	for k := range dst {
		dst[k] = float32(int8(uint8(r.bits(8)))) / 127 * s
	}
}

// TestANewCodecFollowsTheGuide adds int8 as docs/adding-a-codec.md says:
// declared in codecs.Family (with the parameters every compressing codec
// takes), bound in Codecs. A manifest then takes it, its messages have the
// bits the guide's table row says and decode within half a level, and
// CHOCO-gossip over a ring with it reaches consensus with the mean kept.
func TestANewCodecFollowsTheGuide(t *testing.T) {
	fp16, _ := codecs.Family.Lookup("fp16")
	declared, bound := codecs.Family.Kinds, Codecs.Kinds
	name := "int8" // or, where someone followed the guide with int8 itself, a name the catalogue lacks
	for _, taken := codecs.Family.Lookup(name); taken; _, taken = codecs.Family.Lookup(name) {
		name += "-again"
	}
	codecs.Family.Kinds = append(
		slices.Clip(declared),
		kinds.Kind[struct{}]{Name: name, Doc: "max|t| and 8 bits per entry", Params: fp16.Params},
	)
	Codecs.Kinds = append(
		slices.Clip(bound),
		kinds.Kind[newCodec]{Name: name, Params: fp16.Params, New: func(kinds.Values) Codec { return int8codec{} }},
	)
	t.Cleanup(func() { codecs.Family.Kinds, Codecs.Kinds = declared, bound })

	if _, err := manifests.Parse("m.yaml", []byte("version: 1\nname: m\ntask: {dataset: quadratic}\nrounds: 2\nlr: "+
		"0.1\nalgorithm: {name: d-sum}\n"+
		"compression: {codec: "+name+", gamma: 0.5}\n")); err != nil {
		t.Fatalf("a manifest with the new codec: %v", err)
	}
	const n, d = 8, 100
	vec := randomVector(3, d)
	c := mustCodec(t, Spec{Codec: name})
	msg := c.Encode(vec, Draw{})
	if msg.Bits != 32+8*d {
		t.Errorf("%d bits, want 32 + 8d = %d", msg.Bits, 32+8*d)
	}
	out := make([]float32, d)
	c.Decode(msg, Draw{}, out)
	s := math.Float32frombits(binary.LittleEndian.Uint32(msg.Payload))
	for k := range out {
		if math.Abs(float64(out[k]-vec[k])) > float64(s)/127/2*1.0001 {
			t.Fatalf("entry %d: %g decoded as %g, more than half a level (%g) off", k, vec[k], out[k], s/127/2)
		}
	}
	ex, err := NewExchange(Config{Spec: Spec{Codec: name, Params: kinds.Values{"gamma": 0.5}}, Seed: 1}, n, d)
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float32, n)
	for i := range x {
		x[i] = randomVector(uint64(i), d)
	}
	start := consensusDistance(x)
	for r := range 300 {
		ex.Gossip(r, "x", nil, x, ring(t, n))
	}
	if end := consensusDistance(x); !(end < 1e-6*start) {
		t.Errorf("CHOCO-gossip with int8: consensus distance %g -> %g", start, end)
	}
	if row := ex.Row(); codecs.Columns[0] != "bits_sent_per_worker" || row[0] != 300*(32+8*d) {
		t.Errorf("%s %v, want %d (300 messages of 32 + 8d bits)", codecs.Columns[0], row[0], 300*(32+8*d))
	}
}

// TestTheDocsNameEveryCodec: docs/algorithms.md's list of the codecs
// ("The codecs carry GRACE's names: ...") names each codec the catalogue
// declares, and no other (step 4 of docs/adding-a-codec.md).
func TestTheDocsNameEveryCodec(t *testing.T) {
	doc, err := os.ReadFile("../docs/algorithms.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)The codecs carry GRACE's names: (.*?); \\[the manifests").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/algorithms.md has no sentence \"The codecs carry GRACE's names: ...; [the manifests page]\"")
	}
	var listed []string
	for _, name := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllSubmatch(m[1], -1) {
		listed = append(listed, string(name[1]))
	}
	var declared []string
	for _, k := range codecs.Family.Kinds {
		declared = append(declared, k.Name)
	}
	slices.Sort(listed)
	slices.Sort(declared)
	if !slices.Equal(listed, declared) {
		t.Errorf("docs/algorithms.md names the codecs %q; the catalogue declares %q", listed, declared)
	}
}
