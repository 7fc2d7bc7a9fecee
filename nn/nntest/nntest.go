package nntest

import (
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
)

// RandomData makes a data set of random samples of the given shape.
func RandomData(shape []int, classes, samples, vocab, bagLen int) *datasets.Dataset {
	r := rng.New(1, "peer-data")
	d := &datasets.Dataset{Classes: classes, Shape: shape}
	s := &d.Train
	s.Labels = make([]int32, samples)
	for i := range s.Labels {
		s.Labels[i] = int32(r.IntN(classes))
	}
	if shape == nil {
		d.Vocab = make([]string, vocab)
		s.Offsets = []int64{0}
		for i := 0; i < samples; i++ {
			for j := 0; j < bagLen; j++ {
				s.Tokens = append(s.Tokens, int32(r.IntN(vocab)))
			}
			s.Offsets = append(s.Offsets, int64(len(s.Tokens)))
		}
		return d
	}
	size := 1
	for _, v := range shape {
		size *= v
	}
	s.Pixels = make([]uint8, samples*size)
	for i := range s.Pixels {
		s.Pixels[i] = uint8(r.IntN(256))
	}
	return d
}

// WithTest gives d a test split of its first n training samples.
func WithTest(d *datasets.Dataset, n int) *datasets.Dataset {
	tr, te := &d.Train, &d.Test
	te.Labels = tr.Labels[:n]
	if tr.Offsets != nil {
		te.Offsets, te.Tokens = tr.Offsets[:n+1], tr.Tokens[:tr.Offsets[n]]
		return d
	}
	size := len(tr.Pixels) / len(tr.Labels)
	te.Pixels = tr.Pixels[:n*size]
	return d
}
