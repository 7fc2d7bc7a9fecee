package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// Engine is the float32 CPU engine: one goroutine per core, each running whole
// workers (direct convolution kernels where they are faster, im2col +
// the engine's own GEMM elsewhere).
type Engine struct {
	model *nn.Model
	data  *datasets.Dataset
	seed  uint64
	lut   [][256]float32 // per channel: pixel byte -> standardised input
	procs int
	mu    sync.Mutex
	nets  map[int][]*net // by batch capacity: one per goroutine
	evals map[int][]*evaluator
}

var _ nn.Engine = (*Engine)(nil)

// New builds the engine for a model on a data set. Image inputs are
// standardised per channel with the training split's mean and standard
// deviation (pixels scaled to [0, 1] first).
func New(model string, data *datasets.Dataset, seed uint64) (*Engine, error) {
	m, err := nn.NewModel(model, nn.Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)})
	if err != nil {
		return nil, err
	}
	e := &Engine{
		model: m,
		data:  data,
		seed:  seed,
		procs: runtime.GOMAXPROCS(0),
		nets:  map[int][]*net{},
		evals: map[int][]*evaluator{},
	}
	if len(data.Shape) == 3 {
		e.lut = nn.Standardise(&data.Train, data.Shape[0])
	}
	return e, nil
}

// Name is the CPU engine's identity, which enters the cell key: its
// numerics' version, which changes whenever they do, so that results
// computed before keep their cell keys. Nothing about the machine enters
// it: every kernel path gives the same bits. v2: convolutions of at most
// 75 taps, and of 16k output channels and at most 256 taps, computed
// directly (conv_plane.go, conv_lanes.go), not as GEMMs (v1). v3: the
// engine's own matrix products (gemm.go: each element's products added in
// order with fused multiply-adds) instead of OpenBLAS's or gonum's, its
// own exp and log (internal/fmath), and normal variates by the polar
// method (rng.Normal).
func Name() string { return "go-cpu-float32/v3" }

// UseProcs makes the engine parallelise each call over n goroutines
// instead of GOMAXPROCS (its share of the cores when cells run side by
// side); results do not depend on it.
func (e *Engine) UseProcs(n int) { e.procs = max(1, n) }

func (e *Engine) Name() string     { return Name() }
func (e *Engine) Params() int      { return e.model.Params }
func (e *Engine) Model() *nn.Model { return e.model }

func (e *Engine) Init(p []float32) { e.model.Init(p, e.seed) }

// netsFor returns one net per goroutine for batches of up to b samples.
func (e *Engine) netsFor(b int) []*net {
	e.mu.Lock()
	defer e.mu.Unlock()
	if nets, ok := e.nets[b]; ok && len(nets) >= e.procs {
		return nets
	}
	nets := make([]*net, e.procs)
	for g := range nets {
		nets[g] = newNet(e.model, b)
	}
	e.nets[b] = nets
	return nets
}

// each runs f(goroutine, i) for i in [0, n) on e.procs goroutines.
func (e *Engine) each(n int, f func(g, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(e.procs, n); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(g, i)
			}
		}()
	}
	wg.Wait()
}

func (e *Engine) Gradients(at nn.Step, params, grads [][]float32, batches [][]int, losses []float64) error {
	b := 0
	for _, batch := range batches {
		b = max(b, len(batch))
	}
	nets := e.netsFor(b)
	e.each(len(params), func(g, i int) {
		n := nets[g]
		s := &step{batch: len(batches[i]), train: true,
			dropout: rng.New(e.seed, "dropout", uint64(i), uint64(at.Round), uint64(at.Local))}
		labels := e.gather(n, &e.data.Train, batches[i], s)
		losses[i] = n.lossGrad(params[i], grads[i], labels, s)
	})
	return nil
}

// Evaluate scores every model on each chunk of nn.EvalBatch samples (the unit
// of its loss arithmetic), the chunks spread over the goroutines (not the
// models, fewer than the chunks and rarely a multiple of the cores). A
// chunk's samples are loaded once for all models. Each model's logits are
// those of its forward pass and the chunks' losses are added in order, so
// the scores depend neither on the number of models nor on the goroutines.
func (e *Engine) Evaluate(params [][]float32, split *datasets.Split) ([]nn.Score, error) {
	models, n := len(params), split.Len()
	chunks := (n + nn.EvalBatch - 1) / nn.EvalBatch
	losses, correct := make([]float64, chunks*models), make([]int, chunks*models) // [chunk*models+model]
	evals := e.evaluatorsFor(models)
	e.each(chunks, func(g, c int) {
		ev := evals[g]
		lo, hi := c*nn.EvalBatch, min(n, (c+1)*nn.EvalBatch)
		s := &step{batch: hi - lo}
		ev.idx = ev.idx[:0]
		for k := lo; k < hi; k++ {
			ev.idx = append(ev.idx, k)
		}
		labels := e.gather(ev.net, split, ev.idx, s)
		for i, logits := range ev.logits(params, s) {
			losses[c*models+i], correct[c*models+i] = nn.CrossEntropy(logits, labels, e.model.Classes, nil)
		}
	})
	scores := make([]nn.Score, models)
	for i := range scores {
		loss, right := 0.0, 0
		for c := 0; c < chunks; c++ {
			loss += float64(losses[c*models+i] * float64(min(n, (c+1)*nn.EvalBatch)-c*nn.EvalBatch))
			right += correct[c*models+i]
		}
		scores[i] = nn.Score{Loss: loss / float64(n), Accuracy: float64(right) / float64(n)}
	}
	return scores, nil
}

// evaluator is one goroutine's buffers for Evaluate of a number of models.
type evaluator struct {
	net *net
	idx []int
	out [][]float32 // per model, the chunk's logits
}

// evaluatorsFor returns one evaluator per goroutine for this many models.
func (e *Engine) evaluatorsFor(models int) []*evaluator {
	e.mu.Lock()
	defer e.mu.Unlock()
	if evs, ok := e.evals[models]; ok && len(evs) >= e.procs {
		return evs
	}
	evs := make([]*evaluator, e.procs)
	for g := range evs {
		evs[g] = &evaluator{
			net: newNet(e.model, nn.EvalBatch),
			idx: make([]int, 0, nn.EvalBatch),
			out: make([][]float32, models),
		}
	}
	e.evals[models] = evs
	return evs
}

// logits runs every model on the net's loaded samples and returns their
// logits, model by model.
func (ev *evaluator) logits(params [][]float32, s *step) [][]float32 {
	for i, p := range params {
		ev.out[i] = append(ev.out[i][:0], ev.net.forward(p, s)...)
	}
	return ev.out
}

// gather loads samples idx of a split into the net's input (or the step's
// bags) and returns their labels.
func (e *Engine) gather(n *net, split *datasets.Split, idx []int, s *step) []int32 {
	labels := n.labels[:len(idx)]
	for k, i := range idx {
		labels[k] = split.Labels[i]
	}
	x := n.acts[0]
	in := e.model.In
	switch {
	case e.model.Text:
		n.tokens, n.offsets = n.tokens[:0], append(n.offsets[:0], 0)
		for _, i := range idx {
			n.tokens = append(n.tokens, split.Tokens[split.Offsets[i]:split.Offsets[i+1]]...)
			n.offsets = append(n.offsets, int64(len(n.tokens)))
		}
		s.tokens, s.offsets = n.tokens, n.offsets
	case in.Spatial: // C x B x H x W
		hw := in.H * in.W
		for c := 0; c < in.C; c++ {
			lut := &e.lut[c]
			for k, i := range idx {
				dst := x[(c*len(idx)+k)*hw:][:hw]
				for j, v := range split.Pixels[(i*in.C+c)*hw:][:hw] {
					dst[j] = lut[v]
				}
			}
		}
	default: // B x D
		d := in.C
		for k, i := range idx {
			copy(x[k*d:][:d], split.Features[i*d:][:d])
		}
	}
	return labels
}
