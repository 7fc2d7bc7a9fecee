package split

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ump-lab/ump/internal/fmath"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
)

// maxDraws bounds the Dirichlet resampling.
const maxDraws = 1000

// assign is a partition kind's constructor: it splits sample indices
// 0..len(labels)-1 over n workers and says how many Dirichlet draws it
// took.
type assign func(v kinds.Values, labels []int32, classes, n int, seed uint64) (parts [][]int, draws int, err error)

// Partitions declares every partition kind, its parameters and its split
// (see the package doc).
var Partitions = kinds.Family[assign]{Field: "partition", Key: "kind", Kinds: []kinds.Kind[assign]{
	{Name: "iid", Doc: "a random permutation cut into near-equal parts",
		New: func(_ kinds.Values, labels []int32, _, n int, seed uint64) ([][]int, int, error) {
			total := len(labels)
			perm := rng.New(seed, "partition-iid").Perm(total)
			parts := make([][]int, n)
			for i := range parts {
				parts[i] = perm[i*total/n : (i+1)*total/n]
			}
			return parts, 0, nil
		}},
	{Name: "dirichlet", Doc: "per-class proportions over the workers drawn from Dir(alpha)", Params: []kinds.Param{
		{
			Name:     "alpha",
			Type:     kinds.Float,
			Range:    "(0, inf)",
			Doc:      "the Dirichlet concentration (non-IID degree, the paper uses 0.1, 1, 10)",
			Required: "dirichlet needs alpha, the non-IID degree (the paper uses 0.1, 1 and 10)",
		},
		{
			Name:    "min_size",
			Type:    kinds.Int,
			Range:   "[1, inf)",
			Default: 10,
			Doc:     "the fewest samples a worker may hold",
		}},
		New: func(v kinds.Values, labels []int32, classes, n int, seed uint64) ([][]int, int, error) {
			return dirichletSplit(labels, classes, n, seed, v.Float("alpha"), v.Int("min_size"))
		}},
	{Name: "shards", Doc: "label-sorted shards dealt at random", Params: []kinds.Param{
		{Name: "shards", Type: kinds.Int, Range: "[1, inf)", Default: 2, Doc: "label-sorted shards per worker"}},
		New: func(v kinds.Values, labels []int32, _, n int, seed uint64) ([][]int, int, error) {
			total, k := len(labels), v.Int("shards")
			if total < n*k {
				return nil, 0, fmt.Errorf(
					"partition: %d samples cannot make %d shards for %d workers; lower partition.shards",
					total,
					n*k,
					n,
				)
			}
			order := make([]int, total)
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(a, b int) int { return int(labels[a]) - int(labels[b]) })
			shard := rng.New(seed, "partition-shards").Perm(n * k)
			parts := make([][]int, n)
			for i := range parts {
				for _, s := range shard[i*k : (i+1)*k] {
					parts[i] = append(parts[i], order[s*total/(n*k):(s+1)*total/(n*k)]...)
				}
			}
			return parts, 0, nil
		}},
}}

// Assign splits sample indices 0..len(labels)-1 over n workers as the
// kind says; each worker's samples come back ascending. draws is the
// number of Dirichlet draws taken (0 for other kinds).
func Assign(
	kind string,
	v kinds.Values,
	labels []int32,
	classes, n int,
	seed uint64,
) (parts [][]int, draws int, err error) {
	k, ok := Partitions.Lookup(kind)
	if !ok {
		return nil, 0, fmt.Errorf("partition: unknown kind %q; use one of %v", kind, Partitions.Names())
	}
	total, minSize := len(labels), max(1, v.Int("min_size"))
	if total < n*minSize {
		return nil, 0, fmt.Errorf(
			"partition: %d samples cannot give %d workers at least %d each; use fewer workers (or a smaller "+
				"partition.min_size)",
			total,
			n,
			minSize,
		)
	}
	parts, draws, err = k.New(v, labels, classes, n, seed)
	if err != nil {
		return nil, draws, err
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
	return nil, maxDraws, fmt.Errorf(
		"partition: no Dirichlet(%g) draw out of %d gave all %d workers at least %d samples (the best left one "+
			"worker %d); raise partition.alpha, lower partition.min_size or use fewer workers",
		alpha,
		maxDraws,
		n,
		minSize,
		best,
	)
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
		p[j] = fmath.Exp(p[j] - hi)
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
		u := 1 - float64(r.Float64()) // in (0, 1]
		return logGamma(r, a+1) + fmath.Log(u)/a
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.Normal(r)
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - float64(r.Float64())
		if fmath.Log(u) < float64(0.5*x*x)+d-float64(d*v)+float64(d*fmath.Log(v)) {
			return fmath.Log(d * v)
		}
	}
}
