/* Calls oxblis through its C header as a C program would: results of dgemm_, sgemm_,
 * zgemm_, cgemm_ and cblas_?gemm (both layouts) against a plain triple loop, and the error
 * exits through this program's own xerbla_ / cblas_xerbla. Built and run by tests/c_abi.rs;
 * prints one line per failure and exits non-zero if there was any. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oxblis.h"

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("FAIL line %d: ", __LINE__);            \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            failures++;                                    \
        }                                                  \
    } while (0)

/* This program's own handlers: oxblis must call these, not its defaults. */
static int xerbla_calls, xerbla_info;
static char xerbla_name[16];
void xerbla_(const char *srname, const int *info, size_t len) {
    size_t n = len < 15 ? len : 15;
    memcpy(xerbla_name, srname, n);
    xerbla_name[n] = 0;
    xerbla_info = *info;
    xerbla_calls++;
}
static int cblas_calls, cblas_info, cblas_row_major;
static char cblas_routine[32];
void cblas_xerbla(int p, const char *rout, const char *form, ...) {
    (void)form;
    strncpy(cblas_routine, rout, 31);
    cblas_info = p;
    cblas_row_major = RowMajorStrg;
    cblas_calls++;
}

static unsigned lcg = 12345;
static double next(void) {
    lcg = lcg * 1103515245u + 12345u;
    return (double)((lcg >> 8) % 2001) / 1000.0 - 1.0;
}

/* C := alpha*op(A)*op(B) + beta*C, column-major, real, op = 'N' or 'T'. */
static void ref_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a,
                      int lda, const double *b, int ldb, double beta, double *c, int ldc) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++) {
                double x = ta == 'N' ? a[i + p * lda] : a[p + i * lda];
                double y = tb == 'N' ? b[p + j * ldb] : b[j + p * ldb];
                s += x * y;
            }
            c[i + j * ldc] = alpha * s + (beta == 0 ? 0 : beta * c[i + j * ldc]);
        }
}

static double max_diff(const double *x, const double *y, int len) {
    double d = 0;
    for (int i = 0; i < len; i++) d = fmax(d, fabs(x[i] - y[i]));
    return d;
}

enum { M = 37, N = 29, K = 41, LD = 50 };
static double a[LD * LD], b[LD * LD], c[LD * LD], want[LD * LD];

static void fill(double *x, int len) {
    for (int i = 0; i < len; i++) x[i] = next();
}

static void test_dgemm(void) {
    const char *ops = "NT";
    for (int ia = 0; ia < 2; ia++)
        for (int ib = 0; ib < 2; ib++) {
            char ta = ops[ia], tb = ops[ib];
            int m = M, n = N, k = K, lda = LD, ldb = LD, ldc = LD;
            double alpha = 0.5, beta = -1.25;
            fill(a, LD * LD), fill(b, LD * LD), fill(c, LD * LD);
            memcpy(want, c, sizeof c);
            ref_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc);
            dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
            CHECK(max_diff(c, want, LD * LD) < 1e-12, "dgemm_ %c%c differs by %g", ta, tb,
                  max_diff(c, want, LD * LD));
        }
}

static void test_cblas_dgemm(void) {
    /* Row-major C (M×N) = A (M×K, row-major) · Bᵀ (B is N×K row-major). */
    double alpha = 2.0, beta = 0.0;
    fill(a, LD * LD), fill(b, LD * LD);
    for (int i = 0; i < LD * LD; i++) c[i] = NAN; /* beta = 0: C is never read */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, alpha, a, LD, b, LD, beta, c,
                LD);
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++) s += a[i * LD + p] * b[j * LD + p];
            worst = fmax(worst, fabs(c[i * LD + j] - alpha * s));
        }
    CHECK(worst < 1e-12, "cblas_dgemm row-major NT differs by %g", worst);
    CHECK(!isnan(c[0]) && isnan(c[N]), "cblas_dgemm wrote outside C or left NaN");

    fill(c, LD * LD);
    memcpy(want, c, sizeof c);
    ref_dgemm('T', 'N', M, N, K, 1.0, a, LD, b, LD, 1.0, want, LD);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0, a, LD, b, LD, 1.0, c, LD);
    CHECK(max_diff(c, want, LD * LD) < 1e-12, "cblas_dgemm col-major TN differs");
}

static void test_complex_and_single(void) {
    /* zgemm_ with A conjugate-transposed: C (2×2) = alpha * A^H * B, A 3×2, B 3×2. */
    double za[12], zb[12], zc[8];
    for (int i = 0; i < 12; i++) za[i] = next(), zb[i] = next();
    for (int i = 0; i < 8; i++) zc[i] = 7.0;
    double alpha[2] = {0.5, -1.0}, beta[2] = {0.0, 0.0};
    int m = 2, n = 2, k = 3, lda = 3, ldb = 3, ldc = 2;
    zgemm_("C", "N", &m, &n, &k, alpha, za, &lda, zb, &ldb, beta, zc, &ldc);
    double worst = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double sr = 0, si = 0;
            for (int p = 0; p < 3; p++) {
                double ar = za[2 * (p + i * 3)], ai = -za[2 * (p + i * 3) + 1];
                double br = zb[2 * (p + j * 3)], bi = zb[2 * (p + j * 3) + 1];
                sr += ar * br - ai * bi, si += ar * bi + ai * br;
            }
            double wr = alpha[0] * sr - alpha[1] * si, wi = alpha[0] * si + alpha[1] * sr;
            worst = fmax(worst, fabs(zc[2 * (i + j * 2)] - wr) + fabs(zc[2 * (i + j * 2) + 1] - wi));
        }
    CHECK(worst < 1e-12, "zgemm_ CN differs by %g", worst);

    /* cblas_cgemm row-major and sgemm_: 1×1×1 products with exact values. */
    float ca[2] = {1, 2}, cb[2] = {3, -1}, cc[2] = {100, 100}, calpha[2] = {1, 0}, cbeta[2] = {1, 0};
    cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, calpha, ca, 1, cb, 1, cbeta,
                cc, 1);
    CHECK(cc[0] == 105 && cc[1] == 105, "cblas_cgemm gave (%g, %g), want (105, 105)", cc[0], cc[1]);
    float sa = 3, sb = 4, sc = 1, salpha = 2, sbeta = 10;
    int one = 1;
    sgemm_("n", "t", &one, &one, &one, &salpha, &sa, &one, &sb, &one, &sbeta, &sc, &one);
    CHECK(sc == 34, "sgemm_ gave %g, want 34", sc);
}

static void test_error_exits(void) {
    int m = 4, n = 4, k = 4, lda = 3, ld = 4;
    double alpha = 1, beta = 0, cc[16] = {0}, aa[16] = {0};
    for (int i = 0; i < 16; i++) cc[i] = i;
    dgemm_("N", "N", &m, &n, &k, &alpha, aa, &lda, aa, &ld, &beta, cc, &ld);
    CHECK(xerbla_calls == 1 && xerbla_info == 8 && strncmp(xerbla_name, "DGEMM", 5) == 0,
          "bad LDA: xerbla_ calls %d, info %d, name '%s' (want 1, 8, DGEMM)", xerbla_calls,
          xerbla_info, xerbla_name);
    dgemm_("X", "N", &m, &n, &k, &alpha, aa, &ld, aa, &ld, &beta, cc, &ld);
    CHECK(xerbla_calls == 2 && xerbla_info == 1, "bad TRANSA: info %d (want 1)", xerbla_info);
    int same = 1;
    for (int i = 0; i < 16; i++) same &= cc[i] == i;
    CHECK(same, "C changed by a refused call");

    /* CBLAS numbering: column-major LDA is argument 9. Row-major calls report the positions
     * of the swapped column-major call (LDA as 11) with RowMajorStrg set, as the reference
     * CBLAS does; a reference cblas_xerbla swaps them back. */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1, aa, 3, aa, 4, 0, cc, 4);
    CHECK(cblas_calls == 1 && cblas_info == 9 && cblas_row_major == 0 &&
              strcmp(cblas_routine, "cblas_dgemm") == 0,
          "col-major bad lda: calls %d info %d row %d routine %s", cblas_calls, cblas_info,
          cblas_row_major, cblas_routine);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1, aa, 3, aa, 4, 0, cc, 4);
    CHECK(cblas_calls == 2 && cblas_info == 11 && cblas_row_major == 1,
          "row-major bad lda: info %d row %d (want 11, 1)", cblas_info, cblas_row_major);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 4, 4, 1, aa, 4, aa, 4, 0, cc, 4);
    CHECK(cblas_info == 5, "row-major bad M: info %d (want 5, M's place in the swapped call)",
          cblas_info);
    cblas_dgemm(77, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1, aa, 4, aa, 4, 0, cc, 4);
    CHECK(cblas_info == 1, "bad layout: info %d (want 1)", cblas_info);
    double zalpha[2] = {1, 0}, zbeta[2] = {0, 0};
    cblas_zgemm(CblasColMajor, 5, CblasNoTrans, 1, 1, 1, zalpha, aa, 1, aa, 1, zbeta, cc, 1);
    CHECK(cblas_info == 2 && strcmp(cblas_routine, "cblas_zgemm") == 0,
          "bad TransA: info %d routine %s", cblas_info, cblas_routine);
    CHECK(RowMajorStrg == 0, "RowMajorStrg left set");

    /* Valid BLAS arguments that oxblis refuses: C is A (undefined in BLAS). Reported on
     * stderr, not through xerbla_, and C is left as it was. */
    int calls_before = xerbla_calls;
    double one = 1;
    dgemm_("N", "N", &m, &n, &k, &one, cc, &ld, aa, &ld, &one, cc, &ld);
    CHECK(xerbla_calls == calls_before, "aliasing was reported through xerbla_");
    same = 1;
    for (int i = 0; i < 16; i++) same &= cc[i] == i;
    CHECK(same, "C changed by a refused CBLAS call");
}

static void test_threads(void) {
    CHECK(oxblis_set_num_threads(1) == 0 && oxblis_get_num_threads() == 1, "set 1 thread");
    CHECK(oxblis_set_num_threads(0) == -1 && oxblis_get_num_threads() == 1, "0 threads refused");
    CHECK(oxblis_set_num_threads(2) == 0 && oxblis_get_num_threads() == 2, "set 2 threads");
}

int main(void) {
    test_threads();
    test_dgemm();
    test_cblas_dgemm();
    test_complex_and_single();
    test_error_exits();
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("c abi: all checks passed\n");
    return 0;
}
