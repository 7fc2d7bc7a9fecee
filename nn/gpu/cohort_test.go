package gpu

import (
	"testing"

	"github.com/ump-lab/ump/nn"
)

// TestCellBytesIsTheRoundProgramsArithmetic checks CellBytes against the
// round program's memory worked out by hand, and that a cohort of 180
// LeNet/MNIST cells of 10 workers fits in half an 80 GiB GPU (the size
// train.CohortSize gives it).
func TestCellBytesIsTheRoundProgramsArithmetic(t *testing.T) {
	mnist := nn.Input{Shape: []int{1, 28, 28}, Classes: 10}
	emnist := nn.Input{Shape: []int{1, 28, 28}, Classes: 62}
	for _, c := range []struct {
		model     string
		in        nn.Input
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
		{"lenet", mnist, "d-sum", 784 + 4704 + 1024 + 1176 + 1176 + 1600 + 15000 + 400 + 400 + 400 + 120 + 120 + 84 +
			84 + 84 + 84 + 10 + 2*4704,
			156 + 2416 + 48120 + 10164 + 850, 2*2 + 2}, // D-SUM: x, v
		// GT-DSUM: x, v, y, d_prev kept; start and sum scratch.
		{"lenet", mnist, "gt-dsum", 36658, 61706, 4*2 + 2 + 2},
		// EMNIST CNN: input 784; conv1 out 32x26x26 = 21632 (one channel,
		// no padding); ReLU 21632; conv2 out 64x24x24 = 36864 and patches
		// 32x9x24x24 = 165888; pool 9216; ReLU 9216; dropout 9216 + mask
		// 9216; flatten 9216; dense 128, ReLU 128, dropout 128 + mask 128;
		// dense 62; two gradients of 36864.
		{"cnn", emnist, "d-sum", 784 + 21632 + 21632 + 36864 + 165888 + 9216 + 9216 + 9216 + 9216 + 9216 + 128 + 128 +
			128 + 128 + 62 + 2*36864,
			320 + 18496 + 1179776 + 7998, 2*2 + 2},
	} {
		m, err := nn.NewModel(c.model, c.in)
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
	m, _ := nn.NewModel("lenet", mnist)
	if cells := (80 << 30) / 2 / CellBytes(m, "d-sum", 10, 128); cells < 180 {
		t.Errorf("half of an 80 GiB GPU holds %d LeNet/MNIST cells of 10 workers; the paper's sweeps need 180", cells)
	}
}
