package nn

import "github.com/ump-lab/ump/internal/fmath"

// CrossEntropy returns the mean softmax cross-entropy of logits (batch x
// classes) and the number of samples whose first largest logit is the
// label's; when d is not nil it receives the gradient of the mean loss.
// It is the loss in the CPU engine's order: the CPU engine computes it
// with it, and the GPU engine's exact pieces (nn/gpu) are checked
// against its bits.
func CrossEntropy(logits []float32, labels []int32, classes int, d []float32) (loss float64, correct int) {
	b := len(labels)
	for i, y := range labels {
		row := logits[i*classes:][:classes]
		hi, arg := row[0], 0
		for c, v := range row {
			if v > hi {
				hi, arg = v, c
			}
		}
		if arg == int(y) {
			correct++
		}
		z := 0.0
		for _, v := range row {
			z += fmath.Exp(float64(v - hi))
		}
		lz := fmath.Log(z)
		loss += lz - float64(row[y]-hi)
		if d != nil {
			drow := d[i*classes:][:classes]
			for c, v := range row {
				drow[c] = float32(fmath.Exp(float64(v-hi)-lz) / float64(b))
			}
			drow[y] -= 1 / float32(b)
		}
	}
	return loss / float64(b), correct
}
