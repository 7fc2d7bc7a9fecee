package compress

import (
	"math"
	"slices"
)

// topk sends the k entries of largest magnitude (ties: lower index first),
// as index-value pairs.
type topk struct{ ratio float64 }

func (c topk) Encode(t []float32, _ Draw) Message {
	return sparse(t, largest(t, keep(c.ratio, len(t))))
}

func (topk) Decode(m Message, _ Draw, dst []float32) { decodeSparse(m, dst) }

// largest returns, ascending, the indices of the k entries of t with the
// largest magnitude; among equal magnitudes the lower indices.
func largest(t []float32, k int) []int {
	if k >= len(t) {
		idx := make([]int, len(t))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	mag := make([]float32, len(t))
	for i, v := range t {
		mag[i] = float32(math.Abs(float64(v)))
	}
	cut := kthLargest(slices.Clone(mag), k)
	above := 0 // entries strictly above the cut all go in
	for _, v := range mag {
		if v > cut {
			above++
		}
	}
	ties := k - above
	idx := make([]int, 0, k)
	for i, v := range mag {
		if v > cut || (v == cut && ties > 0) {
			if v == cut {
				ties--
			}
			idx = append(idx, i)
		}
	}
	return idx
}

// kthLargest returns the k-th largest value of a (1-based), reordering a
// (quickselect with median-of-three pivots).
func kthLargest(a []float32, k int) float32 {
	lo, hi, want := 0, len(a)-1, k-1 // want: index in descending order
	for lo < hi {
		mid := lo + (hi-lo)/2
		p := median3(a[lo], a[mid], a[hi])
		i, j := lo, hi
		for i <= j {
			for a[i] > p {
				i++
			}
			for a[j] < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return a[want]
		}
	}
	return a[want]
}

func median3(a, b, c float32) float32 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
