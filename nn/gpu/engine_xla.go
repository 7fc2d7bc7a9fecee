//go:build xla

package gpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gomlx/go-xla/pkg/pjrt"
	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // "go": the pure-Go backend, for tests without a GPU
	"github.com/gomlx/gomlx/backends/xla"        // "xla:/abs/path/plugin.so": PJRT, CUDA on GPU hosts
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
)

// GPU is the GoMLX engine step by step: the n workers' forward and
// backward passes (graph_xla.go) are one compiled program over a leading
// worker axis, run by a GoMLX backend — XLA through a PJRT plugin (CUDA on
// GPU hosts) or GoMLX's pure-Go backend. It uses the CPU engine's model,
// parameter layout, input standardisation and dropout masks (drawn on the
// host from the same streams), so on the same parameters and batches both
// compute the same gradients up to floating-point rounding. Parameters are
// uploaded and gradients downloaded at every call: it serves the cells
// whose compressed communication runs on the host; every other GPU cell
// trains in a Cohort.
type Engine struct {
	model   *nn.Model
	data    *datasets.Dataset
	seed    uint64
	lut     [][256]float32
	backend backends.Backend
	name    string
	train   *Exec // (params, input..., labels, weights, masks...) -> (losses, grads)
	eval    *Exec // (params, input..., labels, weights) -> (loss sums, correct counts)
}

var _ nn.Engine = (*Engine)(nil)

// New builds the GoMLX engine on the device.
func New(model string, data *datasets.Dataset, seed uint64, device *Device) (*Engine, error) {
	m, err := nn.NewModel(model, nn.Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)})
	if err != nil {
		return nil, err
	}
	backend, err := device.Backend()
	if err != nil {
		return nil, err
	}
	e := &Engine{model: m, data: data, seed: seed, backend: backend}
	e.name = gpuName(backend)
	if len(data.Shape) == 3 {
		e.lut = nn.Standardise(&data.Train, data.Shape[0])
	}
	if e.train, err = NewExec(backend, e.trainGraph); err != nil {
		return nil, err
	}
	if e.eval, err = NewExec(backend, e.evalGraph); err != nil {
		return nil, err
	}
	// A program per shape a run meets — the largest batch of a call (up to
	// the batch size), bags padded to multiples of 16 tokens, the models
	// evaluated — each compiled once and kept: GoMLX's default cache of 32
	// would fail the run at its 33rd shape.
	e.train.SetMaxCache(-1)
	e.eval.SetMaxCache(-1)
	return e, nil
}

// GoBackend is GoMLX's pure-Go backend with its ops run one after another
// (run in parallel, its worker pool can deadlock on graphs with several
// large products).
const GoBackend = "go:ops_sequential"

// Device is one GoMLX backend, opened at its first use and shared by the
// engines and cohorts built on it (a PJRT client reserves most of the
// GPU's memory, so a process opens one).
type Device struct {
	config  string // the backend, in GoMLX's syntax ("" until found)
	once    sync.Once
	backend backends.Backend
	err     error
}

// NewDevice names the backend in GoMLX's syntax
// ("xla:/abs/path/xla_cuda_plugin.so", or "go" for the pure-Go backend);
// "" is the CUDA plugin FindCUDAPlugin finds. Nothing opens until first
// use, and plugins are never downloaded.
func NewDevice(config string) *Device { return &Device{config: config} }

// Backend opens the backend once and returns it.
func (d *Device) Backend() (backends.Backend, error) {
	if d == nil {
		return nil, errors.New("gpu engine: no device configured")
	}
	d.once.Do(func() {
		if d.config == "" {
			plugin, err := FindCUDAPlugin()
			if err != nil {
				d.err = err
				return
			}
			d.config = "xla:" + plugin
		}
		d.backend, d.err = openBackend(d.config)
		if d.err != nil {
			d.err = fmt.Errorf("gpu engine: backend %q: %w", d.config, d.err)
		} else if d.backend == nil {
			d.err = fmt.Errorf("gpu engine: backend %q gave no backend", d.config)
		}
	})
	return d.backend, d.err
}

// pjrtOptions are the PJRT client's options on a GPU: no preallocated
// pool (JAX's and PJRT's default reserves 75% of the GPU at start), the
// allocator may grow to 90% of the GPU, so a cohort takes what its
// programs need and a second process or the peers can share the device.
var pjrtOptions = pjrt.NamedValuesMap{"preallocate": false, "memory_fraction": float32(0.9)}

// openBackend opens a GoMLX backend: "xla:PLUGIN" with pjrtOptions and
// float32 products in float32; anything else by GoMLX's registry ("go").
//
// Float32 products: XLA's DEFAULT precision lets cuBLAS use TF32, so every
// float32 DotGeneral must carry precision_config HIGHEST. GoMLX v0.27.3's
// XLA backend (backends/xla/ops_dotgeneral.go) emits HIGHEST on a CUDA
// plugin only on the path of its DotGeneralUseTF32 switch — elsewhere that
// path sets a TF32 dot algorithm — and nothing with the switch off (its
// "notf32"). So the switch is on exactly when GoMLX sees a CUDA plugin.
// TestCheckCompile reads the StableHLO an XLA backend compiles for the
// attribute, and ump doctor checks the products' digits on the device.
func openBackend(config string) (backends.Backend, error) {
	plugin, ok := strings.CutPrefix(config, "xla:")
	if !ok {
		return backends.NewWithConfig(config)
	}
	b, err := xla.NewWithOptions(plugin, pjrtOptions)
	if err != nil {
		return nil, err
	}
	loaded, err := pjrt.GetPlugin(plugin) // the plugin b loaded (go-xla keeps one per path)
	if err != nil {
		b.Finalize()
		return nil, err
	}
	b.DotGeneralUseTF32 = loaded.IsCUDA()
	return b, nil
}

// Name is the GoMLX engine's Name on the device (it opens the device).
func (d *Device) Name() (string, error) {
	b, err := d.Backend()
	if err != nil {
		return "", err
	}
	return gpuName(b), nil
}

// Environment is the environment the GPU engine needs, which
// SetGPUEnvironment puts in place before a device opens (XLA and cuBLAS
// read it when they load): float32 products in float32 on NVIDIA GPUs
// (XLA's default precision lets cuBLAS and its Triton kernels use TF32,
// whose 10-bit mantissa put the gradients 0.3-5% away from the CPU
// engine's): cuBLAS without TF32, no Triton GEMMs, deterministic ops and
// the CUDA directory for XLA's compiler (go-xla would otherwise guess
// one); GOPJRT_CUDA_CHECKS=0 quiets go-xla's library layout warning and
// GOMLX_NO_AUTO_INSTALL=1 keeps GoMLX from downloading plugins.
func Environment() map[string]string {
	flags := "--xla_gpu_enable_triton_gemm=false --xla_gpu_deterministic_ops=true"
	for _, dir := range []string{"/usr/local/cuda", "/usr/lib/cuda"} {
		if _, err := os.Stat(filepath.Join(dir, "nvvm")); err == nil {
			flags += " --xla_gpu_cuda_data_dir=" + dir
			break
		}
	}
	return map[string]string{
		"NVIDIA_TF32_OVERRIDE":  "0",
		"GOPJRT_CUDA_CHECKS":    "0",
		"XLA_FLAGS":             flags,
		"GOMLX_NO_AUTO_INSTALL": "1",
	}
}

// FindCUDAPlugin returns the absolute path of the CUDA PJRT plugin of an
// installed jax-cuda PJRT package (xla_cuda_plugin.so), or of go-xla's
// own install, or an error saying where it looked.
func FindCUDAPlugin() (string, error) {
	home, _ := os.UserHomeDir()
	patterns := []string{
		"/opt/*/.venv/lib/python3*/site-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
		"/usr/local/lib/python3*/dist-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
		"/usr/local/lib/python3*/site-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
		"/usr/lib/python3/dist-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so",
		filepath.Join(home, ".local/lib/python3*/site-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so"),
		filepath.Join(home, ".local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so"),
	}
	for _, p := range patterns {
		found, _ := filepath.Glob(p)
		sort.Strings(found)
		if len(found) > 0 {
			return found[len(found)-1], nil
		}
	}
	return "", fmt.Errorf(
		"gpu engine: no CUDA PJRT plugin found (looked for %v); install the jax-cuda PJRT package or set "+
			"GOMLX_BACKEND=xla:/abs/path/xla_cuda_plugin.so",
		patterns,
	)
}

// DeviceMemory is the GPU's memory in bytes as nvidia-smi reports it
// (measured), or 16 GiB when it cannot tell (another backend, no
// nvidia-smi).
func DeviceMemory() (bytes int64, measured bool) {
	out, err := exec.Command("nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits").Output()
	if err == nil {
		if mib, err := strconv.ParseInt(strings.TrimSpace(strings.Split(string(out), "\n")[0]), 10, 64); err == nil &&
			mib > 0 {
			return mib << 20, true
		}
	}
	return 16 << 30, false
}

func gpuName(b backends.Backend) string {
	return "gomlx-float32/v5 " + b.Name() + " " + b.DeviceDescription(0)
}

func (e *Engine) Name() string     { return e.name }
func (e *Engine) Params() int      { return e.model.Params }
func (e *Engine) Init(p []float32) { e.model.Init(p, e.seed) }

// batchInput holds one call's host-side inputs, workers padded to the
// largest batch.
type batchInput struct {
	n, b    int
	x       []float32 // n x b x sample (images, features)
	tokens  []int32   // n x b x L, indices into the n*vocab embedding rows
	bagW    []float32 // n x b x L: 1/len(bag) for a bag's tokens, else 0
	bagLen  int       // L
	labels  []int32   // n x b
	weights []float32 // n x b: 1/len(batch) for the worker's samples, else 0
}

// gatherBatches loads the samples idx[i] of split into slot i, every slot
// padded to pad samples.
func (e *Engine) gatherBatches(split *datasets.Split, idx [][]int, pad int) *batchInput {
	n := len(idx)
	in := &batchInput{n: n, b: pad}
	in.labels, in.weights = make([]int32, n*pad), make([]float32, n*pad)
	m := e.model
	sample := m.In.C * m.In.H * m.In.W
	if m.Text {
		for _, ids := range idx {
			for _, s := range ids {
				in.bagLen = max(in.bagLen, int(split.Offsets[s+1]-split.Offsets[s]))
			}
		}
		in.bagLen = max(1, (in.bagLen+15)/16*16) // fewer distinct shapes to compile
		in.tokens, in.bagW = make([]int32, n*pad*in.bagLen), make([]float32, n*pad*in.bagLen)
	} else {
		in.x = make([]float32, n*pad*sample)
	}
	vocab := int32(len(e.data.Vocab))
	for w, ids := range idx {
		for k, s := range ids {
			slot := w*pad + k
			in.labels[slot] = split.Labels[s]
			in.weights[slot] = 1 / float32(len(ids))
			switch {
			case m.Text:
				bag := split.Tokens[split.Offsets[s]:split.Offsets[s+1]]
				for j, t := range bag {
					in.tokens[slot*in.bagLen+j] = int32(w)*vocab + t
					in.bagW[slot*in.bagLen+j] = 1 / float32(len(bag))
				}
			case m.In.Spatial:
				hw := m.In.H * m.In.W
				for c := 0; c < m.In.C; c++ {
					lut := &e.lut[c]
					dst := in.x[slot*sample+c*hw:][:hw]
					for j, v := range split.Pixels[(s*m.In.C+c)*hw:][:hw] {
						dst[j] = lut[v]
					}
				}
			default:
				copy(in.x[slot*sample:][:sample], split.Features[s*sample:][:sample])
			}
		}
	}
	return in
}

// args are the tensors of a call: each parameter block of every model
// [k, size], the input, labels, weights.
func (e *Engine) args(params [][]float32, in *batchInput) []any {
	m := e.model
	p := make([]float32, 0, len(params)*m.Params)
	for _, v := range params {
		p = append(p, v...)
	}
	args := []any{tensors.FromFlatDataAndDimensions(p, len(params), m.Params)}
	switch {
	case m.Text:
		args = append(args, tensors.FromFlatDataAndDimensions(in.tokens, in.n, in.b, in.bagLen),
			tensors.FromFlatDataAndDimensions(in.bagW, in.n, in.b, in.bagLen))
	case m.In.Spatial:
		args = append(args, tensors.FromFlatDataAndDimensions(in.x, in.n, in.b, m.In.C, m.In.H, m.In.W))
	default:
		args = append(args, tensors.FromFlatDataAndDimensions(in.x, in.n, in.b, m.In.C))
	}
	return append(args, tensors.FromFlatDataAndDimensions(in.labels, in.n, in.b),
		tensors.FromFlatDataAndDimensions(in.weights, in.n, in.b))
}

// masks draws every dropout layer's masks on the host, as the CPU engine
// does (stream (seed, "dropout", worker, round, local), layer by layer, in
// the layer's C x B x H x W or B x F layout), and lays them out n x b x
// (C x H x W | F) with zeros for padding.
func (e *Engine) masks(at nn.Step, batches [][]int, pad int) []any {
	m := e.model
	var out []any
	streams := make([]*rand.Rand, len(batches))
	for i := range batches {
		streams[i] = rng.New(e.seed, "dropout", uint64(i), uint64(at.Round), uint64(at.Local))
	}
	for li, l := range m.Layers {
		d, ok := l.(nn.Dropout)
		if !ok {
			continue
		}
		s := m.Shapes[li]
		size, hw := s.Size(), s.H*s.W
		threshold, scale := d.MaskParams()
		all := make([]float32, len(batches)*pad*size)
		for i, batch := range batches {
			b := len(batch)
			mask := make([]float32, size*b)
			nn.DropoutMask(streams[i], threshold, scale, mask)
			for k := 0; k < b; k++ {
				dst := all[(i*pad+k)*size:][:size]
				if s.Spatial { // C x B x H x W -> per sample C x H x W
					for c := 0; c < s.C; c++ {
						copy(dst[c*hw:][:hw], mask[(c*b+k)*hw:][:hw])
					}
				} else {
					copy(dst, mask[k*size:][:size])
				}
			}
		}
		dims := []int{len(batches), pad, size}
		if s.Spatial {
			dims = []int{len(batches), pad, s.C, s.H, s.W}
		}
		out = append(out, tensors.FromFlatDataAndDimensions(all, dims...))
	}
	return out
}

func (e *Engine) Gradients(at nn.Step, params, grads [][]float32, batches [][]int, losses []float64) error {
	pad := 0
	for _, b := range batches {
		pad = max(pad, len(b))
	}
	in := e.gatherBatches(&e.data.Train, batches, pad)
	out, err := e.train.Exec(append(e.args(params, in), e.masks(at, batches, pad)...)...)
	if err != nil {
		return fmt.Errorf("gpu engine: %w", err)
	}
	fl, err := download(out)
	if err != nil {
		return err
	}
	ls, g := fl[0], fl[1]
	for i := range params {
		losses[i] = float64(ls[i])
		copy(grads[i], g[i*e.model.Params:][:e.model.Params])
	}
	return nil
}

func (e *Engine) Evaluate(params [][]float32, split *datasets.Split) ([]nn.Score, error) {
	k := len(params)
	loss, correct := make([]float64, k), make([]float64, k)
	for start := 0; start < split.Len(); start += nn.EvalBatch {
		ids := make([]int, 0, nn.EvalBatch)
		for s := start; s < min(start+nn.EvalBatch, split.Len()); s++ {
			ids = append(ids, s)
		}
		idx := make([][]int, k)
		for i := range idx {
			idx[i] = ids
		}
		in := e.gatherBatches(split, idx, nn.EvalBatch)
		out, err := e.eval.Exec(e.args(params, in)...)
		if err != nil {
			return nil, fmt.Errorf("gpu engine: %w", err)
		}
		fl, err := download(out)
		if err != nil {
			return nil, err
		}
		for i := range k {
			loss[i] += float64(fl[0][i]) * float64(len(ids))
			correct[i] += float64(fl[1][i])
		}
	}
	scores := make([]nn.Score, k)
	for i := range scores {
		scores[i] = nn.Score{Loss: loss[i] / float64(split.Len()), Accuracy: correct[i] / float64(split.Len())}
	}
	return scores, nil
}

// download copies float32 results to the host and frees them.
func download(ts []*tensors.Tensor) ([][]float32, error) {
	defer finalize(ts)
	out := make([][]float32, len(ts))
	for i, t := range ts {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, fmt.Errorf("gpu engine: downloading a result: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.FinalizeAll()
	}
}

// trainGraph: inputs the parameters [n,P], the input, labels [n,b],
// weights [n,b], then one mask per dropout layer; outputs the per-worker
// mean losses [n] and their gradients [n,P].
func (e *Engine) trainGraph(inputs []*Node) []*Node {
	p, in, rest := e.split(inputs)
	labels, weights, masks := rest[0], rest[1], rest[2:]
	t := graphForward(e.model, p, in, masks)
	loss, dlogits, _ := crossEntropyGraph(t.acts[len(t.acts)-1], labels, weights, e.model.Classes)
	return []*Node{loss, graphBackward(e.model, p, t, dlogits)}
}

// evalGraph: inputs params [k,P], the input, labels, weights (1 for a real
// sample, 1/len as in training); outputs each model's mean loss over the
// batch and its number of correct predictions.
func (e *Engine) evalGraph(inputs []*Node) []*Node {
	p, in, rest := e.split(inputs)
	labels, weights := rest[0], rest[1]
	t := graphForward(e.model, p, in, nil)
	loss, _, hits := crossEntropyGraph(t.acts[len(t.acts)-1], labels, weights, e.model.Classes)
	valid := ConvertDType(GreaterThan(weights, ZerosLike(weights)), dtypes.Float32)
	return []*Node{loss, ReduceSum(Mul(ConvertDType(hits, dtypes.Float32), valid), 1)}
}

// split separates the parameters and the model input from the rest.
func (e *Engine) split(inputs []*Node) (p *Node, in graphInput, rest []*Node) {
	p, inputs = inputs[0], inputs[1:]
	if e.model.Text {
		return p, graphInput{rows: inputs[0], bagW: inputs[1]}, inputs[2:]
	}
	if e.model.In.Spatial {
		return p, graphInput{x: TransposeAllAxes(inputs[0], 0, 1, 3, 4, 2)}, inputs[1:]
	}
	return p, graphInput{x: inputs[0]}, inputs[1:]
}
