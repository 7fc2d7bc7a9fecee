package cpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/nntest"
)

// pinnedNumbers are, per CPU engine version and model, the digests of the
// gradients and evaluation scores that TestEngineNumbersArePinned computes
// on every kernel path (the same bits on every machine, arm64 included:
// TestArm64GivesThePinnedNumbers). Stored results are keyed by the
// engine's name: a change to the engine's numbers without a new Name
// would give different numbers under the same cell keys.
var pinnedNumbers = map[string]map[string]string{
	"go-cpu-float32/v3": {
		"lenet [1 28 28]":  "bb1d9a1744c1e2a82e06703910f1a497ed5b73b8a9a4e53961bafe8cf4af2332",
		"lenet [3 32 32]":  "3631a2123db41c811e84f73c0b74c2e480115ada49319ab45ecc268fa6f59879",
		"cnn [1 28 28]":    "49f311b53cf5c957c8d30feb9ba6611a3eb48250233bd2249459b61e0223dda2",
		"embedding-bag []": "7245fe34c70c6a72c6da9510e81856131696f070f6768d416d6860b098d8844b",
		"mlp [1 28 28]":    "7a3f9ff1275f2fd411ed4b1c56e8de53c9d0d910c3950a166173331034e90e6f",
	},
}

// TestEngineNumbersArePinned computes a step of gradients and an
// evaluation of every paper model on every kernel path this CPU runs, and
// checks their digests against those pinned for the engine's Name.
func TestEngineNumbersArePinned(t *testing.T) {
	pinned, ok := pinnedNumbers[Name()]
	if !ok {
		t.Fatalf("no numbers pinned for %s", Name())
	}
	onEveryPath(t, func(path string) {
		for name, got := range engineDigests(t) {
			if got != pinned[name] {
				t.Errorf(
					"%s on kernel path %s: the CPU engine's numbers changed (digest %s, pinned %q for %s): a change "+
						"of numbers needs a new Name (nn/cpu/engine.go), with its digests pinned here",
					name,
					path,
					got,
					pinned[name],
					Name(),
				)
			}
		}
	})
}

// engineDigests computes, for every paper model, a digest of a step's
// gradients (two workers, batches of 6 and 7 samples, different
// parameters) and of an evaluation's scores (on 9 samples): small enough
// for the go path under qemu. The EMNIST CNN, nearly 30 times LeNet's
// arithmetic a sample, takes batches of 2 and 3 and 3 test samples: at
// LeNet's sizes its matrix products took nine tenths of the go path's
// time under qemu.
func engineDigests(t testing.TB) map[string]string {
	out := map[string]string{}
	sixAndSeven := [][]int{{0, 1, 2, 3, 4, 5}, {6, 2, 5, 1, 3, 0, 4}}
	for _, c := range []struct {
		model   string
		data    *datasets.Dataset
		batches [][]int
		test    int
	}{
		{"lenet", nntest.RandomData([]int{1, 28, 28}, 10, 16, 0, 0), sixAndSeven, 9},
		{"lenet", nntest.RandomData([]int{3, 32, 32}, 10, 16, 0, 0), sixAndSeven, 9},
		{"cnn", nntest.RandomData([]int{1, 28, 28}, 62, 16, 0, 0), [][]int{{0, 1}, {2, 1, 0}}, 3},
		{"embedding-bag", nntest.RandomData(nil, 4, 16, 500, 12), sixAndSeven, 9},
		{"mlp", nntest.RandomData([]int{1, 28, 28}, 10, 16, 0, 0), sixAndSeven, 9},
	} {
		name := fmt.Sprintf("%s %v", c.model, c.data.Shape)
		h := sha256.New()
		put := func(v ...float64) {
			for _, x := range v {
				binary.Write(h, binary.LittleEndian, math.Float64bits(x))
			}
		}
		data := nntest.WithTest(c.data, c.test)
		e, err := New(c.model, data, 7)
		if err != nil {
			t.Fatal(err)
		}
		params, grads, losses := make([][]float32, 2), make([][]float32, 2), make([]float64, 2)
		for i := range params {
			params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
			e.Init(params[i])
			for j := range params[i] { // the workers hold different parameters
				params[i][j] += float32(float32(i) * 1e-3 * float32(j%7))
			}
		}
		if err := e.Gradients(nn.Step{Round: 3, Local: 1}, params, grads, c.batches, losses); err != nil {
			t.Fatal(err)
		}
		for i, g := range grads {
			put(losses[i])
			for _, v := range g {
				put(float64(v))
			}
		}
		scores, err := e.Evaluate(params, &data.Test)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scores {
			put(s.Loss, s.Accuracy)
		}
		out[name] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}
