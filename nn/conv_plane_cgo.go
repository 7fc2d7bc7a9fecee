//go:build cgo

package nn

/*
#cgo CFLAGS: -O3 -std=c11 -Wno-psabi
#include <string.h>

// v16 is 16 floats: one AVX-512 register, two of AVX2, four of SSE; each
// lane's arithmetic is IEEE single precision whatever the target, and
// ISO C (-std=c11) keeps multiplies and adds apart (GCC contracts them into FMAs only in GNU C), so every target (and
// the Go loops of conv_plane.go) gives the same bits.
typedef float v16 __attribute__((vector_size(64)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif
#define INLINE static inline __attribute__((always_inline))

INLINE v16 load16(const float *p) { v16 v; memcpy(&v, p, sizeof v); return v; }

// loadn reads n < 16 floats, the other lanes 0.
INLINE v16 loadn(const float *p, int n) { v16 v = {0}; memcpy(&v, p, n * sizeof(float)); return v; }

// forward: 8 output channels at a time, 16 columns of a row in each of
// their accumulators.
INLINE void forward_k(const float *planes, const float *w, const float *bias, float *y,
	int batch, int oh, int ow, int pw, int outc, const int k) {
	int ph = oh + k - 1;
	for (int o0 = 0; o0 < outc; o0 += 8) {
		int no = outc - o0 < 8 ? outc - o0 : 8;
		float wb[8 * 49], bb[8];  // k <= 7
		for (int o = 0; o < 8; o++) {
			bb[o] = o < no ? bias[o0 + o] : 0;
			for (int t = 0; t < k * k; t++) wb[t * 8 + o] = o < no ? w[(o0 + o) * k * k + t] : 0;
		}
		for (int s = 0; s < batch; s++) {
			const float *plane = planes + (size_t)s * ph * pw;
			for (int r = 0; r < oh; r++) {
				for (int c0 = 0; c0 < ow; c0 += 16) {
					v16 acc[8];
					for (int o = 0; o < 8; o++) acc[o] = (v16){0} + bb[o];
					for (int ki = 0; ki < k; ki++)
						for (int kj = 0; kj < k; kj++) {
							v16 x = load16(plane + (r + ki) * pw + c0 + kj);
							const float *wt = wb + (ki * k + kj) * 8;
							for (int o = 0; o < 8; o++) acc[o] += wt[o] * x;
						}
					int n = ow - c0 < 16 ? ow - c0 : 16;
					for (int o = 0; o < no; o++)
						memcpy(y + (((size_t)(o0 + o) * batch + s) * oh + r) * ow + c0, &acc[o], n * sizeof(float));
				}
			}
		}
	}
}

// weight and bias gradients: samples 8 at a time (their planes and dy stay
// in cache); for each filter row ki, 4 output channels at a time, the k
// taps of the row (and the bias) in registers over the group's samples,
// rows and columns, kept in sums between groups.
enum { group = 8 };

INLINE void grad_block(const float *planes, const float *dy, v16 *sums, v16 *bsums,
	int s0, int s1, int batch, int oh, int ow, int pw, int o0, int ki, const int k, const int ob) {
	int ph = oh + k - 1;
	v16 acc[4][7], b[4];
	for (int o = 0; o < ob; o++) {
		b[o] = bsums[o];
		for (int kj = 0; kj < k; kj++) acc[o][kj] = sums[o * k + kj];
	}
	for (int s = s0; s < s1; s++) {
		const float *plane = planes + (size_t)s * ph * pw;
		for (int r = 0; r < oh; r++)
			for (int c0 = 0; c0 < ow; c0 += 16) {
				int n = ow - c0 < 16 ? ow - c0 : 16;
				v16 d[4];
				for (int o = 0; o < ob; o++) {
					const float *row = dy + (((size_t)(o0 + o) * batch + s) * oh + r) * ow + c0;
					d[o] = n == 16 ? load16(row) : loadn(row, n);
					if (ki == 0) b[o] += d[o];
				}
				for (int kj = 0; kj < k; kj++) {
					v16 x = load16(plane + (r + ki) * pw + c0 + kj);
					for (int o = 0; o < ob; o++) acc[o][kj] += d[o] * x;
				}
			}
	}
	for (int o = 0; o < ob; o++) {
		bsums[o] = b[o];
		for (int kj = 0; kj < k; kj++) sums[o * k + kj] = acc[o][kj];
	}
}

INLINE float hsum(v16 v) {
	float t = v[0];
	for (int l = 1; l < 16; l++) t += v[l];
	return t;
}

// sums: outc*k*k vectors (channel, ki, kj); bsums: outc vectors.
INLINE void wgrad_k(const float *planes, const float *dy, float *gw, float *gb, v16 *sums, v16 *bsums,
	int batch, int oh, int ow, int pw, int outc, const int k) {
	for (int i = 0; i < outc * k * k; i++) sums[i] = (v16){0};
	for (int o = 0; o < outc; o++) bsums[o] = (v16){0};
	for (int s0 = 0; s0 < batch; s0 += group) {
		int s1 = batch - s0 < group ? batch : s0 + group;
		for (int ki = 0; ki < k; ki++)
			for (int o0 = 0; o0 < outc; o0 += 4) {
				// a block's sums for row ki: channel o's taps at sums[((o0+o)*k+ki)*k], k apart by channel
				v16 block[4 * 7], bblock[4];
				int ob = outc - o0 < 4 ? outc - o0 : 4;
				for (int o = 0; o < ob; o++) {
					bblock[o] = bsums[o0 + o];
					for (int kj = 0; kj < k; kj++) block[o * k + kj] = sums[((o0 + o) * k + ki) * k + kj];
				}
				switch (ob) {
				case 4: grad_block(planes, dy, block, bblock, s0, s1, batch, oh, ow, pw, o0, ki, k, 4); break;
				case 3: grad_block(planes, dy, block, bblock, s0, s1, batch, oh, ow, pw, o0, ki, k, 3); break;
				case 2: grad_block(planes, dy, block, bblock, s0, s1, batch, oh, ow, pw, o0, ki, k, 2); break;
				default: grad_block(planes, dy, block, bblock, s0, s1, batch, oh, ow, pw, o0, ki, k, 1);
				}
				for (int o = 0; o < ob; o++) {
					bsums[o0 + o] = bblock[o];
					for (int kj = 0; kj < k; kj++) sums[((o0 + o) * k + ki) * k + kj] = block[o * k + kj];
				}
			}
	}
	for (int i = 0; i < outc * k * k; i++) gw[i] = hsum(sums[i]);
	for (int o = 0; o < outc; o++) gb[o] = hsum(bsums[o]);
}

CLONES static void plane_forward(const float *planes, const float *w, const float *bias, float *y,
	int batch, int oh, int ow, int pw, int outc, int k) {
	switch (k) {
	case 3: forward_k(planes, w, bias, y, batch, oh, ow, pw, outc, 3); break;
	case 5: forward_k(planes, w, bias, y, batch, oh, ow, pw, outc, 5); break;
	default: forward_k(planes, w, bias, y, batch, oh, ow, pw, outc, k);
	}
}

CLONES static void plane_wgrad(const float *planes, const float *dy, float *gw, float *gb, float *scratch,
	int batch, int oh, int ow, int pw, int outc, int k) {
	v16 *sums = (v16 *)scratch, *bsums = sums + outc * k * k;
	switch (k) {
	case 3: wgrad_k(planes, dy, gw, gb, sums, bsums, batch, oh, ow, pw, outc, 3); break;
	case 5: wgrad_k(planes, dy, gw, gb, sums, bsums, batch, oh, ow, pw, outc, 5); break;
	default: wgrad_k(planes, dy, gw, gb, sums, bsums, batch, oh, ow, pw, outc, k);
	}
}
*/
import "C"

// Under cgo the one-channel convolution runs as C vectors (conv_plane.go
// says what they compute).

func planeForward(planes, w, bias, y []float32, batch, oh, ow, pw, outC, k int) {
	C.plane_forward((*C.float)(&planes[0]), (*C.float)(&w[0]), (*C.float)(&bias[0]), (*C.float)(&y[0]),
		C.int(batch), C.int(oh), C.int(ow), C.int(pw), C.int(outC), C.int(k))
}

func planeWeightGrad(planes, dy, gw, gb, scratch []float32, batch, oh, ow, pw, outC, k int) {
	C.plane_wgrad((*C.float)(&planes[0]), (*C.float)(&dy[0]), (*C.float)(&gw[0]), (*C.float)(&gb[0]), (*C.float)(&scratch[0]),
		C.int(batch), C.int(oh), C.int(ow), C.int(pw), C.int(outC), C.int(k))
}
