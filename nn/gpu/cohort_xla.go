//go:build xla

package gpu

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/gpu/exact"
	"github.com/ump-lab/ump/nn/gpu/loop"
)

// xlaCohort trains cells that share their shapes on one device, in lockstep:
// every cell's workers and optimizer state stay on the device, and a round
// of every cell — the algorithm's definition (algorithms.Rules) over K
// local steps' gradients (batch gather, forward, backward) and the gossip
// — is one execution of one compiled program over a leading axis of
// cells × workers models. Per-cell numbers (the definition's, computed on
// the host by algorithms.TraceRound: learning rate, parameters, the
// round's conditions; batches, dropout masks, the mixing matrix) are
// inputs, so one compilation serves every cell of the shape.
// The training and test splits are uploaded once. A round sends the
// batches' sample indices and bit-packed dropout masks (drawn on the host
// from the CPU engine's streams) and returns the per-step losses and a
// finite flag per cell; state comes back only when State is called.
type xlaCohort struct {
	shape   nn.CohortShape
	model   *nn.Model
	data    *datasets.Dataset
	backend backends.Backend
	rules   *algorithms.Rules
	names   []string // the algorithm's state vectors, x first
	nums    int      // the definition's numbers and conditions per cell (algorithms.Trace)
	grads   int      // the gradients its trace takes
	round   *Exec
	eval    *Exec             // every cell's models
	evalOne *Exec             // one cell's
	rows    *Exec             // (state [rows, P], indices [k, 1]) -> those rows
	setRows *Exec             // (state, update [n, P], from [rows, 1], mine [rows, 1]) -> state with rows replaced
	state   []*tensors.Tensor // per name: [cells*workers, Params] on the device
	train   splitTensors
	test    splitTensors
}

// evalModelSamples bounds the memory of a step of the evaluation loop:
// models × test samples per step.
var evalModelSamples = 32768

// evalChunk is the test samples per step of the evaluation loop of
// `models` models: the largest power of two within evalModelSamples, at
// most nn.EvalBatch (a power of two, to whose multiple the resident test
// split is padded, so every chunk size divides it).
func evalChunk(models int) int {
	chunk := nn.EvalBatch
	for chunk > 1 && chunk*models > evalModelSamples {
		chunk /= 2
	}
	return chunk
}

// splitTensors is a split resident on the device (uploaded at the first
// call): pixels [N, sample] uint8, features [N, D] float32, or token bags
// [N, L] with weights 1/len; labels [N]; the standardisation table.
type splitTensors struct {
	len                  int
	x, bagW, labels, lut *tensors.Tensor
}

var _ nn.Cohort = (*xlaCohort)(nil)

// NewCohort builds a cohort on the device; every cell's state is zero
// until SetState. Programs compile at their first use.
func NewCohort(device *Device, data *datasets.Dataset, shape nn.CohortShape) (nn.Cohort, error) {
	m, err := nn.NewModel(shape.Model, nn.Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)})
	if err != nil {
		return nil, err
	}
	kind, ok := algorithms.Family.Lookup(shape.Algorithm)
	if !ok {
		return nil, fmt.Errorf("gpu engine: unknown algorithm %q", shape.Algorithm)
	}
	names, _ := algorithms.StateNames(shape.Algorithm)
	if data.Test.Len() == 0 {
		return nil, fmt.Errorf("gpu engine: the data set has no test samples for the cohort's evaluation")
	}
	if shape.Cells < 1 || shape.Workers < 1 || shape.LocalSteps < 1 || shape.Batch < 1 {
		return nil, fmt.Errorf("gpu engine: cohort %+v: every size must be at least 1", shape)
	}
	if shape.Exact {
		if err := exact.Supports(m); err != nil {
			return nil, err
		}
	}
	trace, err := algorithms.TraceRound(
		algorithms.Config{Name: shape.Algorithm},
		algorithms.At{K: shape.LocalSteps, LR: 1},
	)
	if err != nil {
		return nil, err
	}
	backend, err := device.Backend()
	if err != nil {
		return nil, err
	}
	c := &xlaCohort{
		shape:   shape,
		model:   m,
		data:    data,
		backend: backend,
		rules:   kind.New,
		names:   names,
		nums:    len(trace.Nums),
		grads:   len(trace.Grads),
	}
	var lut [][256]float32
	if len(data.Shape) == 3 {
		lut = nn.Standardise(&data.Train, data.Shape[0])
	}
	c.train = c.resident(&data.Train, lut, 1)
	c.test = c.resident(&data.Test, lut, nn.EvalBatch)
	if c.round, err = NewExec(backend, c.roundGraph); err != nil {
		return nil, err
	}
	c.round.WithName(shape.Algorithm + "'s round program")
	all, one := c.evalGraph(
		shape.Cells,
		evalChunk(shape.Cells*(shape.Workers+1)),
	), c.evalGraph(
		1,
		evalChunk(shape.Workers+1),
	)
	if shape.Exact {
		all, one = c.exactEvalGraph(shape.Cells), c.exactEvalGraph(1)
	}
	if c.eval, err = NewExec(backend, all); err != nil {
		return nil, err
	}
	c.eval.WithName(shape.Algorithm + "'s evaluation program")
	if c.evalOne, err = NewExec(backend, one); err != nil {
		return nil, err
	}
	if c.rows, err = NewExec(backend, func(state, idx *Node) *Node { return Gather(state, idx) }); err != nil {
		return nil, err
	}
	setRows := func(state, update, from, mine *Node) *Node {
		return Where(BroadcastToDims(mine, state.Shape().Dimensions...), Gather(update, from), state)
	}
	if c.setRows, err = NewExec(backend, setRows); err != nil {
		return nil, err
	}
	rows := shape.Cells * shape.Workers
	for range names {
		c.state = append(c.state, tensors.FromFlatDataAndDimensions(make([]float32, rows*m.Params), rows, m.Params))
	}
	return c, nil
}

// resident lays a split out for the device, padded with zeros to a
// multiple of pad samples.
func (c *xlaCohort) resident(s *datasets.Split, lut [][256]float32, pad int) splitTensors {
	n := s.Len()
	rows := (n + pad - 1) / pad * pad
	out := splitTensors{len: n}
	labels := make([]int32, rows)
	copy(labels, s.Labels)
	out.labels = tensors.FromFlatDataAndDimensions(labels, rows)
	m := c.model
	switch {
	case m.Text:
		bag := 1
		for i := 0; i < n; i++ {
			bag = max(bag, int(s.Offsets[i+1]-s.Offsets[i]))
		}
		tokens, weights := make([]int32, rows*bag), make([]float32, rows*bag)
		for i := 0; i < n; i++ {
			b := s.Tokens[s.Offsets[i]:s.Offsets[i+1]]
			copy(tokens[i*bag:], b)
			for j := range b {
				weights[i*bag+j] = 1 / float32(len(b))
			}
		}
		out.x = tensors.FromFlatDataAndDimensions(tokens, rows, bag)
		out.bagW = tensors.FromFlatDataAndDimensions(weights, rows, bag)
	case m.In.Spatial:
		size := m.In.C * m.In.H * m.In.W
		pixels := make([]uint8, rows*size)
		copy(pixels, s.Pixels)
		out.x = tensors.FromFlatDataAndDimensions(pixels, rows, size)
		flat := make([]float32, 0, 256*len(lut))
		for _, t := range lut {
			flat = append(flat, t[:]...)
		}
		out.lut = tensors.FromFlatDataAndDimensions(flat, len(flat))
	default:
		features := make([]float32, rows*m.In.C)
		copy(features, s.Features)
		out.x = tensors.FromFlatDataAndDimensions(features, rows, m.In.C)
	}
	return out
}

// args are a resident split's tensors, in the programs' order.
func (s splitTensors) args() []any {
	out := []any{s.x, s.labels}
	if s.bagW != nil {
		out = append(out, s.bagW)
	}
	if s.lut != nil {
		out = append(out, s.lut)
	}
	return out
}

// dropoutLayers lists the dropout layers' indices.
func dropoutLayers(m *nn.Model) []int {
	var out []int
	for i, l := range m.Layers {
		if _, ok := l.(nn.Dropout); ok {
			out = append(out, i)
		}
	}
	return out
}

// Round runs one round of every cell; cells[c] is cell slot c. It returns
// each cell's per-worker, per-step mean mini-batch losses (worker-major)
// and whether every parameter of the cell is finite afterwards.
func (c *xlaCohort) Round(cells []nn.CellRound) (losses [][]float64, finite []bool, err error) {
	inputs, err := c.roundInputs(cells)
	if err != nil {
		return nil, nil, err
	}
	out, err := c.execRound(inputs)
	if err != nil {
		return nil, nil, err
	}
	return c.roundResults(out)
}

// roundInputs lays out a round's per-cell inputs on the host, in the round
// program's order after the state: the numbers, the mixing matrices, the
// batches' sample indices and weights, the packed dropout masks.
func (c *xlaCohort) roundInputs(cells []nn.CellRound) ([]*tensors.Tensor, error) {
	sh := c.shape
	if len(cells) != sh.Cells {
		return nil, fmt.Errorf("gpu engine: a round of %d cells for a cohort of %d", len(cells), sh.Cells)
	}
	rows, k, b := sh.Cells*sh.Workers, sh.LocalSteps, sh.Batch
	width := c.nums + 1 // the definition's, then whether the cell is active
	scalars := make([]float32, sh.Cells*width)
	mix := make([]float64, sh.Cells*sh.Workers*sh.Workers)
	idx := make([]int32, rows*k*b)
	weights := make([]float32, rows*k*b)
	drops := dropoutLayers(c.model)
	words := make([]int, len(drops))
	masks := make([][]uint16, len(drops))
	for d, li := range drops {
		words[d] = (c.model.Shapes[li].Size() + maskBits - 1) / maskBits
		masks[d] = make([]uint16, rows*k*b*words[d])
	}
	for ci, cr := range cells {
		if !cr.Active {
			continue
		}
		if err := c.cellInputs(ci, &cr, scalars[ci*width:][:width], mix, idx, weights); err != nil {
			return nil, err
		}
	}
	c.drawMasks(cells, masks, words)
	inputs := []*tensors.Tensor{tensors.FromFlatDataAndDimensions(scalars, sh.Cells, width),
		tensors.FromFlatDataAndDimensions(mix, sh.Cells, sh.Workers, sh.Workers),
		tensors.FromFlatDataAndDimensions(idx, k, rows, b), tensors.FromFlatDataAndDimensions(weights, k, rows, b)}
	for d := range drops {
		inputs = append(inputs, tensors.FromFlatDataAndDimensions(masks[d], k, rows, b, words[d]))
	}
	return inputs, nil
}

// roundArgs are the round program's arguments: the state (donated, or
// only read, as for a compilation), a round's inputs, the training split.
func (c *xlaCohort) roundArgs(inputs []*tensors.Tensor, donate bool) ([]any, error) {
	args := make([]any, 0, len(c.state)+len(inputs)+4)
	for _, t := range c.state {
		if !donate {
			args = append(args, t)
			continue
		}
		d, err := DonateTensorBuffer(t, c.backend, 0)
		if err != nil {
			return nil, fmt.Errorf("gpu engine: %w", err)
		}
		args = append(args, d)
	}
	for _, t := range inputs {
		args = append(args, t)
	}
	return append(args, c.train.args()...), nil
}

// execRound runs the round program on the state (donated) and a round's
// inputs; the new state stays on the device.
func (c *xlaCohort) execRound(inputs []*tensors.Tensor) ([]*tensors.Tensor, error) {
	args, err := c.roundArgs(inputs, true)
	if err != nil {
		return nil, err
	}
	out, err := c.round.Exec(args...)
	if err != nil {
		return nil, fmt.Errorf("gpu engine: round: %w", err)
	}
	c.state = out[:len(c.state)]
	return out[len(c.state):], nil
}

// roundResults downloads a round's losses and finite flags.
func (c *xlaCohort) roundResults(out []*tensors.Tensor) (losses [][]float64, finite []bool, err error) {
	sh := c.shape
	defer finalize(out)
	l, err := tensors.CopyFlatData[float64](out[0])
	if err != nil {
		return nil, nil, fmt.Errorf("gpu engine: downloading the losses: %w", err)
	}
	f, err := tensors.CopyFlatData[float32](out[1])
	if err != nil {
		return nil, nil, fmt.Errorf("gpu engine: downloading the finite flags: %w", err)
	}
	k := sh.LocalSteps
	losses, finite = make([][]float64, sh.Cells), make([]bool, sh.Cells)
	for ci := range losses {
		finite[ci] = f[ci] != 0
		losses[ci] = make([]float64, sh.Workers*k)
		for j := range losses[ci] {
			losses[ci][j] = l[ci*sh.Workers*k+j]
		}
	}
	return losses, finite, nil
}

// cellInputs writes cell ci's numbers (the definition's for its round,
// then 1: active), mixing matrix, sample indices and weights.
func (c *xlaCohort) cellInputs(
	ci int,
	cr *nn.CellRound,
	scalars []float32,
	mix []float64,
	idx []int32,
	weights []float32,
) error {
	sh := c.shape
	k, b := sh.LocalSteps, sh.Batch
	cfg := cr.Config
	cfg.Name = sh.Algorithm
	trace, err := algorithms.TraceRound(cfg, algorithms.At{T: cr.Round, K: k, LR: cr.LR})
	if err != nil {
		return fmt.Errorf("gpu engine: cell %d: %w", ci, err)
	}
	copy(scalars, trace.Nums)
	scalars[c.nums] = 1
	if len(cr.Mix.Rows) != sh.Workers || len(cr.Batches) != sh.Workers {
		return fmt.Errorf(
			"gpu engine: cell %d: %d mixing rows and %d workers' batches for %d workers",
			ci,
			len(cr.Mix.Rows),
			len(cr.Batches),
			sh.Workers,
		)
	}
	for i, row := range cr.Mix.Rows {
		for _, e := range row {
			mix[(ci*sh.Workers+i)*sh.Workers+e.J] = e.W
		}
		if len(cr.Batches[i]) != k {
			return fmt.Errorf(
				"gpu engine: cell %d worker %d: %d batches for %d local steps",
				ci,
				i,
				len(cr.Batches[i]),
				k,
			)
		}
		for step, batch := range cr.Batches[i] {
			if len(batch) == 0 || len(batch) > b {
				return fmt.Errorf("gpu engine: cell %d worker %d: a batch of %d samples (1..%d)", ci, i, len(batch), b)
			}
			at := (step*sh.Cells*sh.Workers + ci*sh.Workers + i) * b
			for j, sample := range batch {
				idx[at+j] = int32(sample)
				weights[at+j] = 1 / float32(len(batch))
			}
		}
	}
	return nil
}

// drawMasks packs every active cell's dropout masks, drawn as the CPU
// engine draws them (stream (seed, "dropout", worker, round, step), layer
// by layer in its C x B x H x W or B x F order), into one bit per unit in
// each sample's C x H x W or F order (packMask).
func (c *xlaCohort) drawMasks(cells []nn.CellRound, masks [][]uint16, words []int) {
	if len(masks) == 0 {
		return
	}
	sh := c.shape
	m := c.model
	drops := dropoutLayers(m)
	type job struct{ cell, worker int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				cr := &cells[j.cell]
				row := j.cell*sh.Workers + j.worker
				for step, batch := range cr.Batches[j.worker] {
					stream := rng.New(cr.Seed, "dropout", uint64(j.worker), uint64(cr.Round), uint64(step))
					for d, li := range drops {
						threshold, _ := m.Layers[li].(nn.Dropout).MaskParams()
						at := (step*sh.Cells*sh.Workers + row) * sh.Batch * words[d]
						packMask(
							stream,
							threshold,
							m.Shapes[li],
							len(batch),
							masks[d][at:at+len(batch)*words[d]],
							words[d],
						)
					}
				}
			}
		}()
	}
	for ci := range cells {
		if cells[ci].Active {
			for i := range sh.Workers {
				jobs <- job{ci, i}
			}
		}
	}
	close(jobs)
	wg.Wait()
}

// packMask draws one dropout layer's mask for a batch of bs samples as
// dropoutMask does — a unit drops when its 16-bit draw, four to a Uint64,
// is below threshold, in the layer's C x B x H x W (images) or B x F order
// — and sets the kept units' bits in dst (per sample `words` words, unit
// u of the sample's C x H x W or F order at bit u%16 of word u/16).
func packMask(r *rand.Rand, threshold uint64, s nn.Shape, bs int, dst []uint16, words int) {
	var bits uint64
	left := 0
	keep := func() bool {
		if left == 0 {
			bits, left = r.Uint64(), 4
		}
		v := bits & 0xffff
		bits >>= 16
		left--
		return v >= threshold
	}
	if !s.Spatial {
		for k := 0; k < bs; k++ {
			w := dst[k*words:][:words]
			for u := 0; u < s.Size(); u++ {
				if keep() {
					w[u/maskBits] |= 1 << (u % maskBits)
				}
			}
		}
		return
	}
	hw := s.H * s.W
	for c := 0; c < s.C; c++ {
		for k := 0; k < bs; k++ {
			w := dst[k*words:][:words]
			for u := c * hw; u < (c+1)*hw; u++ {
				if keep() {
					w[u/maskBits] |= 1 << (u % maskBits)
				}
			}
		}
	}
}

// State downloads cell ci's state vectors, by name, each [workers][Params].
func (c *xlaCohort) State(ci int) (map[string][][]float32, error) {
	out := map[string][][]float32{}
	n, p := c.shape.Workers, c.model.Params
	for k, name := range c.names {
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(ci*n + i)
		}
		got, err := c.rows.Exec(c.state[k], tensors.FromFlatDataAndDimensions(rows, n, 1))
		if err != nil {
			return nil, fmt.Errorf("gpu engine: downloading %s: %w", name, err)
		}
		flat, err := tensors.CopyFlatData[float32](got[0])
		finalize(got)
		if err != nil {
			return nil, fmt.Errorf("gpu engine: downloading %s: %w", name, err)
		}
		vs := make([][]float32, n)
		for i := range vs {
			vs[i] = flat[i*p : (i+1)*p : (i+1)*p]
		}
		out[name] = vs
	}
	return out, nil
}

// SetState uploads cell ci's state vectors (a checkpoint's, or the
// optimizer's initial state, by name).
func (c *xlaCohort) SetState(ci int, vectors map[string][][]float32) error {
	n, p := c.shape.Workers, c.model.Params
	rows := c.shape.Cells * n
	from := make([]int32, rows) // row r takes update row from[r] where mine[r]
	mine := make([]bool, rows)
	for r := range rows {
		if r/n == ci {
			from[r], mine[r] = int32(r%n), true
		}
	}
	for k, name := range c.names {
		vs, ok := vectors[name]
		if !ok || len(vs) != n {
			return fmt.Errorf("gpu engine: the state lacks %q for %d workers", name, n)
		}
		flat := make([]float32, 0, n*p)
		for _, v := range vs {
			if len(v) != p {
				return fmt.Errorf("gpu engine: state %q has dimension %d, want %d", name, len(v), p)
			}
			flat = append(flat, v...)
		}
		old, err := DonateTensorBuffer(c.state[k], c.backend, 0)
		if err != nil {
			return fmt.Errorf("gpu engine: uploading %s: %w", name, err)
		}
		out, err := c.setRows.Exec(old, tensors.FromFlatDataAndDimensions(flat, n, p),
			tensors.FromFlatDataAndDimensions(from, rows, 1), tensors.FromFlatDataAndDimensions(mine, rows, 1))
		if err != nil {
			return fmt.Errorf("gpu engine: uploading %s: %w", name, err)
		}
		c.state[k] = out[0]
	}
	return nil
}

// Evaluate scores every cell's local models and average model on the
// test split (on the device; only sums come back).
func (c *xlaCohort) Evaluate() ([]nn.CellScores, error) {
	return c.evaluate(c.eval, c.state[0], c.shape.Cells)
}

// EvaluateCell scores one cell's models (a program of one cell's shape,
// on the cell's rows gathered on the device).
func (c *xlaCohort) EvaluateCell(ci int) (nn.CellScores, error) {
	n := c.shape.Workers
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(ci*n + i)
	}
	x, err := c.rows.Exec(c.state[0], tensors.FromFlatDataAndDimensions(rows, n, 1))
	if err != nil {
		return nn.CellScores{}, fmt.Errorf("gpu engine: evaluation: %w", err)
	}
	defer finalize(x)
	scores, err := c.evaluate(c.evalOne, x[0], 1)
	if err != nil {
		return nn.CellScores{}, err
	}
	return scores[0], nil
}

// evaluate runs an evaluation program of `cells` cells on the models x
// over the test split: one execution.
func (c *xlaCohort) evaluate(prog *Exec, x *tensors.Tensor, cells int) ([]nn.CellScores, error) {
	n := c.shape.Workers
	out, err := prog.Exec(append([]any{x}, c.test.args()...)...)
	if err != nil {
		return nil, fmt.Errorf("gpu engine: evaluation: %w", err)
	}
	defer finalize(out)
	var sums [3][]float64 // loss sums, hits, distances
	for i := range out {
		if sums[i], err = tensors.CopyFlatData[float64](out[i]); err != nil {
			return nil, fmt.Errorf("gpu engine: downloading a result: %w", err)
		}
	}
	if c.shape.Exact {
		if sums[2], err = c.hostDistances(x, cells); err != nil {
			return nil, err
		}
	}
	loss, correct, distance := sums[0], sums[1], sums[2]
	total := float64(c.test.len)
	score := func(i int) nn.Score { return nn.Score{Loss: loss[i] / total, Accuracy: correct[i] / total} }
	scores := make([]nn.CellScores, cells)
	for ci := range scores {
		for i := range n {
			scores[ci].Local = append(scores[ci].Local, score(ci*n+i))
		}
		scores[ci].Consensus = score(cells*n + ci)
		scores[ci].ConsensusDistance = distance[ci]
	}
	return scores, nil
}

// Close frees the cohort's device memory.
func (c *xlaCohort) Close() {
	finalize(c.state)
	for _, s := range []splitTensors{c.train, c.test} {
		for _, t := range []*tensors.Tensor{s.x, s.bagW, s.labels, s.lut} {
			if t != nil {
				t.FinalizeAll()
			}
		}
	}
	for _, e := range []*Exec{c.round, c.eval, c.evalOne, c.rows, c.setRows} {
		e.Finalize()
	}
}

// gatherInput loads samples idx [n, b] of a resident split for models
// models: each model's own samples (n = models) or one set every model
// reads (n = 1, an evaluation's), gathered once and broadcast. Images come
// standardised through the table ([models, b, H, W, C]), then features,
// or token bags (rows into the models' stacked embedding tables).
func (c *xlaCohort) gatherInput(split []*Node, idx *Node, models int) (graphInput, *Node) {
	m := c.model
	d := idx.Shape().Dimensions
	n, b := d[0], d[1]
	flat := Reshape(idx, n*b, 1)
	labels := forModels(Reshape(Gather(split[1], flat), n, b), models)
	switch {
	case m.Text:
		tokens := Gather(split[0], flat) // [n*b, L]
		bag := tokens.Shape().Dimensions[1]
		tokens = forModels(Reshape(tokens, n, b, bag), models)
		offset := MulScalar(Iota(idx.Graph(), shapes.Make(dtypes.Int32, models, b, bag), 0), len(c.data.Vocab))
		bagW := forModels(Reshape(Gather(split[2], flat), n, b, bag), models)
		return graphInput{rows: Add(tokens, offset), bagW: bagW}, labels
	case m.In.Spatial:
		in := m.In
		pixels := ConvertDType(Gather(split[0], flat), dtypes.Int32) // [n*b, C*H*W]
		channel := MulScalar(Iota(idx.Graph(), shapes.Make(dtypes.Int32, n*b, in.C, in.H*in.W), 1), 256)
		at := Add(Reshape(pixels, n*b, in.C, in.H*in.W), channel)
		x := Gather(split[2], Reshape(at, n*b*in.C*in.H*in.W, 1))
		x = TransposeAllAxes(Reshape(x, n, b, in.C, in.H, in.W), 0, 1, 3, 4, 2)
		return graphInput{x: forModels(x, models)}, labels
	default:
		return graphInput{x: forModels(Reshape(Gather(split[0], flat), n, b, m.In.C), models)}, labels
	}
}

// forModels is x [n, ...] for models models: x itself where n = models,
// else its one set (n = 1) broadcast to every model.
func forModels(x *Node, models int) *Node {
	d := x.Shape().Dimensions
	if d[0] == models {
		return x
	}
	return BroadcastToDims(x, append([]int{models}, d[1:]...)...)
}

// roundGraph: inputs the state vectors [rows, P], the numbers [cells,
// nums+1], the mixing matrices [cells, n, n] (float64), sample indices and
// weights [K, rows, b], one packed mask [K, rows, b, words] per dropout
// layer, then the resident training split; outputs the new state vectors,
// the losses [rows, K] (float64) and a finite flag per cell. The algorithm's round is
// its definition (algorithms.Rules) run over the graph (graphSpace).
func (c *xlaCohort) roundGraph(inputs []*Node) []*Node {
	sh := c.shape
	m := c.model
	ns := len(c.names)
	scal, mixing, idx, weights := inputs[ns], inputs[ns+1], inputs[ns+2], inputs[ns+3]
	drops := dropoutLayers(m)
	packed := inputs[ns+4 : ns+4+len(drops)]
	split := inputs[ns+4+len(drops):]
	rows := sh.Cells * sh.Workers
	s := &graphSpace{
		algorithm: sh.Algorithm,
		exact:     sh.Exact,
		cells:     sh.Cells,
		workers:   sh.Workers,
		params:    m.Params,
		scal:      scal,
		mixing:    mixing,
		state:     map[string]*Node{},
		outside:   inputs[ns:],
	}
	for k, name := range c.names {
		s.state[name] = inputs[k]
	}
	for _, v := range c.rules.Vectors {
		if v.Scratch {
			s.state[v.Name] = ZerosLike(inputs[0])
		}
	}
	s.losses = Zeros(scal.Graph(), shapes.Make(dtypes.Float64, rows, sh.LocalSteps))
	s.grad = func(tau, x *Node) (loss, grad *Node) {
		step := func(v *Node) *Node { return Gather(s.here(v), Reshape(tau, 1)) } // v[tau] (every backend has Gather)
		if sh.Exact {
			var steps []*Node
			for _, p := range packed {
				steps = append(steps, step(p))
			}
			return c.exactGrad(x, step(idx), step(weights), steps, s.hereAll(split))
		}
		in, labels := c.gatherInput(s.hereAll(split), step(idx), rows)
		var masks []*Node
		for d, li := range drops {
			masks = append(masks, unpackMask(step(packed[d]), m.Shapes[li], m.Layers[li].(nn.Dropout)))
		}
		t := graphForward(m, x, in, masks)
		loss, dlogits, _ := crossEntropyGraph(t.acts[len(t.acts)-1], labels, step(weights), m.Classes)
		return loss, graphBackward(m, x, t, dlogits)
	}
	c.rules.Round(s, sh.LocalSteps)
	if s.grads != c.grads || s.next != c.nums {
		panic(
			fmt.Errorf(
				"gpu engine: %s's definition took %d gradients and %d numbers for %d local steps on the device, its "+
					"trace on the host %d gradients and %d numbers",
				sh.Algorithm,
				s.grads,
				s.next,
				sh.LocalSteps,
				c.grads,
				c.nums,
			),
		)
	}
	outs := make([]*Node, 0, ns+2)
	active := s.is(s.column(c.nums))
	for k, name := range c.names {
		outs = append(outs, Where(active, s.state[name], inputs[k]))
	}
	fin := LogicalAll(IsFinite(Reshape(outs[0], sh.Cells, sh.Workers*m.Params)), 1)
	return append(outs, s.losses, ConvertDType(fin, dtypes.Float32))
}

// graphSpace runs an algorithm's definition over the round program's
// nodes: a Vec is a [cells*workers, P] node, a Num a [cells*workers, 1]
// column of the numbers input, a Flag such a column's being > 0. The
// definition asks for its numbers in the order algorithms.TraceRound
// computes them on the host, so the i-th is column i. Steps builds the
// local steps as one While loop over a single step's body (one step's
// activations live at a time; loop.Counted): the body's numbers are the
// columns the trace gives the first step (every later step's are the same
// values, numbers depending on the cell and the round only).
type graphSpace struct {
	algorithm              string
	exact                  bool // the CPU engine's order (exact.Mix, exact.Mean, exact.Scale)
	cells, workers, params int
	scal, mixing           *Node
	state                  map[string]*Node
	losses                 *Node      // [rows, K]: each step's per-worker loss (float64)
	next                   int        // numbers asked for so far
	nodes                  []*Node    // the vectors made so far, by Vec.Ref
	flags                  []flagRef  // the conditions made so far, by Flag.Ref
	grads                  int        // local steps' gradients taken so far
	tau                    *Node      // the local step, as an int32 scalar (nil outside Steps)
	body                   *loop.Body // Steps' loop body while it is built (nil outside)
	outside                []*Node    // what Steps' loop carries: the round's inputs after the state
	grad                   func(tau, x *Node) (loss, grad *Node)
}

var _ algorithms.Space = (*graphSpace)(nil)

func (s *graphSpace) Steps(k int, step func(tau int)) {
	if s.body != nil {
		panic(fmt.Errorf("gpu engine: %s's definition runs Steps within Steps", s.algorithm))
	}
	names := slices.Sorted(maps.Keys(s.state))
	first, grads := s.next, s.grads
	state := append(valuesOf(s.state, names), s.losses) // the losses last: every round program uses them
	out := loop.Counted(s.scal.Graph(), k, 1, s.outside, state, func(b *loop.Body, tau *Node, state []*Node) []*Node {
		s.body, s.tau = b, tau
		for i, name := range names {
			s.state[name] = state[i]
		}
		s.losses = state[len(names)]
		step(0)
		s.body, s.tau = nil, nil
		return append(valuesOf(s.state, names), s.losses)
	})
	s.next, s.grads = first+k*(s.next-first), grads+k*(s.grads-grads)
	for i, name := range names {
		s.state[name] = out[i]
	}
	s.losses = out[len(names)]
}

// here is v as the current function can use it: within Steps' loop, a
// value from outside it comes in as a parameter of the loop's body.
func (s *graphSpace) here(v *Node) *Node {
	if s.body == nil {
		return v
	}
	return s.body.Use(v)
}

// hereAll is here of each value.
func (s *graphSpace) hereAll(vs []*Node) []*Node {
	if s.body == nil {
		return vs
	}
	return s.body.UseAll(vs)
}

// valuesOf lists m's values of names, in order.
func valuesOf(m map[string]*Node, names []string) []*Node {
	out := make([]*Node, len(names))
	for i, name := range names {
		out[i] = m[name]
	}
	return out
}

// column is number i as a [rows, 1] column (one value per cell).
func (s *graphSpace) column(i int) *Node {
	v := Slice(s.here(s.scal), AxisRange(), AxisElem(i)) // [cells, 1]
	return Reshape(BroadcastToDims(Reshape(v, s.cells, 1, 1), s.cells, s.workers, 1), s.cells*s.workers, 1)
}

// is is a column's being > 0, as a [rows, P] mask.
func (s *graphSpace) is(col *Node) *Node {
	return BroadcastToDims(GreaterThan(col, ZerosLike(col)), s.cells*s.workers, s.params)
}

func (s *graphSpace) vector(name string) *Node {
	v, ok := s.state[name]
	if !ok {
		panic(
			fmt.Errorf("gpu engine: %s's definition uses vector %q, which its Rules do not declare", s.algorithm, name),
		)
	}
	return v
}

// vec is a handle of a vector node.
func (s *graphSpace) vec(n *Node) algorithms.Vec {
	s.nodes = append(s.nodes, n)
	return algorithms.Vec{Ref: len(s.nodes) - 1}
}

// flag is a handle of a condition.
func (s *graphSpace) flag(r flagRef) algorithms.Flag {
	s.flags = append(s.flags, r)
	return algorithms.Flag{Ref: len(s.flags) - 1}
}

func (s *graphSpace) Get(name string) algorithms.Vec { return s.vec(s.vector(name)) }
func (s *graphSpace) Set(name string, v algorithms.Vec) {
	s.vector(name)
	s.state[name] = s.nodes[v.Ref]
}

// Grad takes step tau's gradient (the loop's step inside Steps) and
// writes its losses into column tau of the round's losses.
func (s *graphSpace) Grad(tau int) algorithms.Vec {
	x := s.here(s.state["x"])
	at := s.tau
	if at == nil {
		at = Const(x.Graph(), int32(tau))
	}
	loss, grad := s.grad(at, x)
	s.grads++
	column := Equal(
		Iota(x.Graph(), shapes.Make(dtypes.Int32, s.losses.Shape().Dimensions...), 1),
		at,
	) // every backend has Where
	loss = ConvertDType(loss, dtypes.Float64)
	s.losses = Where(
		column,
		BroadcastToDims(Reshape(loss, s.cells*s.workers, 1), s.losses.Shape().Dimensions...),
		s.losses,
	)
	return s.vec(grad)
}

// A Num's Ref is its column of the numbers input, and a Flag's numbers a
// flagRef: both are made nodes where they are used (numNode, flagNode), so
// that a number asked for before Steps is read within the loop from the
// loop's own copy of the numbers.
type flagRef struct {
	column    int
	firstStep bool // only within Steps' first trip (FirstStep)
}

func (s *graphSpace) Num(func(algorithms.Config, algorithms.At) float32) algorithms.Num {
	s.next++
	return algorithms.Num{Ref: s.next - 1}
}

func (s *graphSpace) Flag(func(algorithms.Config, algorithms.At) bool) algorithms.Flag {
	s.next++
	return s.flag(flagRef{column: s.next - 1})
}

func (s *graphSpace) FirstStep(f algorithms.Flag) algorithms.Flag {
	r := s.flags[f.Ref]
	r.firstStep = true
	return s.flag(r)
}

// numNode is a Num as a [rows, 1] node of the current function.
func (s *graphSpace) numNode(n algorithms.Num) *Node { return s.column(n.Ref) }

// flagNode is a Flag as a [rows, P] mask of the current function; one of
// FirstStep's is false but within the first trip of Steps' loop (the step
// counter is 0).
func (s *graphSpace) flagNode(f algorithms.Flag) *Node {
	r := s.flags[f.Ref]
	mask := s.is(s.column(r.column))
	if !r.firstStep {
		return mask
	}
	g, dims := mask.Graph(), mask.Shape().Dimensions
	if s.tau == nil {
		return BroadcastToDims(Const(g, false), dims...)
	}
	return LogicalAnd(mask, BroadcastToDims(Equal(s.tau, Const(g, int32(0))), dims...))
}

// node is a Vec as the current function can use it.
func (s *graphSpace) node(v algorithms.Vec) *Node { return s.here(s.nodes[v.Ref]) }

func (s *graphSpace) Add(a, b algorithms.Vec) algorithms.Vec {
	return s.vec(Add(s.node(a), s.node(b)))
}
func (s *graphSpace) Sub(a, b algorithms.Vec) algorithms.Vec {
	return s.vec(Sub(s.node(a), s.node(b)))
}
func (s *graphSpace) Scale(n algorithms.Num, a algorithms.Vec) algorithms.Vec {
	if s.exact {
		return s.vec(exact.Scale(s.numNode(n), s.node(a)))
	}
	return s.vec(Mul(s.numNode(n), s.node(a)))
}
func (s *graphSpace) Div(a algorithms.Vec, n algorithms.Num) algorithms.Vec {
	return s.vec(Div(s.node(a), s.numNode(n)))
}
func (s *graphSpace) Select(f algorithms.Flag, a, b algorithms.Vec) algorithms.Vec {
	return s.vec(Where(s.flagNode(f), s.node(a), s.node(b)))
}
func (s *graphSpace) Zero() algorithms.Vec { return s.vec(ZerosLike(s.here(s.state["x"]))) }

// Mix is the gossip with each cell's matrix, in float64 as on the CPU.
func (s *graphSpace) Mix(_ string, v algorithms.Vec) algorithms.Vec {
	if s.exact {
		return s.vec(exact.Mix(s.node(v), s.here(s.mixing), s.cells, s.workers))
	}
	x64 := Reshape(ConvertDType(s.node(v), dtypes.Float64), s.cells, s.workers, s.params)
	mixed := Einsum("cij,cjp->cip", s.here(s.mixing), x64)
	return s.vec(Reshape(ConvertDType(mixed, dtypes.Float32), s.cells*s.workers, s.params))
}

// Average is the exact mean over each cell's workers, in float64.
func (s *graphSpace) Average(_ string, v, _ algorithms.Vec) algorithms.Vec {
	if s.exact {
		return s.vec(exact.Mean(s.node(v), s.cells, s.workers))
	}
	x64 := Reshape(ConvertDType(s.node(v), dtypes.Float64), s.cells, s.workers, s.params)
	mean := DivScalar(ReduceSum(x64, 1), float64(s.workers))
	all := BroadcastToDims(ExpandAxes(ConvertDType(mean, dtypes.Float32), 1), s.cells, s.workers, s.params)
	return s.vec(Reshape(all, s.cells*s.workers, s.params))
}

// maskBits is the number of mask bits per packed word.
const maskBits = 16

// unpackMask expands a step's packed mask [rows, b, words] (uint16 words,
// bit j of word u/16 for unit u) into the layer's [rows, b, C, H, W] or
// [rows, b, F] mask of 0 and the scale. Bits are read with float
// arithmetic, exact for 16-bit words (every backend has it): bit j of v is
// floor(v 2^-j) - 2 floor(v 2^-(j+1)).
func unpackMask(packed *Node, s nn.Shape, d nn.Dropout) *Node {
	dims := packed.Shape().Dimensions
	rows, b, words := dims[0], dims[1], dims[2]
	w := ConvertDType(Reshape(packed, rows, b, words, 1), dtypes.Float32)
	pow, pow2 := make([]float32, maskBits), make([]float32, maskBits)
	for j := range pow {
		pow[j], pow2[j] = float32(math.Ldexp(1, -j)), float32(math.Ldexp(1, -j-1))
	}
	g := packed.Graph()
	at := func(v []float32) *Node { return Const(g, tensors.FromFlatDataAndDimensions(v, 1, 1, 1, maskBits)) }
	bits := Sub(Floor(Mul(w, at(pow))), MulScalar(Floor(Mul(w, at(pow2))), 2))
	bits = Slice(Reshape(bits, rows, b, words*maskBits), AxisRange(), AxisRange(), AxisRange(0, s.Size()))
	_, scale := d.MaskParams()
	mask := MulScalar(bits, float64(scale))
	if s.Spatial {
		return Reshape(mask, rows, b, s.C, s.H, s.W)
	}
	return Reshape(mask, rows, b, s.Size())
}

// evalGraph is the evaluation program of `cells` cells: inputs the models
// x [cells*workers, P], then the resident test split; outputs per model —
// the rows, then each cell's average model — the sum of losses and the
// number of hits over the test split, and each cell's mean_i |x_i -
// xbar|^2 (all float64). The average models and distances are computed
// once; a While loop runs the models on chunk test samples at a time (a
// power of two up to nn.EvalBatch; evalChunk's), each chunk's sums
// (float32) added in float64.
func (c *xlaCohort) evalGraph(cells, chunk int) func(inputs []*Node) []*Node {
	return func(inputs []*Node) []*Node {
		n := c.shape.Workers
		m := c.model
		x, split := inputs[0], inputs[1:]
		g := x.Graph()
		p := m.Params
		x64 := Reshape(ConvertDType(x, dtypes.Float64), cells, n, p)
		mean := DivScalar(ReduceSum(x64, 1), float64(n)) // [cells, P]
		dev := Sub(x64, ExpandAxes(mean, 1))
		distance := DivScalar(ReduceSum(Mul(dev, dev), 1, 2), float64(n))
		models := Concatenate([]*Node{x, ConvertDType(mean, dtypes.Float32)}, 0)
		k := cells * (n + 1)
		zero := Zeros(g, shapes.Make(dtypes.Float64, k))
		out := loop.Counted(
			g,
			c.test.len,
			chunk,
			append([]*Node{models}, split...),
			[]*Node{zero, zero},
			func(b *loop.Body, start *Node, sums []*Node) []*Node {
				g := start.Graph()
				sample := Add(Iota(g, shapes.Make(dtypes.Int32, chunk), 0), start)
				valid := ConvertDType(LessThan(sample, Const(g, int32(c.test.len))), dtypes.Float32)
				in, labels := c.gatherInput(
					b.UseAll(split),
					ExpandAxes(sample, 0),
					k,
				) // the chunk's samples once, for every model
				t := graphForward(m, b.Use(models), in, nil)
				w := BroadcastToDims(ExpandAxes(valid, 0), k, chunk)
				loss, _, hits := crossEntropyGraph(t.acts[len(t.acts)-1], labels, w, m.Classes)
				correct := ReduceSum(Mul(ConvertDType(hits, dtypes.Float32), w), 1)
				return []*Node{
					Add(sums[0], ConvertDType(loss, dtypes.Float64)),
					Add(sums[1], ConvertDType(correct, dtypes.Float64)),
				}
			},
		)
		return []*Node{out[0], out[1], distance}
	}
}
