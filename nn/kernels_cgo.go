//go:build cgo

package nn

/*
#cgo CFLAGS: -O3 -std=c11 -Wno-psabi
#include <stdint.h>
#include <string.h>

// v16 is 16 floats: one AVX-512 register, two of AVX2, four of SSE; each
// lane's arithmetic is IEEE single precision whatever the target, and
// ISO C (-std=c11) keeps multiplies and adds apart (GCC contracts them
// into FMAs only in GNU C), so every target (and the Go loops) gives the
// same bits.
typedef float v16 __attribute__((vector_size(64)));
// v16u is a v16 in memory that Go allocated (aligned to 4 bytes only).
typedef v16 v16u __attribute__((aligned(4)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif
#define INLINE static inline __attribute__((always_inline))

INLINE v16 load16(const float *p) { v16 v; memcpy(&v, p, sizeof v); return v; }

// loadn reads n < 16 floats, the other lanes 0.
INLINE v16 loadn(const float *p, int n) { v16 v = {0}; memcpy(&v, p, n * sizeof(float)); return v; }

// forward: ob output channels at a time (6 for 6 channels, else 8), 16
// columns of a row in each of their accumulators; planes are chans x batch
// x ph x pw, of which only rows zr..zr+vr-1 may hold non-zeros (the taps
// of the others are skipped).
INLINE void forward_k(const float *planes, const float *w, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int pw, int outc, int zr, int vr, const int k, const int ob) {
	int ph = oh + k - 1, taps = chans * k * k;
	float wb[ob * taps], bb[ob];  // the block's filters, tap-major
	for (int o0 = 0; o0 < outc; o0 += ob) {
		int no = outc - o0 < ob ? outc - o0 : ob;
		for (int o = 0; o < ob; o++) {
			bb[o] = o < no ? bias[o0 + o] : 0;
			for (int t = 0; t < taps; t++) wb[t * ob + o] = o < no ? w[(o0 + o) * taps + t] : 0;
		}
		for (int s = 0; s < batch; s++)
			for (int r = 0; r < oh; r++) {
				int klo = zr - r > 0 ? zr - r : 0, khi = zr + vr - r < k ? zr + vr - r : k;
				for (int c0 = 0; c0 < ow; c0 += 16) {
					v16 acc[8];
					for (int o = 0; o < ob; o++) acc[o] = (v16){0} + bb[o];
					for (int ic = 0; ic < chans; ic++) {
						const float *plane = planes + (size_t)(ic * batch + s) * ph * pw;
						for (int ki = klo; ki < khi; ki++)
							for (int kj = 0; kj < k; kj++) {
								v16 x = load16(plane + (r + ki) * pw + c0 + kj);
								const float *wt = wb + ((ic * k + ki) * k + kj) * ob;
								for (int o = 0; o < ob; o++) acc[o] += wt[o] * x;
							}
					}
					int n = ow - c0 < 16 ? ow - c0 : 16;
					for (int o = 0; o < no; o++)
						memcpy(y + (((size_t)(o0 + o) * batch + s) * oh + r) * ow + c0, &acc[o], n * sizeof(float));
				}
			}
	}
}

// weight and bias gradients: samples 8 at a time (their planes and dy stay
// in cache); for each input channel and filter row ki, 4 output channels
// at a time, the k taps of the row (and, in the first, the bias) in
// registers over the group's samples, rows and columns, kept in sums
// between groups. planes (the input channel's) are batch x ph x pw.
enum { group = 8 };

INLINE void grad_block(const float *planes, const float *dy, v16 *sums, v16 *bsums, int with_bias,
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
					if (with_bias) b[o] += d[o];
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

// sums: outc*chans*k*k vectors (as gw); bsums: outc vectors.
INLINE void wgrad_k(const float *planes, const float *dy, float *gw, float *gb, v16u *sums, v16u *bsums,
	int chans, int batch, int oh, int ow, int pw, int outc, const int k) {
	int ph = oh + k - 1, taps = chans * k * k;
	for (int i = 0; i < outc * taps; i++) sums[i] = (v16){0};
	for (int o = 0; o < outc; o++) bsums[o] = (v16){0};
	for (int s0 = 0; s0 < batch; s0 += group) {
		int s1 = batch - s0 < group ? batch : s0 + group;
		for (int ic = 0; ic < chans; ic++)
			for (int ki = 0; ki < k; ki++)
				for (int o0 = 0; o0 < outc; o0 += 4) {
					// the block's sums of row ki: channel o's k taps from sums[(o0+o)*taps + (ic*k+ki)*k]
					const float *ch = planes + (size_t)ic * batch * ph * pw;
					int with_bias = ic == 0 && ki == 0;
					v16 block[4 * 7], bblock[4];
					int ob = outc - o0 < 4 ? outc - o0 : 4;
					for (int o = 0; o < ob; o++) {
						bblock[o] = bsums[o0 + o];
						for (int kj = 0; kj < k; kj++) block[o * k + kj] = sums[(o0 + o) * taps + (ic * k + ki) * k + kj];
					}
					switch (ob) {
					case 4: grad_block(ch, dy, block, bblock, with_bias, s0, s1, batch, oh, ow, pw, o0, ki, k, 4); break;
					case 3: grad_block(ch, dy, block, bblock, with_bias, s0, s1, batch, oh, ow, pw, o0, ki, k, 3); break;
					case 2: grad_block(ch, dy, block, bblock, with_bias, s0, s1, batch, oh, ow, pw, o0, ki, k, 2); break;
					default: grad_block(ch, dy, block, bblock, with_bias, s0, s1, batch, oh, ow, pw, o0, ki, k, 1);
					}
					for (int o = 0; o < ob; o++) {
						bsums[o0 + o] = bblock[o];
						for (int kj = 0; kj < k; kj++) sums[(o0 + o) * taps + (ic * k + ki) * k + kj] = block[o * k + kj];
					}
				}
	}
	for (int i = 0; i < outc * taps; i++) gw[i] = hsum(sums[i]);
	for (int o = 0; o < outc; o++) gb[o] = hsum(bsums[o]);
}

CLONES static void plane_forward(const float *planes, const float *w, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int pw, int outc, int zr, int vr, int k) {
#define FWD(K, OB) forward_k(planes, w, bias, y, chans, batch, oh, ow, pw, outc, zr, vr, K, OB)
	if (outc == 6) {
		if (k == 5) FWD(5, 6); else if (k == 3) FWD(3, 6); else FWD(k, 6);
	} else {
		if (k == 5) FWD(5, 8); else if (k == 3) FWD(3, 8); else FWD(k, 8);
	}
#undef FWD
}

// input gradient, 16 samples a vector: dx (inc x batch x h x w) is the
// correlation of dy (outc x batch x oh x ow), zero-padded by off on every
// side, with the filters w (outc x inc x k x k) flipped: plane_forward's
// sum over the padded planes (inputGradient, conv_plane.go), in its order,
// less the products of padding. Each of those is +0 or -0 when every
// filter is finite, and adding either to a sum that starts at +0 leaves
// the sum as it is (such a sum is never -0), so the bits are
// plane_forward's; with a filter that is not finite it returns 0, for
// the caller to take plane_forward's path. dyt (batch/16 rounded up x outc
// x oh x ow vectors) is scratch.
INLINE void igrad_k(const float *dy, const float *w, float *dx, v16u *dyt, int outc, int inc, int batch,
	int h, int wd, int oh, int ow, int off, const int k, const int ni) {
	int kk = k * k, nsv = (batch + 15) / 16;
	float wt[outc * kk * ni];  // [d][ki][kj][ic], flipped
	for (int d = 0; d < outc; d++)
		for (int t = 0; t < kk; t++)
			for (int ic = 0; ic < ni; ic++) wt[(d * kk + t) * ni + ic] = w[(d * inc + ic) * kk + kk - 1 - t];
	for (int sv = 0; sv < nsv; sv++) {
		int nl = batch - sv * 16 < 16 ? batch - sv * 16 : 16;
		v16u *ds = dyt + (size_t)sv * outc * oh * ow;
		for (int d = 0; d < outc; d++)
			for (int i = 0; i < oh * ow; i++) {
				v16 v = {0};
				for (int l = 0; l < nl; l++) v[l] = dy[((size_t)d * batch + sv * 16 + l) * oh * ow + i];
				ds[d * oh * ow + i] = v;
			}
		for (int r = 0; r < h; r++) {
			int klo = off - r > 0 ? off - r : 0, khi = off + oh - r < k ? off + oh - r : k;
			for (int c = 0; c < wd; c++) {
				int jlo = off - c > 0 ? off - c : 0, jhi = off + ow - c < k ? off + ow - c : k;
				v16 acc[8];
				for (int o = 0; o < ni; o++) acc[o] = (v16){0};
				if (jlo == 0 && jhi == k) // a column whose taps all fall on dy: k of them, unrolled
					for (int d = 0; d < outc; d++)
						for (int ki = klo; ki < khi; ki++) {
							const v16u *xr = ds + ((size_t)d * oh + r + ki - off) * ow + c - off;
							const float *wr = wt + (d * kk + ki * k) * ni;
							for (int kj = 0; kj < k; kj++) {
								v16 x = xr[kj];
								for (int o = 0; o < ni; o++) acc[o] += wr[kj * ni + o] * x;
							}
						}
				else
					for (int d = 0; d < outc; d++)
						for (int ki = klo; ki < khi; ki++) {
							const v16u *xr = ds + ((size_t)d * oh + r + ki - off) * ow + c - off;
							const float *wr = wt + (d * kk + ki * k) * ni;
							for (int kj = jlo; kj < jhi; kj++) {
								v16 x = xr[kj];
								for (int o = 0; o < ni; o++) acc[o] += wr[kj * ni + o] * x;
							}
						}
				for (int o = 0; o < ni; o++)
					for (int l = 0; l < nl; l++) dx[(((size_t)o * batch + sv * 16 + l) * h + r) * wd + c] = acc[o][l];
			}
		}
	}
}

CLONES static int input_grad(const float *dy, const float *w, float *dx, float *scratch, int outc, int inc, int batch,
	int h, int wd, int oh, int ow, int off, int k) {
	uint32_t bits;
	for (int i = 0; i < outc * inc * k * k; i++) {
		memcpy(&bits, w + i, sizeof bits);
		if ((bits & 0x7f800000) == 0x7f800000) return 0;
	}
	v16u *dyt = (v16u *)scratch;
	if (k == 5 && inc == 6) igrad_k(dy, w, dx, dyt, outc, inc, batch, h, wd, oh, ow, off, 5, 6);
	else igrad_k(dy, w, dx, dyt, outc, inc, batch, h, wd, oh, ow, off, k, inc);
	return 1;
}

CLONES static void plane_wgrad(const float *planes, const float *dy, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int pw, int outc, int k) {
	v16u *sums = (v16u *)scratch, *bsums = sums + outc * chans * k * k;
	switch (k) {
	case 3: wgrad_k(planes, dy, gw, gb, sums, bsums, chans, batch, oh, ow, pw, outc, 3); break;
	case 5: wgrad_k(planes, dy, gw, gb, sums, bsums, chans, batch, oh, ow, pw, outc, 5); break;
	default: wgrad_k(planes, dy, gw, gb, sums, bsums, chans, batch, oh, ow, pw, outc, k);
	}
}

// ---- convolutions with 16k output channels (conv_lanes.go) ----
// xp: padded input, C x batch x ph x pw; wt: filters as [C][k][k][outc];
// y: outc x batch x oh x ow. A vector holds 16 output channels.

// lanes_fwd_block: output row r of sample s, columns c0..c0+cb-1, channels
// ob*16..ob*16+15 (columns past ow are computed from padding, not stored).
INLINE void lanes_fwd_block(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int s, int r, int c0, int ob,
	const int k, const int cb) {
	v16 acc[12];
	v16 b = load16(bias + ob * 16);
	for (int c = 0; c < cb; c++) acc[c] = b;
	for (int ic = 0; ic < chans; ic++)
		for (int ki = 0; ki < k; ki++) {
			const float *xr = xp + ((size_t)(ic * batch + s) * ph + r + ki) * pw + c0;
			const float *wr = wt + (size_t)((ic * k + ki) * k) * outc + ob * 16;
			for (int kj = 0; kj < k; kj++) {
				v16 w = load16(wr + kj * outc);
				for (int c = 0; c < cb; c++) acc[c] += w * xr[c + kj];
			}
		}
	int n = ow - c0 < cb ? ow - c0 : cb;
	for (int o = 0; o < 16; o++) {
		float *yr = y + (((size_t)(ob * 16 + o) * batch + s) * oh + r) * ow + c0;
		for (int c = 0; c < n; c++) yr[c] = acc[c][o];
	}
}

INLINE void lanes_fwd_k(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, const int k, const int cb) {
	for (int s = 0; s < batch; s++)
		for (int r = 0; r < oh; r++)
			for (int ob = 0; ob < outc / 16; ob++)
				for (int c0 = 0; c0 < ow; c0 += cb)
					lanes_fwd_block(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, s, r, c0, ob, k, cb);
}

// narrow: the CPU has 16 vector registers (AVX2, SSE), not AVX-512's 32,
// so lanes_wgrad keeps a fifth as many 16-lane sums in them (each takes two
// of AVX2's): with as many as AVX-512 holds, most spill to memory at every
// multiply-add. narrow_override, when 0 or 1, decides instead (tests).
static int narrow_override = -1;
INLINE int narrow(void) { return narrow_override >= 0 ? narrow_override : !__builtin_cpu_supports("avx512f"); }
static void set_narrow(int v) { narrow_override = v; }

CLONES static void lanes_forward(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k, int cb) {
	if (k == 5 && cb == 10) lanes_fwd_k(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 5, 10);
	else if (k == 5) lanes_fwd_k(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 5, 8);
	else if (k == 3) lanes_fwd_k(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 3, 8);
	else lanes_fwd_k(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, k, 8);
}

// lanes_wgrad: dyt is dy as [batch][oh][ow][outc]; sums (outc/16 x C x
// k*k vectors, then outc/16 for the bias) carry each filter tap's sum over
// groups of 8 samples, `rows` rows of k taps in registers at a time within
// a group (all k rows, or one where narrow(): each tap's sum runs over the
// same samples, rows and columns in the same order either way).
INLINE void lanes_wgrad_k(const float *xp, const float *dyt, float *gw, float *gb, v16u *sums,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, const int k, const int rows) {
	int nob = outc / 16, kk = k * k;
	v16u *bsums = sums + (size_t)nob * chans * kk;
	for (int i = 0; i < nob * chans * kk; i++) sums[i] = (v16){0};
	for (int ob = 0; ob < nob; ob++) bsums[ob] = (v16){0};
	for (int s0 = 0; s0 < batch; s0 += group) {
		int s1 = batch - s0 < group ? batch : s0 + group;
		for (int ob = 0; ob < nob; ob++)
			for (int ic = 0; ic < chans; ic++)
				for (int k0 = 0; k0 < k; k0 += rows) {
					v16 acc[49], b = bsums[ob];
					v16u *sum = sums + (size_t)(ob * chans + ic) * kk + k0 * k;
					for (int t = 0; t < rows * k; t++) acc[t] = sum[t];
					for (int s = s0; s < s1; s++)
						for (int r = 0; r < oh; r++)
							for (int c = 0; c < ow; c++) {
								v16 d = load16(dyt + ((size_t)(s * oh + r) * ow + c) * outc + ob * 16);
								if (ic == 0 && k0 == 0) b += d;
								const float *xr = xp + ((size_t)(ic * batch + s) * ph + r + k0) * pw + c;
								for (int ki = 0; ki < rows; ki++)
									for (int kj = 0; kj < k; kj++) acc[ki * k + kj] += d * xr[ki * pw + kj];
							}
					for (int t = 0; t < rows * k; t++) sum[t] = acc[t];
					bsums[ob] = b;
				}
	}
	for (int ob = 0; ob < nob; ob++) {
		for (int o = 0; o < 16; o++) gb[ob * 16 + o] = bsums[ob][o];
		for (int ic = 0; ic < chans; ic++)
			for (int t = 0; t < kk; t++)
				for (int o = 0; o < 16; o++)
					gw[((size_t)(ob * 16 + o) * chans + ic) * kk + t] = sums[(size_t)(ob * chans + ic) * kk + t][o];
	}
}

CLONES static void lanes_wgrad(const float *xp, const float *dyt, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k) {
	v16u *sums = (v16u *)scratch;
	int one = narrow();
	if (k == 5 && one) lanes_wgrad_k(xp, dyt, gw, gb, sums, chans, batch, oh, ow, ph, pw, outc, 5, 1);
	else if (k == 5) lanes_wgrad_k(xp, dyt, gw, gb, sums, chans, batch, oh, ow, ph, pw, outc, 5, 5);
	else if (k == 3 && one) lanes_wgrad_k(xp, dyt, gw, gb, sums, chans, batch, oh, ow, ph, pw, outc, 3, 1);
	else if (k == 3) lanes_wgrad_k(xp, dyt, gw, gb, sums, chans, batch, oh, ow, ph, pw, outc, 3, 3);
	else lanes_wgrad_k(xp, dyt, gw, gb, sums, chans, batch, oh, ow, ph, pw, outc, k, one ? 1 : k);
}
// v8i is 8 int32s: GCC keeps comparisons of vectors of AVX2's width
// (and AVX-512's) in vector registers, and splits wider ones into scalars.
typedef int32_t v8i __attribute__((vector_size(32)));

// key maps float bits to int32s whose order is Go's max order of floats
// that are not NaN (-0 below +0); it is its own inverse.
INLINE v8i key(v8i bits) { return bits ^ ((bits >> 31) & 0x7fffffff); }

// pick is a where m holds lanes true (all ones), else b.
INLINE v8i pick(v8i m, v8i a, v8i b) { return (m & a) | (~m & b); }

// load8 reads the 8 floats' bits at x[i:], those at or past n as 0.
INLINE v8i load8(const float *x, size_t i, size_t n) {
	v8i v = {0};
	if (i + 8 <= n) memcpy(&v, x + i, sizeof v);
	else
		for (size_t j = i; j < n; j++) memcpy((int32_t *)&v + (j - i), x + j, sizeof(float));
	return v;
}

// store8 writes the first k of v's 8 lanes to p.
INLINE void store8(void *p, v8i v, int k) {
	if (k == 8) memcpy(p, &v, sizeof v);
	else
		for (int j = 0; j < k; j++) memcpy((int32_t *)p + j, (int32_t *)&v + j, sizeof(int32_t));
}

// pool_forward_k is poolForwardGo (layers.go) for windows without NaNs,
// 8 outputs of a row at a time, on keys; it returns 0, having seen a NaN,
// for the Go loop to give Go's NaN.
INLINE int pool_forward_k(const float *x, float *y, int32_t *at, int planes, int h, int w, const int train) {
	int oh = h / 2, ow = w / 2;
	size_t n = (size_t)planes * h * w;
	v8i nan = {0}, lane = {0, 1, 2, 3, 4, 5, 6, 7};
	for (size_t p = 0; p < (size_t)planes; p++)
		for (int r = 0; r < oh; r++)
			for (int c0 = 0; c0 < ow; c0 += 8) {
				size_t i0 = p * h * w + (size_t)2 * r * w + 2 * c0, i1 = i0 + w;
				v8i a0 = load8(x, i0, n), b0 = load8(x, i0 + 8, n);
				v8i a1 = load8(x, i1, n), b1 = load8(x, i1 + 8, n);
				v8i v[4] = {
					__builtin_shufflevector(a0, b0, 0, 2, 4, 6, 8, 10, 12, 14),
					__builtin_shufflevector(a0, b0, 1, 3, 5, 7, 9, 11, 13, 15),
					__builtin_shufflevector(a1, b1, 0, 2, 4, 6, 8, 10, 12, 14),
					__builtin_shufflevector(a1, b1, 1, 3, 5, 7, 9, 11, 13, 15),
				};
				int k = ow - c0 < 8 ? ow - c0 : 8;
				v8i in = lane < k, kv[4], km;
				for (int j = 0; j < 4; j++) {
					nan |= in & ((v[j] & 0x7fffffff) > 0x7f800000);
					kv[j] = key(v[j]);
				}
				km = pick(kv[0] > kv[1], kv[0], kv[1]);
				km = pick(kv[2] > km, kv[2], km);
				km = pick(kv[3] > km, kv[3], km);
				v8i m = key(km);
				size_t o = (p * oh + r) * ow + c0;
				store8(y + o, m, k);
				if (train) { // the first (row-major) equal to m as floats: -0 == +0
					v8i eq[4];
					for (int j = 0; j < 4; j++) eq[j] = (kv[j] == km) | ((kv[j] == -1) & (km == 0));
					v8i off = pick(eq[2], (v8i){0} + w, (v8i){0} + w + 1);
					off = pick(eq[1], (v8i){0} + 1, off);
					off = pick(eq[0], (v8i){0}, off);
					v8i pos = 2 * lane + (2 * r * w + 2 * c0) + off;
					store8(at + o, pos, k);
				}
			}
	for (int i = 0; i < 8; i++)
		if (nan[i]) return 0;
	return 1;
}

CLONES static int pool_forward(const float *x, float *y, int32_t *at, int planes, int h, int w, int train) {
	return train ? pool_forward_k(x, y, at, planes, h, w, 1) : pool_forward_k(x, y, at, planes, h, w, 0);
}
*/
import "C"

// Under cgo the direct convolutions and max-pooling run as C vectors (the
// Go loops of conv_plane.go, conv_lanes.go and layers.go say what they
// compute, and give the same bits).

func planeForward(planes, w, bias, y []float32, chans, batch, oh, ow, pw, outC, zr, vr, k int) {
	C.plane_forward((*C.float)(&planes[0]), (*C.float)(&w[0]), (*C.float)(&bias[0]), (*C.float)(&y[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(pw), C.int(outC), C.int(zr), C.int(vr), C.int(k))
}

// sampleInputGrad computes an input gradient as inputGradient does, 16
// samples a vector (input_grad), and reports false, having done nothing,
// when it cannot give the same bits: a filter that is not finite, or more
// than 8 input channels.
func sampleInputGrad(dy, w, dx, scratch []float32, outC, inC, batch, h, wd, oh, ow, off, k int) bool {
	if inC > 8 {
		return false
	}
	return C.input_grad((*C.float)(&dy[0]), (*C.float)(&w[0]), (*C.float)(&dx[0]), (*C.float)(&scratch[0]), C.int(outC), C.int(inC),
		C.int(batch), C.int(h), C.int(wd), C.int(oh), C.int(ow), C.int(off), C.int(k)) == 1
}

func planeWeightGrad(planes, dy, gw, gb, scratch []float32, chans, batch, oh, ow, pw, outC, k int) {
	C.plane_wgrad((*C.float)(&planes[0]), (*C.float)(&dy[0]), (*C.float)(&gw[0]), (*C.float)(&gb[0]), (*C.float)(&scratch[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(pw), C.int(outC), C.int(k))
}

func lanesForward(xp, w, bias, wt, y []float32, chans, batch, oh, ow, ph, pw, outC, k, cb int) {
	taps := chans * k * k
	for oc := 0; oc < outC; oc++ {
		for t := 0; t < taps; t++ {
			wt[t*outC+oc] = w[oc*taps+t]
		}
	}
	C.lanes_forward((*C.float)(&xp[0]), (*C.float)(&wt[0]), (*C.float)(&bias[0]), (*C.float)(&y[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(ph), C.int(pw), C.int(outC), C.int(k), C.int(cb))
}

// setNarrowKernels makes the C kernels block their sums for 16 vector
// registers (1) or for AVX-512's 32 (0), whatever the CPU, or as the CPU
// says (-1): tests check both blockings on any machine.
func setNarrowKernels(v int) { C.set_narrow(C.int(v)) }

func lanesWeightGrad(xp, dyt, gw, gb, scratch []float32, chans, batch, oh, ow, ph, pw, outC, k int) {
	C.lanes_wgrad((*C.float)(&xp[0]), (*C.float)(&dyt[0]), (*C.float)(&gw[0]), (*C.float)(&gb[0]), (*C.float)(&scratch[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(ph), C.int(pw), C.int(outC), C.int(k))
}

func poolForward(x, y []float32, at []int32, planes, h, w int, train bool) {
	tr := C.int(0)
	if train {
		tr = 1
	}
	if C.pool_forward((*C.float)(&x[0]), (*C.float)(&y[0]), (*C.int32_t)(&at[0]), C.int(planes), C.int(h), C.int(w), tr) == 0 {
		poolForwardGo(x, y, at, planes, h, w, train)
	}
}
