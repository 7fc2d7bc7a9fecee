package train

import (
	"math"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// evalValidation computes the validation columns (stages.Columns) of the local models x.
func evalValidation(e nn.Engine, val *datasets.Split, x [][]float32) ([]float64, error) {
	scores, err := e.Evaluate(x, val)
	if err != nil {
		return nil, err
	}
	var loss, acc float64
	for _, s := range scores {
		loss += s.Loss
		acc += s.Accuracy
	}
	n := float64(len(scores))
	return []float64{loss / n, acc / n}, nil
}

// evalQuadratic computes one metrics row (stages.Columns' quadratic order) after round:
// train_loss is mean_i f_i(x_i), the gap and gradient norm are at xbar.
func evalQuadratic(q *datasets.Quadratic, round int, x [][]float32) []float64 {
	xbar := nn.Average(x)
	loss := 0.0
	for i := range x {
		loss += float64(q.Loss(i, x[i]))
	}
	return []float64{
		float64(round),
		loss / float64(len(x)),
		nn.ConsensusDistance(x, xbar),
		q.Gap(xbar),
		q.GradNormSq(xbar),
	}
}

// evalNeural computes one metrics row (stages.Columns' order) after round. trainLoss
// is the round's mean mini-batch loss over workers and local steps. The n
// local models and the averaged one are evaluated in one engine call (in
// parallel, on the engine's reused buffers).
func evalNeural(e nn.Engine, test *datasets.Split, round int, trainLoss float64, x [][]float32) ([]float64, error) {
	xbar := nn.Average(x)
	avg := make([]float32, len(xbar))
	for k, v := range xbar {
		avg[k] = float32(v)
	}
	scores, err := e.Evaluate(append(x[:len(x):len(x)], avg), test)
	if err != nil {
		return nil, err
	}
	return neuralRow(round, trainLoss, nn.CellScores{Local: scores[:len(x)], Consensus: scores[len(x)],
		ConsensusDistance: nn.ConsensusDistance(x, xbar)}), nil
}

// neuralRow is the metrics row (stages.Columns' order) of a round's scores.
func neuralRow(round int, trainLoss float64, s nn.CellScores) []float64 {
	lossSum, accSum, accMin, accMax := 0.0, 0.0, math.Inf(1), math.Inf(-1)
	for _, l := range s.Local {
		lossSum += l.Loss
		accSum += l.Accuracy
		accMin, accMax = min(accMin, l.Accuracy), max(accMax, l.Accuracy)
	}
	n := float64(len(s.Local))
	accMean, spread := accSum/n, 0.0
	for _, l := range s.Local {
		spread += float64((l.Accuracy - accMean) * (l.Accuracy - accMean))
	}
	return []float64{float64(round), trainLoss, lossSum / n, accMean, math.Sqrt(spread / n), accMin, accMax,
		s.Consensus.Loss, s.Consensus.Accuracy, s.ConsensusDistance}
}

// metricsTable turns metric rows into a table: "round" as int64, the other
// columns as float64.
func metricsTable(columns []string, rows [][]float64) *artifacts.Table {
	t := &artifacts.Table{}
	for k, name := range columns {
		if name == "round" {
			c := artifacts.Column{Name: name, Ints: make([]int64, len(rows))}
			for r, row := range rows {
				c.Ints[r] = int64(row[k])
			}
			t.Columns = append(t.Columns, c)
			continue
		}
		c := artifacts.Column{Name: name, Floats: make([]float64, len(rows))}
		for r, row := range rows {
			c.Floats[r] = row[k]
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}
