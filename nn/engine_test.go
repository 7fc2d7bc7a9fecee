package nn

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
)

// gradientsWith runs one Gradients call of 5 workers on procs goroutines.
func gradientsWith(t *testing.T, model string, data *datasets.Dataset, procs int) [][]float32 {
	t.Helper()
	e, err := NewCPU(model, data, 7)
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
			params[i][j] += float32(i) * 1e-3 * float32(j%7)
		}
		batches[i] = r.Perm(data.Train.Len())[:20+i]
	}
	e.Gradients(Step{Round: 3, Local: 1}, params, grads, batches, make([]float64, n))
	return grads
}

func TestGradientsDoNotDependOnGoroutines(t *testing.T) {
	for _, c := range []struct {
		model string
		data  *datasets.Dataset
	}{
		{"lenet", randomData([]int{1, 28, 28}, 10, 64, 0, 0)},
		{"cnn", randomData([]int{1, 28, 28}, 62, 64, 0, 0)},
		{"embedding-bag", randomData(nil, 4, 64, 500, 12)},
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
	data := randomData([]int{1, 28, 28}, 10, 256, 0, 0)
	e, _ := NewCPU("lenet", data, 1)
	const n = 10
	params, grads := make([][]float32, n), make([][]float32, n)
	batches := make([][]int, n)
	for i := range params {
		params[i], grads[i] = make([]float32, e.Params()), make([]float32, e.Params())
		e.Init(params[i])
		batches[i] = rng.New(1, "b", uint64(i)).Perm(256)[:128]
	}
	losses := make([]float64, n)
	e.Gradients(Step{}, params, grads, batches, losses) // allocates the buffers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const steps = 20
	for k := 0; k < steps; k++ {
		e.Gradients(Step{Local: k}, params, grads, batches, losses)
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
		t.Skipf("mnist is not installed in %s (run `ump data fetch mnist`; CI does)", dir)
	}
	data, err := datasets.NewLibrary(dir).Load("mnist", datasets.Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewCPU("lenet", data, 1)
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
		e.Gradients(Step{Local: k}, [][]float32{p}, [][]float32{g}, [][]int{idx}, loss)
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
	t.Logf("LeNet, %d steps of %d: test accuracy %.4f, loss %.4f (last training loss %.4f)", steps, batch, score.Accuracy, score.Loss, loss[0])
	// The trajectory depends on the sgemm's rounding: 0.9734 with
	// OpenBLAS's Haswell kernels, 0.9649 with its SkylakeX ones (an AVX-512
	// machine without the OPENBLAS_CORETYPE override), 0.9774 with gonum's;
	// an engine that does not learn stays far below.
	if score.Accuracy <= 0.95 || math.IsNaN(score.Loss) {
		t.Errorf("test accuracy %.4f, want > 0.95", score.Accuracy)
	}
}

// TestCellBytesIsTheRoundProgramsArithmetic checks CellBytes against the
// round program's memory worked out by hand, and that a cohort of 180
// LeNet/MNIST cells of 10 workers fits in half an 80 GiB GPU (the size
// train.CohortSize gives it).
func TestCellBytesIsTheRoundProgramsArithmetic(t *testing.T) {
	mnist := Input{Shape: []int{1, 28, 28}, Classes: 10}
	emnist := Input{Shape: []int{1, 28, 28}, Classes: 62}
	for _, c := range []struct {
		model     string
		in        Input
		algorithm string
		perSample int64 // floats live per sample in one local step
		params    int64
		vectors   int64 // per worker: state twice, scratch, gradient, update
	}{
		// LeNet: input 784; conv1 out 6x28x28 = 4704 and its padded input
		// 32x32 = 1024 (one channel: no patches); pool 1176; ReLU 1176;
		// conv2 out 16x10x10 = 1600 and patches 6x25x10x10 = 15000; pool
		// 400; ReLU 400; flatten 400; dense 120, ReLU 120, dense 84, ReLU 84;
		// dropout 84 and its mask 84; dense 10; two gradients of the
		// largest, 2x4704.
		{"lenet", mnist, "d-sum", 784 + 4704 + 1024 + 1176 + 1176 + 1600 + 15000 + 400 + 400 + 400 + 120 + 120 + 84 + 84 + 84 + 84 + 10 + 2*4704,
			156 + 2416 + 48120 + 10164 + 850, 2*2 + 2}, // D-SUM: x, v
		// GT-DSUM: x, v, y, d_prev kept; start and sum scratch.
		{"lenet", mnist, "gt-dsum", 36658, 61706, 4*2 + 2 + 2},
		// EMNIST CNN: input 784; conv1 out 32x26x26 = 21632 (one channel,
		// no padding); ReLU 21632; conv2 out 64x24x24 = 36864 and patches
		// 32x9x24x24 = 165888; pool 9216; ReLU 9216; dropout 9216 + mask
		// 9216; flatten 9216; dense 128, ReLU 128, dropout 128 + mask 128;
		// dense 62; two gradients of 36864.
		{"cnn", emnist, "d-sum", 784 + 21632 + 21632 + 36864 + 165888 + 9216 + 9216 + 9216 + 9216 + 9216 + 128 + 128 + 128 + 128 + 62 + 2*36864,
			320 + 18496 + 1179776 + 7998, 2*2 + 2},
	} {
		m, err := NewModel(c.model, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if int64(m.Params) != c.params {
			t.Fatalf("%s has %d parameters, by hand %d", c.model, m.Params, c.params)
		}
		want := 4 * (10*128*c.perSample + c.vectors*10*c.params)
		if got := CellBytes(m, c.algorithm, 10, 128); got != want {
			t.Errorf("%s %s, 10 workers, batch 128: CellBytes %d, by hand %d", c.model, c.algorithm, got, want)
		}
	}
	m, _ := NewModel("lenet", mnist)
	if cells := (80 << 30) / 2 / CellBytes(m, "d-sum", 10, 128); cells < 180 {
		t.Errorf("half of an 80 GiB GPU holds %d LeNet/MNIST cells of 10 workers; the paper's sweeps need 180", cells)
	}
}

// TestEvaluationScoresEachModelByItsForwardPass checks Evaluate against
// each model run alone through the training forward pass, chunk by chunk
// of evalBatch samples as the engine has always scored (so stored
// evaluations keep their numbers): the same bits whatever the number of
// models evaluated together and of goroutines, with a convolution, a dense
// layer and an EmbeddingBag first.
func TestEvaluationScoresEachModelByItsForwardPass(t *testing.T) {
	for _, c := range []struct {
		model string
		data  *datasets.Dataset
	}{
		{"lenet", randomData([]int{1, 28, 28}, 10, 600, 0, 0)},
		{"lenet", randomData([]int{3, 32, 32}, 10, 300, 0, 0)},
		{"cnn", randomData([]int{1, 28, 28}, 62, 300, 0, 0)},
		{"mlp", randomData([]int{1, 28, 28}, 10, 600, 0, 0)},
		{"embedding-bag", randomData(nil, 4, 600, 500, 12)},
	} {
		data := withTest(c.data, c.data.Train.Len()-37) // a last chunk shorter than the others
		e, err := NewCPU(c.model, data, 7)
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
		want := make([]Score, len(params))
		alone := newNet(e.model, evalBatch)
		for i, p := range params {
			test := &data.Test
			loss, right := 0.0, 0
			for lo := 0; lo < test.Len(); lo += evalBatch {
				var idx []int
				for k := lo; k < min(lo+evalBatch, test.Len()); k++ {
					idx = append(idx, k)
				}
				s := &step{batch: len(idx)}
				labels := e.gather(alone, test, idx, s)
				l, k := crossEntropy(alone.forward(p, s), labels, e.model.Classes, nil)
				loss += l * float64(len(idx))
				right += k
			}
			want[i] = Score{Loss: loss / float64(test.Len()), Accuracy: float64(right) / float64(test.Len())}
		}
		for _, procs := range []int{1, 2, 3} {
			for _, models := range []int{1, 2, 5} {
				e.UseProcs(procs)
				got, err := e.Evaluate(params[:models], &data.Test)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want[:models]) {
					t.Errorf("%s, %d models on %d goroutines: scores %v, each model alone %v", c.model, models, procs, got, want[:models])
				}
			}
		}
	}
}
