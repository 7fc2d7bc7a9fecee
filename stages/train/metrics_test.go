package train

import (
	"math"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/stages"
)

// TestNeuralRowAggregatesLocalAndAveragedModels checks each figure of a
// row against separate evaluations of the same models.
func TestNeuralRowAggregatesLocalAndAveragedModels(t *testing.T) {
	data, err := datasets.NewSynthetic(datasets.Synthetic{Dims: 8, Classes: 3, Train: 300, Test: 200, Separation: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := cpu.New("logreg", data, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float32, 4)
	for i := range x {
		x[i] = make([]float32, e.Params())
		for k := range x[i] {
			x[i][k] = float32(math.Sin(float64(1 + 3*i + k))) // four different models
		}
	}
	row, err := evalNeural(e, &data.Test, 7, 0.25, x)
	if err != nil {
		t.Fatal(err)
	}
	score := func(x []float32) nn.Score {
		s, err := e.Evaluate([][]float32{x}, &data.Test)
		if err != nil {
			t.Fatal(err)
		}
		return s[0]
	}
	got := map[string]float64{}
	for k, name := range stages.Columns(manifests.Task{}, false)[:len(row)] { // a data set's: its metrics first
		got[name] = row[k]
	}
	var acc []float64
	lossSum := 0.0
	for i := range x {
		s := score(x[i])
		acc, lossSum = append(acc, s.Accuracy), lossSum+s.Loss
	}
	mean := (acc[0] + acc[1] + acc[2] + acc[3]) / 4
	variance := 0.0
	for _, a := range acc {
		variance += (a - mean) * (a - mean) / 4
	}
	avg := make([]float32, e.Params())
	cd := 0.0
	for k := range avg {
		s := 0.0
		for i := range x {
			s += float64(x[i][k])
		}
		avg[k] = float32(s / 4)
		for i := range x {
			cd += (float64(x[i][k]) - s/4) * (float64(x[i][k]) - s/4) / 4
		}
	}
	consensus := score(avg)
	want := map[string]float64{"round": 7, "train_loss": 0.25, "test_loss_mean": lossSum / 4, "test_acc_mean": mean,
		"test_acc_std": math.Sqrt(variance), "test_acc_min": min(acc[0], acc[1], acc[2], acc[3]),
		"test_acc_max": max(acc[0], acc[1], acc[2], acc[3]), "consensus_loss": consensus.Loss,
		"consensus_acc": consensus.Accuracy, "consensus_distance": cd}
	for name, w := range want {
		if math.Abs(got[name]-w) > 1e-12*(1+math.Abs(w)) {
			t.Errorf("%s = %.15g, want %.15g", name, got[name], w)
		}
	}
	if acc[0] == acc[1] && acc[1] == acc[2] {
		t.Errorf("the test models score alike (%v); the aggregation is not exercised", acc)
	}
}
