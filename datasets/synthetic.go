package datasets

import (
	"fmt"

	"github.com/ump-lab/ump/internal/rng"
)

// Synthetic parameterises the Gaussian-mixture classification task: class
// c has mean mu_c with entries drawn from N(0, Separation^2); a sample of
// class c (classes drawn uniformly) is mu_c + N(0, I). The data depend only
// on these parameters, not on the cell seed.
type Synthetic struct {
	Dims, Classes, Train, Test int
	Separation                 float64
}

// NewSynthetic generates the task.
func NewSynthetic(s Synthetic) (*Dataset, error) {
	if s.Dims < 1 || s.Classes < 2 || s.Train < 1 || s.Test < 1 || !(s.Separation > 0) {
		return nil, fmt.Errorf(
			"synthetic task %+v: need dims >= 1, classes >= 2, train and test >= 1, separation > 0",
			s,
		)
	}
	means := make([]float64, s.Classes*s.Dims)
	r := rng.New(0, "synthetic-means")
	for k := range means {
		means[k] = s.Separation * rng.Normal(r)
	}
	d := &Dataset{Classes: s.Classes, Shape: []int{s.Dims}}
	for k, split := range []*Split{&d.Train, &d.Test} {
		n := []int{s.Train, s.Test}[k]
		r := rng.New(0, "synthetic-samples", uint64(k))
		split.Labels = make([]int32, n)
		split.Features = make([]float32, n*s.Dims)
		for i := range split.Labels {
			c := r.IntN(s.Classes)
			split.Labels[i] = int32(c)
			for j := 0; j < s.Dims; j++ {
				split.Features[i*s.Dims+j] = float32(means[c*s.Dims+j] + rng.Normal(r))
			}
		}
	}
	return d, nil
}
