// The matrix product's C kernel (kernels_cgo.go), written once for vectors
// of VL floats and included there once per instruction set: AVX-512 (VL
// 16) and AVX2 with FMA (VL 8). Before the inclusion: vec, VL, NAME(f),
// FMA(a, b, c), the vector fused multiply-add a*b + c, and BROADCAST(x), x
// in every lane (as it is: (vec){0} + x would turn -0 into +0).
//
// The order of operations is fixed: C[i][j] starts at 0 (or at C[i][j]
// with beta) and adds A(i, l) * B(l, j) for l = 0, 1, ..., k-1, each with
// one fused multiply-add. Each vector lane is one j, so the width, the
// tiles (MR rows of NV vectors) and the blocks of k (KC) only arrange the
// work: gemmGo (gemm.go) computes the same bits one element at a time.

enum { NAME(mr) = VL == 16 ? 8 : 6, NAME(nv) = 2, NAME(kc) = 256 };
#define MR NAME(mr)
#define NV NAME(nv)
#define NRW (NV * VL)
#define KC NAME(kc)

// gemm_pack copies B's rows l0..l0+kc-1, columns j0..j0+nc-1 into p, row
// l at p + l*NRW, the columns past nc 0.
INLINE void NAME(gemm_pack)(int tb, const float *b, int ldb, int l0, int kc, int j0, int nc, float *p) {
	if (!tb) {
		for (int l = 0; l < kc; l++) {
			const float *src = b + (size_t)(l0 + l) * ldb + j0;
			for (int jj = 0; jj < nc; jj++) p[l * NRW + jj] = src[jj];
		}
	} else {
		for (int jj = 0; jj < nc; jj++) {
			const float *src = b + (size_t)(j0 + jj) * ldb + l0;
			for (int l = 0; l < kc; l++) p[l * NRW + jj] = src[l];
		}
	}
	for (int l = 0; l < kc; l++)
		for (int jj = nc; jj < NRW; jj++) p[l * NRW + jj] = 0;
}

// gemm_tile adds the products of k-block l0..l0+kc-1 to the tile of C at
// rows i0..i0+mr-1 (NRW columns at c, a row every ldc), starting from 0
// where zero.
INLINE void NAME(gemm_tile)(const int mr, const int ta, const float *a, int lda, int i0, int l0, int kc,
	const float *p, float *c, int ldc, int zero) {
	vec acc[MR][NV];
	for (int r = 0; r < mr; r++)
		for (int v = 0; v < NV; v++) {
			if (zero) acc[r][v] = (vec){0};
			else memcpy(&acc[r][v], c + (size_t)r * ldc + v * VL, sizeof(vec));
		}
	for (int l = 0; l < kc; l++) {
		vec bv[NV];
		for (int v = 0; v < NV; v++) memcpy(&bv[v], p + l * NRW + v * VL, sizeof(vec));
		for (int r = 0; r < mr; r++) {
			float x = ta ? a[(size_t)(l0 + l) * lda + i0 + r] : a[(size_t)(i0 + r) * lda + l0 + l];
			vec xv = BROADCAST(x);
			for (int v = 0; v < NV; v++) acc[r][v] = FMA(xv, bv[v], acc[r][v]);
		}
	}
	for (int r = 0; r < mr; r++)
		for (int v = 0; v < NV; v++) memcpy(c + (size_t)r * ldc + v * VL, &acc[r][v], sizeof(vec));
}

INLINE void NAME(gemm_rows)(const int ta, int m, const float *a, int lda, int l0, int kc, const float *p,
	float *c, int ldc, int j0, int nc, int zero) {
	float tmp[MR * NRW] __attribute__((aligned(64)));
	for (int i0 = 0; i0 < m; i0 += MR) {
		int mr = m - i0 < MR ? m - i0 : MR;
		float *ct = c + (size_t)i0 * ldc + j0;
		int ldt = ldc;
		if (nc < NRW) { // a partial panel: through tmp
			for (int r = 0; r < mr; r++)
				for (int jj = 0; jj < NRW; jj++) tmp[r * NRW + jj] = jj < nc && !zero ? ct[(size_t)r * ldc + jj] : 0;
			ct = tmp;
			ldt = NRW;
		}
		switch (mr) {
#define TILE(R) case R: NAME(gemm_tile)(R, ta, a, lda, i0, l0, kc, p, ct, ldt, zero); break;
		TILE(1) TILE(2) TILE(3) TILE(4) TILE(5) TILE(6)
#if VL == 16
		TILE(7) TILE(8)
#endif
#undef TILE
		}
		if (nc < NRW)
			for (int r = 0; r < mr; r++)
				for (int jj = 0; jj < nc; jj++) c[(size_t)(i0 + r) * ldc + j0 + jj] = tmp[r * NRW + jj];
	}
}

// gemm: C = (beta ? C : 0) + op(A) op(B) for row-major op(A) m x k (A
// stored k x m when ta), op(B) k x n (B stored n x k when tb), C m x n.
static void NAME(gemm)(int ta, int tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
	int beta, float *c, int ldc) {
	float p[KC * NRW] __attribute__((aligned(64)));
	for (int j0 = 0; j0 < n; j0 += NRW) {
		int nc = n - j0 < NRW ? n - j0 : NRW;
		for (int l0 = 0; l0 < k; l0 += KC) {
			int kc = k - l0 < KC ? k - l0 : KC, zero = l0 == 0 && !beta;
			NAME(gemm_pack)(tb, b, ldb, l0, kc, j0, nc, p);
			if (ta) NAME(gemm_rows)(1, m, a, lda, l0, kc, p, c, ldc, j0, nc, zero);
			else NAME(gemm_rows)(0, m, a, lda, l0, kc, p, c, ldc, j0, nc, zero);
		}
	}
}

#undef MR
#undef NV
#undef NRW
#undef KC
