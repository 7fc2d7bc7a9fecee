package cpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn/nntest"
)

// pinnedNumbers are, per CPU engine version and model, the digests of the
// gradients and evaluation scores that TestEngineNumbersArePinned computes
// with gonum's sgemm (the same bits on every amd64 host). Stored results
// are keyed by the engine's name: a change to the engine's numbers without
// a new cpuVersion would give different numbers under the same cell keys.
var pinnedNumbers = map[string]map[string]string{
	"go-cpu-float32/v2": {
		"lenet [1 28 28]":  "41e26e901adbba543fa9ff5ff37d58bde0612fc18372f3c0b49fa36d4bd37597",
		"lenet [3 32 32]":  "c30d9cdd0cf2e570b5c89f8164e50e60c51c05f385a5237804b56f504a766a54",
		"cnn [1 28 28]":    "86163eaefc2721f5f82ed36c4b62a26ee4193a62e519535cb7604326987965d0",
		"embedding-bag []": "8e57ba61dad3c671c91d72f365f49e5fcf209caac2ac831df64ff5db9cf9416f",
		"mlp [1 28 28]":    "b36a853070f1def935c60c26813a58ed1d3e5ad91f4f7611a3b917545c259eb4",
	},
}

// TestEngineNumbersArePinned computes a step of gradients and an
// evaluation of every paper model, with gonum's sgemm, and checks their
// digests against those pinned for cpuVersion.
func TestEngineNumbersArePinned(t *testing.T) {
	saved := backend
	backend = blasBackend{name: "gonum (pinned numbers)"}
	defer func() { backend = saved }()
	pinned, ok := pinnedNumbers[cpuVersion]
	if !ok {
		t.Fatalf("no numbers pinned for %s", cpuVersion)
	}
	for _, c := range []struct {
		model string
		data  *datasets.Dataset
	}{
		{"lenet", nntest.RandomData([]int{1, 28, 28}, 10, 300, 0, 0)},
		{"lenet", nntest.RandomData([]int{3, 32, 32}, 10, 300, 0, 0)},
		{"cnn", nntest.RandomData([]int{1, 28, 28}, 62, 100, 0, 0)},
		{"embedding-bag", nntest.RandomData(nil, 4, 300, 500, 12)},
		{"mlp", nntest.RandomData([]int{1, 28, 28}, 10, 300, 0, 0)},
	} {
		name := fmt.Sprintf("%s %v", c.model, c.data.Shape)
		h := sha256.New()
		put := func(v ...float64) {
			for _, x := range v {
				binary.Write(h, binary.LittleEndian, math.Float64bits(x))
			}
		}
		for _, g := range gradientsWith(t, c.model, c.data, 2) {
			for _, v := range g {
				put(float64(v))
			}
		}
		data := nntest.WithTest(c.data, c.data.Train.Len()-1)
		e, err := New(c.model, data, 7)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float32, e.Params())
		e.Init(p)
		scores, err := e.Evaluate([][]float32{p}, &data.Test)
		if err != nil {
			t.Fatal(err)
		}
		put(scores[0].Loss, scores[0].Accuracy)
		if got := hex.EncodeToString(h.Sum(nil)); got != pinned[name] {
			t.Errorf("%s: the CPU engine's numbers changed (digest %s, pinned %q for %s): a change of numbers needs a new cpuVersion (nn/cpu/engine.go), with its digests pinned here",
				name, got, pinned[name], cpuVersion)
		}
	}
}
