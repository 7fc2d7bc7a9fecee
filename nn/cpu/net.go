package cpu

import (
	"github.com/ump-lab/ump/nn"
)

// net runs a model for batches of up to maxBatch samples: one kernel per
// layer and every activation buffer, allocated once and reused.
type net struct {
	m       *nn.Model
	kernels []kernel
	acts    [][]float32 // acts[i] is layer i's input, acts[len] the logits
	dacts   [][]float32
	labels  []int32
	tokens  []int32 // the batch's bags, for text models
	offsets []int64
}

func newNet(m *nn.Model, maxBatch int) *net {
	n := &net{m: m, labels: make([]int32, maxBatch)}
	for i, l := range m.Layers {
		n.kernels = append(n.kernels, bind(l, m.Shapes[i], maxBatch))
	}
	for _, s := range m.Shapes {
		n.acts = append(n.acts, make([]float32, s.Size()*maxBatch))
		n.dacts = append(n.dacts, make([]float32, s.Size()*maxBatch))
	}
	return n
}

// forward runs the layers on acts[0] (or the step's bags) and returns the
// logits, batch x classes.
func (n *net) forward(p []float32, s *step) []float32 {
	for i, k := range n.kernels {
		k.forward(n.m.Param(p, i), n.acts[i], n.acts[i+1], s)
	}
	return n.acts[len(n.kernels)][:s.batch*n.m.Classes]
}

// lossGrad runs forward and backward: it returns the mean softmax
// cross-entropy over the batch and writes its gradient into g.
func (n *net) lossGrad(p, g []float32, labels []int32, s *step) float64 {
	logits := n.forward(p, s)
	last := len(n.kernels)
	dlogits := n.dacts[last][:len(logits)]
	loss, _ := nn.CrossEntropy(logits, labels, n.m.Classes, dlogits)
	for i := last - 1; i >= 0; i-- {
		var dx []float32
		if i > 0 {
			dx = n.dacts[i]
		} else if n.m.Offsets[1] == 0 {
			break // a first layer without parameters needs no backward pass
		}
		n.kernels[i].backward(n.m.Param(p, i), n.m.Param(g, i), n.acts[i], n.acts[i+1], n.dacts[i+1], dx, s)
	}
	return loss
}
