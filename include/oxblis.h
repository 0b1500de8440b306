/*
 * oxblis.h: the C interface of oxblis (liboxblis.so / liboxblis.a), the reference BLAS and
 * CBLAS gemm entry points. Semantics are the reference BLAS's: bad arguments are reported
 * through xerbla_ / cblas_xerbla (a program's own definition wins) and nothing is computed.
 * Threads: the global defaults (BLIS_NUM_THREADS and friends, docs/Multithreading.md).
 * Linking and LD_PRELOAD: docs/BlasAbi.md.
 *
 * Kept in sync with frame/blas/ by the test tests/c_abi.rs.
 */
#ifndef OXBLIS_H
#define OXBLIS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Complex values are two consecutive floats / doubles (real, imaginary), as in Fortran and
 * C99 _Complex; the complex routines take them by untyped pointer. */

/* ---- Fortran BLAS (every argument by reference; gfortran's hidden string lengths may be
 * passed after the last argument and are ignored). ---- */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b,
            const int *ldb, const double *beta, double *c, const int *ldc);
void cgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const void *alpha, const void *a, const int *lda, const void *b, const int *ldb,
            const void *beta, void *c, const int *ldc);
void zgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const void *alpha, const void *a, const int *lda, const void *b, const int *ldb,
            const void *beta, void *c, const int *ldc);

/* The same four under the other names BLAS builds export: sgemm, SGEMM, SGEMM_ (and d, c, z)
 * are aliases with the same signature. */

/* Bad-argument handler (reference XERBLA). A program's own definition is called instead
 * (found at run time; export it, e.g. -rdynamic). oxblis's prints
 * " ** On entry to DGEMM parameter number  8 had an illegal value" and returns. Static
 * linking with your own xerbla_: link with -Wl,--allow-multiple-definition, your object
 * first. */
void xerbla_(const char *srname, const int *info, size_t srname_len);

/* ---- CBLAS ---- */
#ifndef OXBLIS_NO_CBLAS_ENUMS
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
#endif

void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c,
                 int ldc);
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);
void cblas_cgemm(int layout, int transa, int transb, int m, int n, int k, const void *alpha,
                 const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
                 int ldc);
void cblas_zgemm(int layout, int transa, int transb, int m, int n, int k, const void *alpha,
                 const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
                 int ldc);

/* CBLAS bad-argument handler: NOT defined by oxblis (it is variadic, which Rust cannot
 * define). Define it in your program (export it: -rdynamic) or load a CBLAS that has one,
 * and oxblis calls it; otherwise oxblis prints "Parameter 9 to routine cblas_dgemm was
 * incorrect" itself and returns. */
void cblas_xerbla(int p, const char *rout, const char *form, ...);

/* The reference CBLAS global set while a row-major call runs (for cblas_xerbla). */
extern int RowMajorStrg;

/* ---- oxblis ---- */
/* Threads BLAS/CBLAS calls may use from now on (default: BLIS_NUM_THREADS, else all cores).
 * Returns 0, or -1 and changes nothing if n < 1 or n > 1024. */
int oxblis_set_num_threads(int n);
/* The current thread default (with explicit ways per loop, their product). */
int oxblis_get_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* OXBLIS_H */
