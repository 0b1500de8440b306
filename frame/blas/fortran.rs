//! The Fortran BLAS entry points `sgemm_`, `dgemm_`, `cgemm_`, `zgemm_` (gfortran
//! convention: every argument by reference; the hidden lengths of the two TRANS strings that
//! gfortran appends are not declared, which the C calling convention makes harmless), and
//! their aliases `sgemm`, `SGEMM`, `SGEMM_` … as other BLAS builds export them.

use std::ffi::{c_char, c_int};
use std::io::Write;

use crate::blas::gemm::{GemmArgs, Op, Refusal, gemm_col_major, read};
use crate::blas::xerbla::call_xerbla;
use crate::types::{GemmPair, Scalar, c32, c64};

/// Decodes a Fortran ?GEMM call, runs it, and reports a refusal: bad arguments to XERBLA
/// under `name` (blank-padded to six like the reference's `'DGEMM '`), other failures on
/// stderr.
///
/// # Safety
/// The BLAS contract for ?GEMM: each pointer is valid for what BLAS reads or writes through
/// it (null scalar pointers are reported as bad arguments).
#[allow(clippy::too_many_arguments)]
unsafe fn fortran_gemm<T>(
    name: &str,
    transa: *const c_char,
    transb: *const c_char,
    m: *const c_int,
    n: *const c_int,
    k: *const c_int,
    alpha: *const T,
    a: *const T,
    lda: *const c_int,
    b: *const T,
    ldb: *const c_int,
    beta: *const T,
    c: *mut T,
    ldc: *const c_int,
) where
    T: GemmPair<T, Acc = T> + Scalar,
{
    // SAFETY: each pointer is null or points at the value BLAS passes there.
    let decoded = unsafe {
        let trans = |p: *const c_char| read(p).and_then(|ch| Op::from_char(ch as u8));
        // Positions in the reference order of checks; alpha and beta (never checked by the
        // reference) can only be wrong by being null.
        (|| {
            Ok(GemmArgs {
                transa: trans(transa).ok_or(1)?,
                transb: trans(transb).ok_or(2)?,
                m: read(m).ok_or(3)?,
                n: read(n).ok_or(4)?,
                k: read(k).ok_or(5)?,
                lda: read(lda).ok_or(8)?,
                ldb: read(ldb).ok_or(10)?,
                ldc: read(ldc).ok_or(13)?,
                alpha: read(alpha).ok_or(6)?,
                beta: read(beta).ok_or(11)?,
                a,
                b,
                c,
            })
        })()
    };
    let result = match decoded {
        // SAFETY: the caller's BLAS contract.
        Ok(args) => unsafe { gemm_col_major(args) },
        Err(position) => Err(Refusal::BadArgument(position)),
    };
    match result {
        Ok(()) => {}
        Err(Refusal::BadArgument(position)) => call_xerbla(name, position),
        Err(Refusal::Failed(e)) => {
            let name = name.trim_end();
            let _ = writeln!(std::io::stderr(), "oxblis: {name} did nothing: {e}");
        }
    }
}

/// Defines one exported ?GEMM entry point and its aliases, each a direct call of the shared
/// body (one definition instead of sixteen copies of a fourteen-argument signature).
macro_rules! fortran_gemm_entry {
    ($t:ty, $name:literal, $main:ident, [$($alias:ident),*]) => {
        #[doc = concat!("Reference BLAS `", $name, "`: C := alpha·op(A)·op(B) + beta·C, column-major, every argument by reference.")]
        ///
        /// # Safety
        /// The BLAS contract: each pointer valid for what BLAS reads or writes through it.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $main(
            transa: *const c_char, transb: *const c_char,
            m: *const c_int, n: *const c_int, k: *const c_int,
            alpha: *const $t, a: *const $t, lda: *const c_int,
            b: *const $t, ldb: *const c_int,
            beta: *const $t, c: *mut $t, ldc: *const c_int,
        ) {
            // SAFETY: the caller's contract, passed on.
            unsafe {
                fortran_gemm::<$t>(
                    concat!($name, " "), transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
                    c, ldc,
                )
            }
        }
        $(
            #[doc = concat!("Alias of [`", stringify!($main), "`].")]
            ///
            /// # Safety
            /// As the aliased function.
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C" fn $alias(
                transa: *const c_char, transb: *const c_char,
                m: *const c_int, n: *const c_int, k: *const c_int,
                alpha: *const $t, a: *const $t, lda: *const c_int,
                b: *const $t, ldb: *const c_int,
                beta: *const $t, c: *mut $t, ldc: *const c_int,
            ) {
                // SAFETY: the caller's contract, passed on.
                unsafe { $main(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) }
            }
        )*
    };
}

fortran_gemm_entry!(f32, "SGEMM", sgemm_, [sgemm, SGEMM, SGEMM_]);
fortran_gemm_entry!(f64, "DGEMM", dgemm_, [dgemm, DGEMM, DGEMM_]);
fortran_gemm_entry!(c32, "CGEMM", cgemm_, [cgemm, CGEMM, CGEMM_]);
fortran_gemm_entry!(c64, "ZGEMM", zgemm_, [zgemm, ZGEMM, ZGEMM_]);
