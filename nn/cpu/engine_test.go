package cpu

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/nntest"
)

// gradientsWith runs one Gradients call of 5 workers on procs goroutines.
func gradientsWith(t testing.TB, model string, data *datasets.Dataset, procs int) [][]float32 {
	t.Helper()
	e, err := New(model, data, 7)
	if err != nil {
		t.Fatal(err)
	}
	e.procs = procs
	const n = 5
	params, grads := make([][]float32, n), make([][]float32, n)
	batches := make([][]int, n)
	r := rng.New(1, "batches")
	for i := range params {
		params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(params[i])
		for j := range params[i] { // workers hold different parameters
			params[i][j] += float32(float32(i) * 1e-3 * float32(j%7))
		}
		batches[i] = r.Perm(data.Train.Len())[:20+i]
	}
	e.Gradients(nn.Step{Round: 3, Local: 1}, params, grads, batches, make([]float64, n))
	return grads
}

func TestGradientsDoNotDependOnGoroutines(t *testing.T) {
	for _, c := range []struct {
		model string
		data  *datasets.Dataset
	}{
		{"lenet", nntest.RandomData([]int{1, 28, 28}, 10, 64, 0, 0)},
		{"cnn", nntest.RandomData([]int{1, 28, 28}, 62, 64, 0, 0)},
		{"embedding-bag", nntest.RandomData(nil, 4, 64, 500, 12)},
	} {
		one := gradientsWith(t, c.model, c.data, 1)
		for _, procs := range []int{2, 3} {
			many := gradientsWith(t, c.model, c.data, procs)
			for i := range one {
				if !slices.Equal(one[i], many[i]) {
					t.Errorf("%s: worker %d's gradient differs between 1 and %d goroutines", c.model, i, procs)
				}
			}
		}
	}
}

func TestSteadyStateAllocatesNoBuffers(t *testing.T) {
	data := nntest.RandomData([]int{1, 28, 28}, 10, 256, 0, 0)
	e, _ := New("lenet", data, 1)
	const n = 10
	params, grads := make([][]float32, n), make([][]float32, n)
	batches := make([][]int, n)
	for i := range params {
		params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(params[i])
		batches[i] = rng.New(1, "b", uint64(i)).Perm(256)[:128]
	}
	losses := make([]float64, n)
	e.Gradients(nn.Step{}, params, grads, batches, losses) // allocates the buffers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const steps = 20
	for k := 0; k < steps; k++ {
		e.Gradients(nn.Step{Local: k}, params, grads, batches, losses)
	}
	runtime.ReadMemStats(&after)
	perStep := float64(after.TotalAlloc-before.TotalAlloc) / steps
	// The buffers of one net are megabytes; what a step may allocate is
	// goroutine and random-stream bookkeeping.
	if perStep > 32<<10 {
		t.Errorf("a step of %d workers allocates %.0f bytes; buffers are not being reused", n, perStep)
	}
	t.Logf("%.0f bytes allocated per step of %d workers", perStep, n)
}

// TestLeNetLearnsRealMNIST trains one worker with SGD and momentum on the
// real MNIST training set and checks test accuracy.
func TestLeNetLearnsRealMNIST(t *testing.T) {
	dir := datasets.DefaultDir()
	if info, _ := datasets.Lookup("mnist"); !info.Installed(dir) {
		t.Skipf("mnist is not installed in %s (run `ump data fetch mnist`; .ci/run installs it)", dir)
	}
	data, err := datasets.NewLibrary(dir).Load("mnist", datasets.Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New("lenet", data, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, g, v := make([]float32, e.Params()), make([]float32, e.Params()), make([]float32, e.Params())
	e.Init(p)
	order := rng.New(1, "mnist-order").Perm(data.Train.Len())
	const steps, batch, lr, beta = 400, 128, 0.05, 0.9
	loss := []float64{0}
	for k := 0; k < steps; k++ {
		idx := order[(k*batch)%len(order):][:batch]
		e.Gradients(nn.Step{Local: k}, [][]float32{p}, [][]float32{g}, [][]int{idx}, loss)
		for j := range p {
			v[j] = beta*v[j] + g[j]
			p[j] -= lr * v[j]
		}
	}
	scores, err := e.Evaluate([][]float32{p}, &data.Test)
	if err != nil {
		t.Fatal(err)
	}
	score := scores[0]
	t.Logf(
		"LeNet, %d steps of %d: test accuracy %.4f, loss %.4f (last training loss %.4f)",
		steps,
		batch,
		score.Accuracy,
		score.Loss,
		loss[0],
	)
	// An engine that does not learn stays far below.
	if score.Accuracy <= 0.95 || math.IsNaN(score.Loss) {
		t.Errorf("test accuracy %.4f, want > 0.95", score.Accuracy)
	}
}

// TestEvaluationScoresEachModelByItsForwardPass checks Evaluate against
// each model run alone through the training forward pass, chunk by chunk
// of nn.EvalBatch samples as the engine has always scored (so stored
// evaluations keep their numbers): the same bits whatever the number of
// models evaluated together and of goroutines, with a convolution, a dense
// layer and an EmbeddingBag first.
func TestEvaluationScoresEachModelByItsForwardPass(t *testing.T) {
	for _, c := range []struct {
		model string
		data  *datasets.Dataset
	}{
		{"lenet", nntest.RandomData([]int{1, 28, 28}, 10, 600, 0, 0)},
		{"lenet", nntest.RandomData([]int{3, 32, 32}, 10, 300, 0, 0)},
		{"cnn", nntest.RandomData([]int{1, 28, 28}, 62, 300, 0, 0)},
		{"mlp", nntest.RandomData([]int{1, 28, 28}, 10, 600, 0, 0)},
		{"embedding-bag", nntest.RandomData(nil, 4, 600, 500, 12)},
	} {
		data := nntest.WithTest(c.data, c.data.Train.Len()-37) // a last chunk shorter than the others
		e, err := New(c.model, data, 7)
		if err != nil {
			t.Fatal(err)
		}
		params := make([][]float32, 5)
		for i := range params {
			params[i] = make([]float32, e.Params())
			e.Init(params[i])
			for j := range params[i] {
				params[i][j] += float32(i) * 1e-2 * float32(j%5-2)
			}
		}
		want := make([]nn.Score, len(params))
		alone := newNet(e.model, nn.EvalBatch)
		for i, p := range params {
			test := &data.Test
			loss, right := 0.0, 0
			for lo := 0; lo < test.Len(); lo += nn.EvalBatch {
				var idx []int
				for k := lo; k < min(lo+nn.EvalBatch, test.Len()); k++ {
					idx = append(idx, k)
				}
				s := &step{batch: len(idx)}
				labels := e.gather(alone, test, idx, s)
				l, k := nn.CrossEntropy(alone.forward(p, s), labels, e.model.Classes, nil)
				loss += l * float64(len(idx))
				right += k
			}
			want[i] = nn.Score{Loss: loss / float64(test.Len()), Accuracy: float64(right) / float64(test.Len())}
		}
		for _, procs := range []int{1, 2, 3} {
			for _, models := range []int{1, 2, 5} {
				e.UseProcs(procs)
				got, err := e.Evaluate(params[:models], &data.Test)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want[:models]) {
					t.Errorf(
						"%s, %d models on %d goroutines: scores %v, each model alone %v",
						c.model,
						models,
						procs,
						got,
						want[:models],
					)
				}
			}
		}
	}
}

// TestAccuracyTakesTheFirstLargestLogit: a sample is right when its
// label's logit is the row's largest and no earlier logit equals it (the
// first position of a tie counts, as every engine's argmax does), so a
// row of equal logits is right for class 0 alone.
func TestAccuracyTakesTheFirstLargestLogit(t *testing.T) {
	logits := []float32{
		1, 3, 3, 0, // tie of classes 1 and 2
		1, 3, 3, 0,
		2, 2, 2, 2, // all equal
		2, 2, 2, 2,
		0, -1, 5, 5,
	}
	for _, c := range []struct {
		labels []int32
		right  int
	}{
		{[]int32{1, 1, 0, 0, 2}, 5},
		{[]int32{2, 2, 3, 1, 3}, 0},
		{[]int32{1, 2, 0, 3, 2}, 3},
	} {
		if _, right := nn.CrossEntropy(logits, c.labels, 4, nil); right != c.right {
			t.Errorf("labels %v: %d right, want %d", c.labels, right, c.right)
		}
	}
}
