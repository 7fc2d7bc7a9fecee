package compress

import "math"

// threshold sends the entries with |t| > tau as index-value pairs; the
// message size varies.
type threshold struct{ tau float64 }

func (c threshold) Encode(t []float32, _ Draw) Message {
	var idx []int
	for k, v := range t {
		if math.Abs(float64(v)) > c.tau {
			idx = append(idx, k)
		}
	}
	return sparse(t, idx)
}

func (threshold) Decode(m Message, _ Draw, dst []float32) { decodeSparse(m, dst) }
