package cpu

import (
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn/nntest"
)

// lenetEvaluation is what a LeNet/MNIST cell evaluates every 5 rounds: 11
// models (10 workers' and their average) on a 10,000-sample test split of
// random data, with the engine that scores them.
func lenetEvaluation(t testing.TB) (*Engine, [][]float32, *datasets.Split) {
	const models, samples = 11, 10000
	data := nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 10, samples, 0, 0), samples)
	e, err := New("lenet", data, 1)
	if err != nil {
		t.Fatal(err)
	}
	params := make([][]float32, models)
	for i := range params {
		params[i] = make([]float32, e.Params())
		e.Init(params[i])
	}
	return e, params, &data.Test
}

// onEveryPath runs f on each kernel path this CPU runs (on the one
// UMP_KERNELS names, if set), and leaves the fastest in use.
func onEveryPath(t testing.TB, f func(path string)) {
	t.Helper()
	defer UseKernels("")
	for _, p := range PathsUnderTest() {
		if err := UseKernels(p); err != nil {
			t.Fatal(err)
		}
		t.Logf("on kernel path %s", p)
		f(p)
	}
}
