package split

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ump-lab/ump/internal/rng"
)

// HoldOut splits each worker's samples (parts[w], indexes into labels)
// into those it trains on and those it holds out for validation: round(
// fraction × n) of its n samples, stratified by class (class c gives
// fraction × n_c, rounded so that the shares add up, the largest
// remainders first), drawn within each class from the stream (seed,
// "validation", worker). Both lists keep the partition's order. A worker
// left with nothing to train on is an error.
func HoldOut(
	parts [][]int,
	labels []int32,
	classes int,
	fraction float64,
	seed uint64,
) (train, val [][]int, err error) {
	for w, p := range parts {
		byClass := make([][]int, classes) // positions in p
		for i, s := range p {
			byClass[labels[s]] = append(byClass[labels[s]], i)
		}
		shares := make([]int, classes)
		type rest struct {
			class int
			frac  float64
		}
		var rests []rest
		total := int(math.Round(fraction * float64(len(p))))
		given := 0
		for c, idx := range byClass {
			exact := float64(fraction * float64(len(idx)))
			shares[c] = int(math.Floor(exact))
			given += shares[c]
			rests = append(rests, rest{c, exact - float64(shares[c])})
		}
		slices.SortStableFunc(rests, func(a, b rest) int { return cmp.Compare(b.frac, a.frac) })
		for k := 0; given < total; k++ {
			shares[rests[k].class]++
			given++
		}
		held := make([]bool, len(p))
		r := rng.New(seed, "validation", uint64(w))
		for c, idx := range byClass {
			r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			for _, i := range idx[:shares[c]] {
				held[i] = true
			}
		}
		var t, v []int
		for i, s := range p {
			if held[i] {
				v = append(v, s)
			} else {
				t = append(t, s)
			}
		}
		if len(t) == 0 {
			return nil, nil, fmt.Errorf(
				"validation: worker %d would hold out all its %d samples; lower validation.fraction or use fewer "+
					"workers",
				w,
				len(p),
			)
		}
		train, val = append(train, t), append(val, v)
	}
	return train, val, nil
}
