package compress

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/cpu"
)

// benchWorkers, benchSteps and benchBatch are the MNIST examples' round:
// 10 workers, K = 10 local steps of batch 128, LeNet.
const benchWorkers, benchSteps, benchBatch = 10, 10, 128

var roundOnce struct {
	sync.Once
	seconds float64
	x       [][]float32 // the workers' parameters after the timed rounds
}

// lenetRound times D-SUM rounds of LeNet on random MNIST-shaped data with
// exact communication and returns the median seconds per round, and the
// trained parameters (realistic vectors to compress).
func lenetRound(b *testing.B) (float64, [][]float32) {
	roundOnce.Do(func() {
		r := rng.New(1, "bench-data")
		data := &datasets.Dataset{Classes: 10, Shape: []int{1, 28, 28}}
		data.Train.Labels = make([]int32, 4*benchBatch)
		data.Train.Pixels = make([]uint8, len(data.Train.Labels)*28*28)
		for i := range data.Train.Labels {
			data.Train.Labels[i] = int32(r.IntN(10))
		}
		for i := range data.Train.Pixels {
			data.Train.Pixels[i] = uint8(r.IntN(256))
		}
		e, err := cpu.New("lenet", data, 1)
		if err != nil {
			b.Fatal(err)
		}
		x0 := make([]float32, e.Params())
		e.Init(x0)
		opt, err := algorithms.New(
			algorithms.Config{Name: "d-sum", Params: kinds.Values{"alpha": 2.0, "beta": 0.9}},
			benchWorkers,
			x0,
		)
		if err != nil {
			b.Fatal(err)
		}
		batches, losses := make([][]int, benchWorkers), make([]float64, benchWorkers)
		for i := range batches {
			batches[i] = r.Perm(len(data.Train.Labels))[:benchBatch]
		}
		ring := benchRing(benchWorkers)
		var secs []float64
		for t := range 4 { // a warm-up round, then three timed
			start := time.Now()
			err := opt.Round(
				&algorithms.Round{
					T:   t,
					K:   benchSteps,
					LR:  0.01,
					Mix: ring,
					Grad: func(step int, x, g [][]float32) error {
						e.Gradients(nn.Step{Round: t, Local: step}, x, g, batches, losses)
						return nil
					},
				},
			)
			if err != nil {
				b.Fatal(err)
			}
			if t > 0 {
				secs = append(secs, time.Since(start).Seconds())
			}
		}
		slices.Sort(secs)
		roundOnce.seconds, roundOnce.x = secs[len(secs)/2], opt.X()
	})
	return roundOnce.seconds, roundOnce.x
}

func benchRing(n int) algorithms.Mixing {
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
		w[i][i], w[i][(i+1)%n], w[i][(i+n-1)%n] = 1.0/3, 1.0/3, 1.0/3
	}
	m, _ := algorithms.NewMixing(w)
	return m
}

// BenchmarkCommunication times one D-SUM round's communication (CHOCO
// gossip of x and v, encode and decode included) for 10 LeNet workers with
// each codec, and reports it as a share of a LeNet D-SUM round with exact
// communication (10 workers, K = 10, batch 128) measured in the same run.
func BenchmarkCommunication(b *testing.B) {
	round, x := lenetRound(b)
	specs := []Spec{
		{Codec: "none"},
		{Codec: "fp16"},
		{Codec: "topk", Params: kinds.Values{"ratio": 0.1}},
		{Codec: "topk", Params: kinds.Values{"ratio": 0.01}},
		{
			Codec:  "randomk",
			Params: kinds.Values{"ratio": 0.01},
		},
		{Codec: "threshold", Params: kinds.Values{"tau": 0.01}},
		{Codec: "qsgd", Params: kinds.Values{"levels": 16, "bucket": 512}},
		{
			Codec: "terngrad",
		},
		{Codec: "sign"},
		{Codec: "onebit"},
		{Codec: "natural"},
		{Codec: "powersgd", Params: kinds.Values{"rank": 1}},
	}
	for _, spec := range specs {
		name := spec.Codec
		if ratio := spec.Params.Float("ratio"); ratio > 0 {
			name += "-" + strconv.FormatFloat(ratio, 'g', -1, 64)
		}
		b.Run(name, func(b *testing.B) {
			ex, err := NewExchange(Config{Spec: spec, Seed: 1}, benchWorkers, len(x[0]))
			if err != nil {
				b.Fatal(err)
			}
			xs, vs := clone(x), clone(x)
			ring := benchRing(benchWorkers)
			t := 0
			for b.Loop() {
				ex.Gossip(t, "x", nil, xs, ring)
				ex.Gossip(t, "v", nil, vs, ring)
				t++
			}
			perRound := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(100*perRound/round, "%round")
			b.ReportMetric(1000*round, "round-ms")
		})
	}
}

func clone(x [][]float32) [][]float32 {
	out := make([][]float32, len(x))
	for i := range x {
		out[i] = slices.Clone(x[i])
	}
	return out
}
