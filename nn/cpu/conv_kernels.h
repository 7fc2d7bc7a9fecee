// The direct convolutions' C kernels (kernels_cgo.go), written once for
// vectors of VL floats, and included there once per vector width: 16
// (AVX-512) and 8 (AVX2), each compiled for its instruction set, so that
// every vector is one register. Before the
// inclusion: vec (a vector of VL floats), VL, REGS (the target's vector
// registers: 32 or 16) and NAME(f), the function names' suffix; the
// file undefines them at its end, for the next width.
//
// The width only blocks the work: each output and each running sum is
// computed by the same multiplies and adds in the same order at any
// width (and by the Go loops of conv_plane.go and conv_lanes.go), so
// every width gives the same bits.

// vecu is a vec in memory that Go allocated (aligned to 4 bytes only).
typedef vec NAME(vecu) __attribute__((aligned(4)));
#define vecu NAME(vecu)

INLINE vec NAME(load)(const float *p) { vec v; memcpy(&v, p, sizeof v); return v; }
#define load NAME(load)

// loadn reads n < VL floats, the other lanes 0: a whole vector with its
// last lanes cleared where end (the array's) allows, else lane by lane (a
// memcpy of n floats would be a call).
typedef int NAME(veci) __attribute__((vector_size(VL * 4)));
INLINE vec NAME(loadn)(const float *p, int n, const float *end) {
	if (p + VL <= end) {
		NAME(veci) lane;
		for (int l = 0; l < VL; l++) lane[l] = l;
		return (vec)((NAME(veci))load(p) & (lane < n));
	}
	vec v = {0};
	for (int l = 0; l < VL; l++) v[l] = l < n ? p[l] : 0;
	return v;
}
#define loadn NAME(loadn)

// in_register(x): x stays in a register where it is used. On AVX2 GCC
// otherwise reads it from memory again for every multiply, and the plane
// weight gradient's reads of shifted columns often straddle cache lines.
// (The AVX-512 build keeps GCC's choice: unmeasured there.)
#if REGS == 16 && defined(__x86_64__) && defined(__GNUC__)
#define in_register(x) __asm__("" : "+x"(x))
#else
#define in_register(x) (void)0
#endif

// no_unroll: the loop after it stays a loop where there are 16 registers:
// unrolled, GCC reads every iteration's inputs first and spills the sums.
// (The AVX-512 build unrolls: unmeasured there.)
#if REGS == 16 && defined(__GNUC__) && !defined(__clang__)
#define no_unroll _Pragma("GCC unroll 1")
#else
#define no_unroll
#endif

// wfloat: a weight as the forward's multiplies take it from memory: a
// float where they broadcast it (AVX-512), else a vector of its copies
// (AVX2's broadcasts are separate instructions, one per multiply).
#if VL == 16
typedef float NAME(wfloat);
#else
typedef vec NAME(wfloat);
#endif
#define wfloat NAME(wfloat)

// forward: ob output channels at a time (6 for 6 channels, else 8), VL
// columns of a row in each of their accumulators; planes are chans x batch
// x ph x pw, of which only rows zr..zr+vr-1 may hold non-zeros (the taps
// of the others are skipped).
INLINE void NAME(forward_k)(const float *planes, const float *w, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int pw, int outc, int zr, int vr, const int k, const int ob) {
	int ph = oh + k - 1, taps = chans * k * k;
	wfloat wb[ob * taps];  // the block's filters, tap-major
	float bb[ob];
	for (int o0 = 0; o0 < outc; o0 += ob) {
		int no = outc - o0 < ob ? outc - o0 : ob;
		for (int o = 0; o < ob; o++) {
			bb[o] = o < no ? bias[o0 + o] : 0;
			for (int t = 0; t < taps; t++) wb[t * ob + o] = (wfloat){0} + (o < no ? w[(o0 + o) * taps + t] : 0);
		}
		for (int s = 0; s < batch; s++)
			for (int r = 0; r < oh; r++) {
				int klo = zr - r > 0 ? zr - r : 0, khi = zr + vr - r < k ? zr + vr - r : k;
				for (int c0 = 0; c0 < ow; c0 += VL) {
					vec acc[8];
					for (int o = 0; o < ob; o++) acc[o] = (vec){0} + bb[o];
					for (int ic = 0; ic < chans; ic++) {
						const float *plane = planes + (size_t)(ic * batch + s) * ph * pw;
						for (int ki = klo; ki < khi; ki++)
							for (int kj = 0; kj < k; kj++) {
								vec x = load(plane + (r + ki) * pw + c0 + kj);
								const wfloat *wt = wb + ((ic * k + ki) * k + kj) * ob;
								for (int o = 0; o < ob; o++) acc[o] += wt[o] * x;
							}
					}
					// the row's last vector lane by lane (a memcpy of n floats is a call)
					int n = ow - c0 < VL ? ow - c0 : VL;
					for (int o = 0; o < no; o++) {
						float *yr = y + (((size_t)(o0 + o) * batch + s) * oh + r) * ow + c0;
						if (n == VL) memcpy(yr, &acc[o], sizeof(vec));
						else for (int l = 0; l < n; l++) yr[l] = acc[o][l];
					}
				}
			}
	}
}

static void NAME(plane_forward)(const float *planes, const float *w, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int pw, int outc, int zr, int vr, int k) {
#define FWD(K, OB) NAME(forward_k)(planes, w, bias, y, chans, batch, oh, ow, pw, outc, zr, vr, K, OB)
	if (outc == 6) {
		if (k == 5) FWD(5, 6); else if (k == 3) FWD(3, 6); else FWD(k, 6);
	} else {
		if (k == 5) FWD(5, 8); else if (k == 3) FWD(3, 8); else FWD(k, 8);
	}
#undef FWD
}

// weight and bias gradients: 16 running sums per filter tap and per output
// channel, sum l over the columns c with c mod 16 = l, as 16/VL vectors
// (vector v: lanes v*VL..v*VL+VL-1). Samples 8 at a time (their planes and
// dy stay in cache); for each input channel, filter row ki and vector v,
// ob output channels at a time, the k taps of the row (and, in the first,
// the bias) in registers over the group's samples, rows and columns, kept
// in sums between groups. planes (the input channel's) are batch x ph x pw.
#define per16 (16 / VL)

INLINE void NAME(grad_block)(const float *planes, const float *dy, vec *sums, vec *bsums, const int with_bias,
	int s0, int s1, int batch, int oh, int ow, int pw, int o0, int ki, int v, const int k, const int ob) {
	int ph = oh + k - 1;
	const float *dyend = dy + (size_t)(o0 + ob) * batch * oh * ow;  // the end of the block's channels of dy
	vec acc[4][7], b[4];
	for (int o = 0; o < ob; o++) {
		b[o] = bsums[o];
		for (int kj = 0; kj < k; kj++) acc[o][kj] = sums[o * k + kj];
	}
	for (int s = s0; s < s1; s++) {
		const float *plane = planes + (size_t)s * ph * pw;
		for (int r = 0; r < oh; r++)
			for (int c0 = v * VL; c0 < ow; c0 += 16) {
				int n = ow - c0 < VL ? ow - c0 : VL;
				vec d[4];
				for (int o = 0; o < ob; o++) {
					const float *row = dy + (((size_t)(o0 + o) * batch + s) * oh + r) * ow + c0;
					d[o] = n == VL ? load(row) : loadn(row, n, dyend);
					if (with_bias) b[o] += d[o];
				}
				for (int kj = 0; kj < k; kj++) {
					vec x = load(plane + (r + ki) * pw + c0 + kj);
					in_register(x);
					for (int o = 0; o < ob; o++) acc[o][kj] += d[o] * x;
				}
			}
	}
	for (int o = 0; o < ob; o++) {
		bsums[o] = b[o];
		for (int kj = 0; kj < k; kj++) sums[o * k + kj] = acc[o][kj];
	}
}

// sums: (outc*chans*k*k + outc) x 16 floats: the taps' (as gw), then the
// biases'. ob: 4 output channels a block with 32 registers, else 2.
INLINE void NAME(wgrad_k)(const float *planes, const float *dy, float *gw, float *gb, float *sums,
	int chans, int batch, int oh, int ow, int pw, int outc, const int k) {
	int ph = oh + k - 1, taps = chans * k * k;
	enum { ob = REGS == 32 ? 4 : 2 };
	vecu *sv = (vecu *)sums, *bsv = sv + (size_t)outc * taps * per16;
	memset(sums, 0, (size_t)outc * (taps + 1) * 16 * sizeof(float));
	for (int s0 = 0; s0 < batch; s0 += group) {
		int s1 = batch - s0 < group ? batch : s0 + group;
		for (int ic = 0; ic < chans; ic++)
			for (int ki = 0; ki < k; ki++)
				for (int o0 = 0; o0 < outc; o0 += ob)
					for (int v = 0; v < per16; v++) {
						// the block's sums of row ki: channel o's k taps from (o0+o)*taps + (ic*k+ki)*k
						const float *ch = planes + (size_t)ic * batch * ph * pw;
						int with_bias = ic == 0 && ki == 0;
						vec block[4 * 7], bblock[4];
						int nb = outc - o0 < ob ? outc - o0 : ob;
						for (int o = 0; o < nb; o++) {
							bblock[o] = bsv[(o0 + o) * per16 + v];
							for (int kj = 0; kj < k; kj++)
								block[o * k + kj] = sv[((size_t)(o0 + o) * taps + (ic * k + ki) * k + kj) * per16 + v];
						}
#define BLOCK(OB) if (with_bias) NAME(grad_block)(ch, dy, block, bblock, 1, s0, s1, batch, oh, ow, pw, o0, ki, v, k, OB); \
	else NAME(grad_block)(ch, dy, block, bblock, 0, s0, s1, batch, oh, ow, pw, o0, ki, v, k, OB)
						switch (nb) {
						case 4: BLOCK(4); break;
						case 3: BLOCK(3); break;
						case 2: BLOCK(2); break;
						default: BLOCK(1);
						}
#undef BLOCK
						for (int o = 0; o < nb; o++) {
							bsv[(o0 + o) * per16 + v] = bblock[o];
							for (int kj = 0; kj < k; kj++)
								sv[((size_t)(o0 + o) * taps + (ic * k + ki) * k + kj) * per16 + v] = block[o * k + kj];
						}
					}
	}
	// each tap's and bias's 16 sums added from l = 0 to 15
	for (int i = 0; i < outc * (taps + 1); i++) {
		const float *l16 = sums + (size_t)i * 16;
		float t = l16[0];
		for (int l = 1; l < 16; l++) t += l16[l];
		if (i < outc * taps) gw[i] = t; else gb[i - outc * taps] = t;
	}
}

static void NAME(plane_wgrad)(const float *planes, const float *dy, float *gw, float *gb, float *sums,
	int chans, int batch, int oh, int ow, int pw, int outc, int k) {
	switch (k) {
	case 3: NAME(wgrad_k)(planes, dy, gw, gb, sums, chans, batch, oh, ow, pw, outc, 3); break;
	case 5: NAME(wgrad_k)(planes, dy, gw, gb, sums, chans, batch, oh, ow, pw, outc, 5); break;
	default: NAME(wgrad_k)(planes, dy, gw, gb, sums, chans, batch, oh, ow, pw, outc, k);
	}
}

// input gradient, VL samples a vector: dx (inc x batch x h x w) is the
// correlation of dy (outc x batch x oh x ow), zero-padded by off on every
// side, with the filters w (outc x inc x k x k) flipped: plane_forward's
// sum over the padded planes (inputGradient, conv_plane.go), in its order,
// less the products of padding. Each of those is +0 or -0 when every
// filter is finite (input_grad checks), and adding either to a sum that
// starts at +0 leaves the sum as it is (such a sum is never -0), so the
// bits are plane_forward's. dyt (batch/VL rounded up x outc x oh x ow
// vectors) is scratch.
INLINE void NAME(igrad_k)(const float *dy, const float *w, float *dx, float *scratch, int outc, int inc, int batch,
	int h, int wd, int oh, int ow, int off, const int k, const int ni) {
	int kk = k * k, nsv = (batch + VL - 1) / VL;
	vecu *dyt = (vecu *)scratch;
	float wt[outc * kk * ni];  // [d][ki][kj][ic], flipped
	for (int d = 0; d < outc; d++)
		for (int t = 0; t < kk; t++)
			for (int ic = 0; ic < ni; ic++) wt[(d * kk + t) * ni + ic] = w[(d * inc + ic) * kk + kk - 1 - t];
	for (int sv = 0; sv < nsv; sv++) {
		int nl = batch - sv * VL < VL ? batch - sv * VL : VL;
		vecu *ds = dyt + (size_t)sv * outc * oh * ow;
		for (int d = 0; d < outc; d++)
			for (int i = 0; i < oh * ow; i++) {
				vec v = {0};
				for (int l = 0; l < nl; l++) v[l] = dy[((size_t)d * batch + sv * VL + l) * oh * ow + i];
				ds[d * oh * ow + i] = v;
			}
		for (int r = 0; r < h; r++) {
			int klo = off - r > 0 ? off - r : 0, khi = off + oh - r < k ? off + oh - r : k;
			for (int c = 0; c < wd;) {
				int jlo = off - c > 0 ? off - c : 0, jhi = off + ow - c < k ? off + ow - c : k;
				// two columns at once where the taps of both fall on dy (k
				// of them, unrolled), else one
				int np = jlo == 0 && c + 1 < wd && off + ow - (c + 1) >= k ? 2 : 1;
				vec acc[2][8];
				for (int j = 0; j < 2; j++)
					for (int o = 0; o < ni; o++) acc[j][o] = (vec){0};
				if (np == 2)
					for (int d = 0; d < outc; d++)
						for (int ki = klo; ki < khi; ki++) {
							const vecu *xr = ds + ((size_t)d * oh + r + ki - off) * ow + c - off;
							const float *wr = wt + (d * kk + ki * k) * ni;
							no_unroll
							for (int kj = 0; kj < k; kj++) {
								vec x0 = xr[kj], x1 = xr[kj + 1];
								for (int o = 0; o < ni; o++) {
									acc[0][o] += wr[kj * ni + o] * x0;
									acc[1][o] += wr[kj * ni + o] * x1;
								}
							}
						}
				else
					for (int d = 0; d < outc; d++)
						for (int ki = klo; ki < khi; ki++) {
							const vecu *xr = ds + ((size_t)d * oh + r + ki - off) * ow + c - off;
							const float *wr = wt + (d * kk + ki * k) * ni;
							no_unroll
							for (int kj = jlo; kj < jhi; kj++) {
								vec x = xr[kj];
								for (int o = 0; o < ni; o++) acc[0][o] += wr[kj * ni + o] * x;
							}
						}
				for (int j = 0; j < np; j++)
					for (int o = 0; o < ni; o++)
						for (int l = 0; l < nl; l++) dx[(((size_t)o * batch + sv * VL + l) * h + r) * wd + c + j] = acc[j][o][l];
				c += np;
			}
		}
	}
}

static void NAME(input_grad)(const float *dy, const float *w, float *dx, float *scratch, int outc, int inc, int batch,
	int h, int wd, int oh, int ow, int off, int k) {
	if (k == 5 && inc == 6) NAME(igrad_k)(dy, w, dx, scratch, outc, inc, batch, h, wd, oh, ow, off, 5, 6);
	else NAME(igrad_k)(dy, w, dx, scratch, outc, inc, batch, h, wd, oh, ow, off, k, inc);
}

// ---- convolutions with 16k output channels (conv_lanes.go) ----
// xp: padded input, C x batch x ph x pw; wt: filters as [C][k][k][outc];
// y: outc x batch x oh x ow. A vector holds VL output channels.

// lanes_fwd_block: output row r of sample s, columns c0..c0+cb-1, channels
// ob*VL..ob*VL+VL-1 (columns past ow are computed from padding, not stored).
INLINE void NAME(lanes_fwd_block)(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int s, int r, int c0, int ob,
	const int k, const int cb) {
	vec acc[12];
	vec b = load(bias + ob * VL);
	for (int c = 0; c < cb; c++) acc[c] = b;
	for (int ic = 0; ic < chans; ic++)
		for (int ki = 0; ki < k; ki++) {
			const float *xr = xp + ((size_t)(ic * batch + s) * ph + r + ki) * pw + c0;
			const float *wr = wt + (size_t)((ic * k + ki) * k) * outc + ob * VL;
			for (int kj = 0; kj < k; kj++) {
				vec w = load(wr + kj * outc);
				for (int c = 0; c < cb; c++) acc[c] += w * xr[c + kj];
			}
		}
	int n = ow - c0 < cb ? ow - c0 : cb;
	for (int o = 0; o < VL; o++) {
		float *yr = y + (((size_t)(ob * VL + o) * batch + s) * oh + r) * ow + c0;
		for (int c = 0; c < n; c++) yr[c] = acc[c][o];
	}
}

INLINE void NAME(lanes_fwd_k)(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, const int k, const int cb) {
	for (int s = 0; s < batch; s++)
		for (int r = 0; r < oh; r++)
			for (int ob = 0; ob < outc / VL; ob++)
				for (int c0 = 0; c0 < ow; c0 += cb)
					NAME(lanes_fwd_block)(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, s, r, c0, ob, k, cb);
}

static void NAME(lanes_forward)(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k, int cb) {
	if (k == 5 && cb == 10) NAME(lanes_fwd_k)(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 5, 10);
	else if (k == 5) NAME(lanes_fwd_k)(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 5, 8);
	else if (k == 3) NAME(lanes_fwd_k)(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, 3, 8);
	else NAME(lanes_fwd_k)(xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, k, 8);
}

// lanes_wgrad: dyt is dy as [batch][oh][ow][outc]; sums (outc/VL x C x
// k*k vectors, then outc/VL for the bias) carry each filter tap's sum over
// groups of 8 samples, `rows` rows of k taps in registers at a time within
// a group (all k rows with 32 registers, else one: each tap's sum runs over
// the same samples, rows and columns in the same order either way).
INLINE void NAME(lanes_wgrad_k)(const float *xp, const float *dyt, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, const int k, const int rows) {
	int nob = outc / VL, kk = k * k;
	vecu *sums = (vecu *)scratch, *bsums = sums + (size_t)nob * chans * kk;
	for (int i = 0; i < nob * chans * kk; i++) sums[i] = (vec){0};
	for (int ob = 0; ob < nob; ob++) bsums[ob] = (vec){0};
	for (int s0 = 0; s0 < batch; s0 += group) {
		int s1 = batch - s0 < group ? batch : s0 + group;
		for (int ob = 0; ob < nob; ob++)
			for (int ic = 0; ic < chans; ic++)
				for (int k0 = 0; k0 < k; k0 += rows) {
					vec acc[49], b = bsums[ob];
					vecu *sum = sums + (size_t)(ob * chans + ic) * kk + k0 * k;
					for (int t = 0; t < rows * k; t++) acc[t] = sum[t];
					for (int s = s0; s < s1; s++)
						for (int r = 0; r < oh; r++)
							for (int c = 0; c < ow; c++) {
								vec d = load(dyt + ((size_t)(s * oh + r) * ow + c) * outc + ob * VL);
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
		for (int o = 0; o < VL; o++) gb[ob * VL + o] = bsums[ob][o];
		for (int ic = 0; ic < chans; ic++)
			for (int t = 0; t < kk; t++)
				for (int o = 0; o < VL; o++)
					gw[((size_t)(ob * VL + o) * chans + ic) * kk + t] = sums[(size_t)(ob * chans + ic) * kk + t][o];
	}
}

static void NAME(lanes_wgrad)(const float *xp, const float *dyt, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k) {
	const int all = REGS == 32;
#define WGRAD(K, ROWS) NAME(lanes_wgrad_k)(xp, dyt, gw, gb, scratch, chans, batch, oh, ow, ph, pw, outc, K, ROWS)
	if (k == 5) { if (all) WGRAD(5, 5); else WGRAD(5, 1); }
	else if (k == 3) { if (all) WGRAD(3, 3); else WGRAD(3, 1); }
	else WGRAD(k, all ? k : 1);
#undef WGRAD
}

#undef vecu
#undef wfloat
#undef in_register
#undef no_unroll
#undef load
#undef loadn
#undef per16
#undef vec
#undef VL
#undef REGS
#undef NAME
