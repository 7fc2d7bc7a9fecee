package cpu

import (
	"testing"

	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/nntest"
)

// The CPU engine's two hot paths at the paper's MNIST settings, for A/B
// comparisons of kernels (`make bench`, medians of -count 5) and for
// profiles (-cpuprofile): a round of 10 LeNet workers (K = 10 local steps
// of batch 128, each followed by an SGD update), on MNIST's shape and on
// CIFAR-10's, and an evaluation of 11 models (10 local ones and their
// average) on a 10,000-sample test split.

func BenchmarkLeNetMNISTRound(b *testing.B) { benchmarkLeNetRound(b, []int{1, 28, 28}) }

func BenchmarkLeNetCIFAR10Round(b *testing.B) { benchmarkLeNetRound(b, []int{3, 32, 32}) }

func benchmarkLeNetRound(b *testing.B, shape []int) {
	const workers, localSteps, batch = 10, 10, 128
	data := nntest.RandomData(shape, 10, 4*batch, 0, 0)
	e, err := New("lenet", data, 1)
	if err != nil {
		b.Fatal(err)
	}
	params, grads := make([][]float32, workers), make([][]float32, workers)
	batches, losses := make([][]int, workers), make([]float64, workers)
	r := rng.New(1, "bench-batches")
	for i := range params {
		params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(params[i])
		batches[i] = r.Perm(data.Train.Len())[:batch]
	}
	round := 0
	for b.Loop() {
		for k := 0; k < localSteps; k++ {
			e.Gradients(nn.Step{Round: round, Local: k}, params, grads, batches, losses)
			e.each(workers, func(_, i int) {
				for j, g := range grads[i] {
					params[i][j] -= 0.01 * g
				}
			})
		}
		round++
	}
}

func BenchmarkLeNetMNISTEvaluate(b *testing.B) {
	e, params, test := lenetEvaluation(b)
	for b.Loop() {
		e.Evaluate(params, test)
	}
}
