package compress

import (
	"math"

	"github.com/ump-lab/ump/internal/rng"
)

// powersgd (Vogels et al.) views the vector as a rows x cols matrix M
// (cols = ceil(sqrt d), zero-padded) and sends a rank-r approximation from
// one power iteration: P = M Q with Q a Gaussian matrix drawn alike on
// every worker each round, P orthonormalised, then Q' = M^T P; the message
// is P and Q' (32 bits per entry), the decoded vector P Q'^T. r is capped
// at min(rows, cols). There is no warm start: Q is fresh every round.
type powersgd struct{ rank int }

func (c powersgd) shape(d int) (rows, cols, rank int) {
	cols = int(math.Ceil(math.Sqrt(float64(d))))
	rows = (d + cols - 1) / cols
	return rows, cols, min(c.rank, rows, cols)
}

func (c powersgd) Encode(t []float32, at Draw) Message {
	rows, cols, rank := c.shape(len(t))
	entry := func(i, j int) float64 {
		if k := i*cols + j; k < len(t) {
			return float64(t[k])
		}
		return 0
	}
	q := make([]float64, cols*rank)
	r := at.shared()
	for k := range q {
		q[k] = rng.Normal(r)
	}
	p := make([]float64, rows*rank) // P = M Q
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if m := entry(i, j); m != 0 {
				for a := 0; a < rank; a++ {
					p[i*rank+a] += float64(m * q[j*rank+a])
				}
			}
		}
	}
	orthonormalise(p, rows, rank)
	clear(q) // Q' = M^T P
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if m := entry(i, j); m != 0 {
				for a := 0; a < rank; a++ {
					q[j*rank+a] += float64(m * p[i*rank+a])
				}
			}
		}
	}
	w := newWriter(32 * rank * (rows + cols))
	for _, v := range p {
		w.f32(float32(v))
	}
	for _, v := range q {
		w.f32(float32(v))
	}
	return w.message()
}

// orthonormalise applies Gram-Schmidt to the columns of the rows x rank
// matrix p (row-major); a column that vanishes stays zero.
func orthonormalise(p []float64, rows, rank int) {
	for a := 0; a < rank; a++ {
		for b := 0; b < a; b++ {
			dot := 0.0
			for i := 0; i < rows; i++ {
				dot += float64(p[i*rank+a] * p[i*rank+b])
			}
			for i := 0; i < rows; i++ {
				p[i*rank+a] -= float64(dot * p[i*rank+b])
			}
		}
		norm := 0.0
		for i := 0; i < rows; i++ {
			norm += float64(p[i*rank+a] * p[i*rank+a])
		}
		if norm = math.Sqrt(norm); norm > 1e-30 {
			for i := 0; i < rows; i++ {
				p[i*rank+a] /= norm
			}
		} else {
			for i := 0; i < rows; i++ {
				p[i*rank+a] = 0
			}
		}
	}
}

func (c powersgd) Decode(m Message, _ Draw, dst []float32) {
	rows, cols, rank := c.shape(len(dst))
	r := reader{b: m.Payload}
	p, q := make([]float32, rows*rank), make([]float32, cols*rank)
	for k := range p {
		p[k] = r.f32()
	}
	for k := range q {
		q[k] = r.f32()
	}
	for k := range dst {
		i, j := k/cols, k%cols
		s := float32(0)
		for a := 0; a < rank; a++ {
			s += float32(p[i*rank+a] * q[j*rank+a])
		}
		dst[k] = s
	}
}
