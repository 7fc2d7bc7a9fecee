//go:build cgo

package cpu

/*
#cgo CFLAGS: -O3 -std=c11 -Wno-psabi
#include <stdint.h>
#include <string.h>

// The convolutions' kernels (conv_kernels.h) and the matrix product's
// (gemm_kernels.h), compiled once per instruction set the CPU may have:
// on x86, AVX-512 (16 floats a vector) and AVX2 with FMA (8), the CPU's
// widest running (kernel_width) unless a test or UMP_KERNELS chose one
// (set_width); on arm64, NEON (4), which every arm64 CPU has. Each lane's
// arithmetic is IEEE single precision whatever the target:
// ISO C (-std=c11) keeps the convolutions' multiplies and adds apart in
// GCC (which contracts them into FMAs only in GNU C), the pragma below in
// clang (which contracts by default; cgo refuses -ffp-contract), and the
// product's fused multiply-adds are explicit intrinsics, so every width
// (and the Go loops) gives the same bits. Elsewhere (other architectures,
// and clang on x86, which has no target pragmas) there are no C kernels:
// the Go loops run.
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
#define INLINE static inline __attribute__((always_inline))
enum { group = 8 }; // the weight gradients' samples a block

#if defined(__x86_64__) && defined(__GNUC__)
#define X86_WIDTHS 1
#include <immintrin.h>
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
#define vec v16
#define VL 16
#define REGS 32
#define NAME(f) f##_16
#define FMA(a, b, c) ((vec)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define BROADCAST(x) ((vec)_mm512_set1_ps(x))
#include "gemm_kernels.h"
#include "conv_kernels.h"
#undef FMA
#undef BROADCAST
#ifdef __clang__
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#define vec v8
#define VL 8
#define REGS 16
#define NAME(f) f##_8
#define FMA(a, b, c) ((vec)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define BROADCAST(x) ((vec)_mm256_set1_ps(x))
#include "gemm_kernels.h"
#include "conv_kernels.h"
#undef FMA
#undef BROADCAST
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#elif defined(__aarch64__)
#define ARM64_WIDTH 1
#include <arm_neon.h>
#define CLONES
typedef float v4 __attribute__((vector_size(16)));
#define vec v4
#define VL 4
#define REGS 32
#define NAME(f) f##_4
#define FMA(a, b, c) ((vec)vfmaq_f32((float32x4_t)(c), (float32x4_t)(a), (float32x4_t)(b)))
#define BROADCAST(x) ((vec)vdupq_n_f32(x))
#include "gemm_kernels.h"
#include "conv_kernels.h"
#undef FMA
#undef BROADCAST
#else
#define CLONES
#endif

// cpu_runs: whether the CPU has the instructions of a width's kernels;
// kernel_width: the width in use (0: none, the Go loops), set_width sets
// it (to a width the CPU runs).
static int cpu_runs(int width) {
#ifdef X86_WIDTHS
	__builtin_cpu_init();
	if (width == 16) return __builtin_cpu_supports("avx512f");
	if (width == 8) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#ifdef ARM64_WIDTH
	if (width == 4) return 1;
#endif
	return 0;
}
static int width;
static int kernel_width(void) { return width; }
static void set_width(int w) { width = w; }

#ifdef X86_WIDTHS
#define DISPATCH(f, ...) switch (kernel_width()) { \
	case 16: f##_16(__VA_ARGS__); break; \
	default: f##_8(__VA_ARGS__); }
#elif defined(ARM64_WIDTH)
#define DISPATCH(f, ...) f##_4(__VA_ARGS__);
#else
#define DISPATCH(f, ...) (void)0;
#endif

static void gemm(int ta, int tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
	int beta, float *c, int ldc) {
	DISPATCH(gemm, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

static void plane_forward(const float *planes, const float *w, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int pw, int outc, int zr, int vr, int k) {
	DISPATCH(plane_forward, planes, w, bias, y, chans, batch, oh, ow, pw, outc, zr, vr, k)
}

static void plane_wgrad(const float *planes, const float *dy, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int pw, int outc, int k) {
	DISPATCH(plane_wgrad, planes, dy, gw, gb, scratch, chans, batch, oh, ow, pw, outc, k)
}

// input_grad returns 0, having done nothing, where a filter is not finite
// (conv_kernels.h's igrad_k says why), for the caller to take
// plane_forward's path.
static int input_grad(const float *dy, const float *w, float *dx, float *scratch, int outc, int inc, int batch,
	int h, int wd, int oh, int ow, int off, int k) {
	uint32_t bits;
	for (int i = 0; i < outc * inc * k * k; i++) {
		memcpy(&bits, w + i, sizeof bits);
		if ((bits & 0x7f800000) == 0x7f800000) return 0;
	}
	DISPATCH(input_grad, dy, w, dx, scratch, outc, inc, batch, h, wd, oh, ow, off, k)
	return 1;
}

static void lanes_forward(const float *xp, const float *wt, const float *bias, float *y,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k, int cb) {
	DISPATCH(lanes_forward, xp, wt, bias, y, chans, batch, oh, ow, ph, pw, outc, k, cb)
}

static void lanes_wgrad(const float *xp, const float *dyt, float *gw, float *gb, float *scratch,
	int chans, int batch, int oh, int ow, int ph, int pw, int outc, int k) {
	DISPATCH(lanes_wgrad, xp, dyt, gw, gb, scratch, chans, batch, oh, ow, ph, pw, outc, k)
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

// relu_forward is reluKernel's Go loop (y = max(x, 0), +0 for -0) for
// arrays without NaNs; it returns 0, having seen a NaN, for the Go loop
// to give Go's NaN.
CLONES static int relu_forward(const float *x, float *y, size_t n) {
	int nan = 0;
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		nan |= v != v;
		y[i] = v > 0 ? v : 0;
	}
	return !nan;
}
*/
import "C"

// Under cgo, on x86 with AVX2 and FMA or AVX-512 and on arm64, the matrix products, the
// direct convolutions, max-pooling and ReLU run as C; on the "go" path
// (UMP_KERNELS=go, other CPUs) as the Go loops of gemm.go, conv_plane.go,
// conv_lanes.go and layers.go, which say what they compute and give the
// same bits.

// cPaths are the C kernels' paths and their vector widths.
var cPaths = map[string]int{"avx512": 16, "avx2": 8, "neon": 4}

// runs reports whether this CPU runs a path's kernels.
func runs(path string) bool {
	w, ok := cPaths[path]
	return path == "go" || ok && C.cpu_runs(C.int(w)) != 0
}

// use makes the kernels of a path (one this CPU runs) compute.
func use(path string) {
	kernels = path
	C.set_width(C.int(cPaths[path]))
}

func cKernels() bool { return kernels != "go" }

func source(path string) string {
	if path == "go" {
		return "Go loops"
	}
	return "C under cgo"
}

func gemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta bool, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || !cKernels() {
		gemmGo(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.gemm(
		cbool(ta),
		cbool(tb),
		C.int(m),
		C.int(n),
		C.int(k),
		(*C.float)(&a[0]),
		C.int(lda),
		(*C.float)(&b[0]),
		C.int(ldb),
		cbool(beta),
		(*C.float)(&c[0]),
		C.int(ldc),
	)
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func planeForward(planes, w, bias, y []float32, chans, batch, oh, ow, pw, outC, zr, vr, k int) {
	if !cKernels() {
		planeForwardGo(planes, w, bias, y, chans, batch, oh, ow, pw, outC, zr, vr, k)
		return
	}
	C.plane_forward((*C.float)(&planes[0]), (*C.float)(&w[0]), (*C.float)(&bias[0]), (*C.float)(&y[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(pw), C.int(outC), C.int(zr), C.int(vr), C.int(k))
}

// sampleInputGrad computes an input gradient as inputGradient does, 16
// samples a vector (input_grad), and reports false, having done nothing,
// when it cannot give the same bits: a filter that is not finite, or more
// than 8 input channels (or the go path, where inputGradient runs).
func sampleInputGrad(dy, w, dx, scratch []float32, outC, inC, batch, h, wd, oh, ow, off, k int) bool {
	if inC > 8 || !cKernels() {
		return false
	}
	return C.input_grad(
		(*C.float)(&dy[0]),
		(*C.float)(&w[0]),
		(*C.float)(&dx[0]),
		(*C.float)(&scratch[0]),
		C.int(outC),
		C.int(inC),
		C.int(batch),
		C.int(h),
		C.int(wd),
		C.int(oh),
		C.int(ow),
		C.int(off),
		C.int(k),
	) == 1
}

func planeWeightGrad(planes, dy, gw, gb, scratch []float32, chans, batch, oh, ow, pw, outC, k int) {
	if !cKernels() {
		planeWeightGradGo(planes, dy, gw, gb, chans, batch, oh, ow, pw, outC, k)
		return
	}
	C.plane_wgrad(
		(*C.float)(&planes[0]),
		(*C.float)(&dy[0]),
		(*C.float)(&gw[0]),
		(*C.float)(&gb[0]),
		(*C.float)(&scratch[0]),
		C.int(chans),
		C.int(batch),
		C.int(oh),
		C.int(ow),
		C.int(pw),
		C.int(outC),
		C.int(k),
	)
}

func lanesForward(xp, w, bias, wt, y []float32, chans, batch, oh, ow, ph, pw, outC, k, cb int) {
	if !cKernels() {
		planeForwardGo(xp, w, bias, y, chans, batch, oh, ow, pw, outC, 0, ph, k)
		return
	}
	channelsLast(w, wt, outC, chans*k*k)
	C.lanes_forward((*C.float)(&xp[0]), (*C.float)(&wt[0]), (*C.float)(&bias[0]), (*C.float)(&y[0]),
		C.int(chans), C.int(batch), C.int(oh), C.int(ow), C.int(ph), C.int(pw), C.int(outC), C.int(k), C.int(cb))
}

func lanesWeightGrad(xp, dyt, gw, gb, scratch []float32, chans, batch, oh, ow, ph, pw, outC, k int) {
	if !cKernels() {
		lanesWeightGradGo(xp, dyt, gw, gb, scratch, chans, batch, oh, ow, ph, pw, outC, k)
		return
	}
	C.lanes_wgrad(
		(*C.float)(&xp[0]),
		(*C.float)(&dyt[0]),
		(*C.float)(&gw[0]),
		(*C.float)(&gb[0]),
		(*C.float)(&scratch[0]),
		C.int(chans),
		C.int(batch),
		C.int(oh),
		C.int(ow),
		C.int(ph),
		C.int(pw),
		C.int(outC),
		C.int(k),
	)
}

func poolForward(x, y []float32, at []int32, planes, h, w int, train bool) {
	tr := C.int(0)
	if train {
		tr = 1
	}
	if !cKernels() ||
		C.pool_forward(
			(*C.float)(&x[0]),
			(*C.float)(&y[0]),
			(*C.int32_t)(&at[0]),
			C.int(planes),
			C.int(h),
			C.int(w),
			tr,
		) == 0 {
		poolForwardGo(x, y, at, planes, h, w, train)
	}
}

func reluForward(x, y []float32) {
	if !cKernels() || len(x) > 0 && C.relu_forward((*C.float)(&x[0]), (*C.float)(&y[0]), C.size_t(len(x))) == 0 {
		reluForwardGo(x, y)
	}
}
