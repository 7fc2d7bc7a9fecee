// Package partition is the stage that assigns every training sample to
// exactly one worker and records the assignment ("assignment": worker,
// sample; samples ascending within a worker) and the per-worker class
// histogram ("histogram": worker, class, count; every class for every
// worker). For the quadratic task worker i owns objective f_i: the
// assignment is worker i, sample i and there is no histogram.
//
// Kinds, all seeded by the cell seed:
//   - iid: a random permutation cut into n near-equal parts.
//   - dirichlet(alpha): for each class, proportions over the n workers are
//     drawn from Dir(alpha) and the class's shuffled samples are cut at the
//     rounded cumulative proportions; the whole draw is repeated (at most
//     1000 times) until every worker holds at least min_size samples.
//   - shards(k): samples sorted by label (then index) are cut into n*k
//     equal shards; a random permutation deals k shards to each worker.
package partition

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// Stage records the partition of a cell's data over its workers.
type Stage struct{}

var _ stages.Stage = Stage{}

func (Stage) Name() string { return "partition" }
func (Stage) Version() int { return 2 }

// Params is the data (not the model), the workers, the seed and the kind.
func (Stage) Params(cfg *manifests.Manifest) any {
	task := cfg.Task
	task.Model = ""
	return struct {
		Task      manifests.Task       `json:"task"`
		Workers   int                  `json:"workers"`
		Seed      int                  `json:"seed"`
		Partition *manifests.Partition `json:"partition,omitempty"`
	}{task, cfg.Workers, cfg.Seed, cfg.Partition}
}

// Summary is the stage's JSON summary.
type Summary struct {
	Samples        int `json:"samples"`
	MinWorkerSize  int `json:"min_worker_size"`
	MaxWorkerSize  int `json:"max_worker_size"`
	DirichletDraws int `json:"dirichlet_draws,omitempty"`
}

func (Stage) Run(ctx context.Context, env *stages.Env) (*stages.Result, error) {
	cfg := &env.Cell.Config
	n := cfg.Workers
	if cfg.Task.Dataset == "quadratic" {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		ref, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
			{Name: "worker", Ints: ids}, {Name: "sample", Ints: ids}}})
		if err != nil {
			return nil, err
		}
		return &stages.Result{Outputs: map[string]artifacts.Ref{"assignment": ref}}, nil
	}
	data, err := stages.LoadData(cfg, env.Data)
	if err != nil {
		return nil, err
	}
	parts, draws, err := Assign(data.Train.Labels, data.Classes, n, uint64(cfg.Seed), cfg.Partition)
	if err != nil {
		return nil, err
	}
	sum := Summary{Samples: data.Train.Len(), MinWorkerSize: math.MaxInt, DirichletDraws: draws}
	var worker, sample, hw, hc, count []int64
	for i, p := range parts {
		sum.MinWorkerSize, sum.MaxWorkerSize = min(sum.MinWorkerSize, len(p)), max(sum.MaxWorkerSize, len(p))
		hist := make([]int64, data.Classes)
		for _, s := range p {
			worker, sample = append(worker, int64(i)), append(sample, int64(s))
			hist[data.Train.Labels[s]]++
		}
		for c, k := range hist {
			hw, hc, count = append(hw, int64(i)), append(hc, int64(c)), append(count, k)
		}
	}
	assignment, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
		{Name: "worker", Ints: worker}, {Name: "sample", Ints: sample}}})
	if err != nil {
		return nil, err
	}
	histogram, err := stages.PutTable(ctx, env.Store, &artifacts.Table{Columns: []artifacts.Column{
		{Name: "worker", Ints: hw}, {Name: "class", Ints: hc}, {Name: "count", Ints: count}}})
	if err != nil {
		return nil, err
	}
	summary, _ := json.Marshal(sum)
	return &stages.Result{Outputs: map[string]artifacts.Ref{"assignment": assignment, "histogram": histogram}, Summary: summary}, nil
}

// maxDraws bounds the Dirichlet resampling.
const maxDraws = 1000

// Assign splits sample indices 0..len(labels)-1 over n workers; each
// worker's samples come back ascending. draws is the number of Dirichlet
// draws taken (0 for other kinds).
func Assign(labels []int32, classes, n int, seed uint64, p *manifests.Partition) (parts [][]int, draws int, err error) {
	total := len(labels)
	minSize := 1
	if p.Kind == "dirichlet" {
		minSize = *p.MinSize
	}
	if total < n*minSize {
		return nil, 0, fmt.Errorf("partition: %d samples cannot give %d workers at least %d each; use fewer workers (or a smaller partition.min_size)", total, n, minSize)
	}
	switch p.Kind {
	case "iid":
		perm := rng.New(seed, "partition-iid").Perm(total)
		parts = make([][]int, n)
		for i := range parts {
			parts[i] = perm[i*total/n : (i+1)*total/n]
		}
	case "shards":
		k := *p.Shards
		if total < n*k {
			return nil, 0, fmt.Errorf("partition: %d samples cannot make %d shards for %d workers; lower partition.shards", total, n*k, n)
		}
		order := make([]int, total)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return int(labels[a]) - int(labels[b]) })
		shard := rng.New(seed, "partition-shards").Perm(n * k)
		parts = make([][]int, n)
		for i := range parts {
			for _, s := range shard[i*k : (i+1)*k] {
				parts[i] = append(parts[i], order[s*total/(n*k):(s+1)*total/(n*k)]...)
			}
		}
	case "dirichlet":
		parts, draws, err = dirichletSplit(labels, classes, n, seed, *p.Alpha, minSize)
		if err != nil {
			return nil, draws, err
		}
	default:
		return nil, 0, fmt.Errorf("partition: unknown kind %q", p.Kind)
	}
	for _, part := range parts {
		slices.Sort(part)
	}
	return parts, draws, nil
}

// dirichletSplit draws per-class proportions until every worker holds at
// least minSize samples.
func dirichletSplit(labels []int32, classes, n int, seed uint64, alpha float64, minSize int) ([][]int, int, error) {
	byClass := make([][]int, classes)
	for s, l := range labels {
		byClass[l] = append(byClass[l], s)
	}
	for c := range byClass {
		r := rng.New(seed, "partition-dirichlet-order", uint64(c))
		r.Shuffle(len(byClass[c]), func(a, b int) { byClass[c][a], byClass[c][b] = byClass[c][b], byClass[c][a] })
	}
	cuts := make([][]int, classes) // cuts[c][j]: end of worker j's share of class c
	for c := range cuts {
		cuts[c] = make([]int, n)
	}
	props := make([]float64, n)
	sizes := make([]int, n)
	best := -1
	for draw := 0; draw < maxDraws; draw++ {
		r := rng.New(seed, "partition-dirichlet", uint64(draw))
		clear(sizes)
		for c, members := range byClass {
			dirichlet(r, alpha, props)
			cum, prev := 0.0, 0
			for j := range props {
				cum += props[j]
				end := int(math.Round(cum * float64(len(members))))
				if j == n-1 {
					end = len(members)
				}
				end = max(end, prev)
				cuts[c][j] = end
				sizes[j] += end - prev
				prev = end
			}
		}
		smallest := slices.Min(sizes)
		if smallest >= minSize {
			parts := make([][]int, n)
			for c, members := range byClass {
				prev := 0
				for j, end := range cuts[c] {
					parts[j] = append(parts[j], members[prev:end]...)
					prev = end
				}
			}
			return parts, draw + 1, nil
		}
		best = max(best, smallest)
	}
	return nil, maxDraws, fmt.Errorf("partition: no Dirichlet(%g) draw out of %d gave all %d workers at least %d samples (the best left one worker %d); raise partition.alpha, lower partition.min_size or use fewer workers",
		alpha, maxDraws, n, minSize, best)
}

// dirichlet fills p with a draw from Dir(alpha, ..., alpha). It works with
// log-gamma variates so that tiny alpha cannot underflow to all zeros.
func dirichlet(r *rand.Rand, alpha float64, p []float64) {
	hi := math.Inf(-1)
	for j := range p {
		p[j] = logGamma(r, alpha)
		hi = math.Max(hi, p[j])
	}
	sum := 0.0
	for j := range p {
		p[j] = math.Exp(p[j] - hi)
		sum += p[j]
	}
	for j := range p {
		p[j] /= sum
	}
}

// logGamma returns the log of a Gamma(a, 1) variate (Marsaglia and Tsang;
// for a < 1, Gamma(a) = Gamma(a+1) * U^(1/a)).
func logGamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		u := 1 - r.Float64() // in (0, 1]
		return logGamma(r, a+1) + math.Log(u)/a
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Log(d * v)
		}
	}
}
