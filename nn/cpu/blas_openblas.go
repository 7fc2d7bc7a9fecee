//go:build cgo

package cpu

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
	const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*set_threads_fn)(int);
typedef char *(*config_fn)(void);

static sgemm_fn sgemm_ptr;

// load opens OpenBLAS, limits it to one thread and returns its
// configuration string, or NULL when it is not installed.
static const char *load(void) {
	const char *names[] = {"libopenblas.so.0", "libopenblas.so", NULL};
	for (int i = 0; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) continue;
		sgemm_ptr = (sgemm_fn)dlsym(h, "cblas_sgemm");
		set_threads_fn st = (set_threads_fn)dlsym(h, "openblas_set_num_threads");
		config_fn cfg = (config_fn)dlsym(h, "openblas_get_config");
		if (!sgemm_ptr || !st) { sgemm_ptr = NULL; continue; }
		st(1);
		return cfg ? cfg() : "OpenBLAS";
	}
	return NULL;
}

static void sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
	const float *b, int ldb, float beta, float *c, int ldc) {
	sgemm_ptr(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
*/
import "C"

import "os"

// backend is OpenBLAS (cblas_sgemm, one BLAS thread: the engine runs one
// worker per core) when the shared library loads, unless UMP_BLAS=go.
var backend = func() blasBackend {
	if os.Getenv("UMP_BLAS") == "go" {
		return blasBackend{name: "gonum (pure Go, UMP_BLAS=go)"}
	}
	cfg := C.load()
	if cfg == nil {
		return blasBackend{name: "gonum (pure Go; OpenBLAS not found)"}
	}
	return blasBackend{name: "openblas (" + C.GoString(cfg) + ")", sgemm: func(transA, transB bool, m, n, k int, alpha float32,
		a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		C.sgemm(cbool(transA), cbool(transB), C.int(m), C.int(n), C.int(k), C.float(alpha),
			(*C.float)(&a[0]), C.int(lda), (*C.float)(&b[0]), C.int(ldb), C.float(beta), (*C.float)(&c[0]), C.int(ldc))
	}}
}()

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
