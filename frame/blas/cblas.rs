//! The CBLAS entry points `cblas_sgemm` … `cblas_zgemm`, both layouts. A row-major call is
//! the column-major product Cᵀ = op(B)ᵀ·op(A)ᵀ, computed without copying; its bad arguments
//! are reported as the reference CBLAS reports them (see `xerbla.rs`).

use std::ffi::{CStr, c_int, c_void};
use std::io::Write;

use crate::blas::gemm::{GemmArgs, Op, Refusal, gemm_col_major, read};
use crate::blas::xerbla::call_cblas_xerbla;
use crate::types::{GemmPair, Scalar, c32, c64};

/// `CblasRowMajor`.
const ROW_MAJOR: c_int = 101;
/// `CblasColMajor`.
const COL_MAJOR: c_int = 102;

fn decode_trans(t: c_int) -> Option<Op> {
    match t {
        111 => Some(Op::Plain),
        112 => Some(Op::Transpose),
        113 => Some(Op::ConjTranspose),
        _ => None,
    }
}

/// One CBLAS gemm call, with its scalars already read.
///
/// # Safety
/// The CBLAS contract: the arrays are valid for the dimensions and layout given.
#[allow(clippy::too_many_arguments)]
unsafe fn cblas_gemm<T>(
    routine: &CStr,
    layout: c_int,
    transa: c_int,
    transb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: T,
    a: *const T,
    lda: c_int,
    b: *const T,
    ldb: c_int,
    beta: T,
    c: *mut T,
    ldc: c_int,
) where
    T: GemmPair<T, Acc = T> + Scalar,
{
    if layout != ROW_MAJOR && layout != COL_MAJOR {
        call_cblas_xerbla(false, 1, routine, c"Illegal layout setting, %d\n", layout);
        return;
    }
    let row_major = layout == ROW_MAJOR;
    let (Some(ta), Some(tb)) = (decode_trans(transa), decode_trans(transb)) else {
        if decode_trans(transa).is_none() {
            let form = c"Illegal TransA setting, %d\n";
            call_cblas_xerbla(row_major, 2, routine, form, transa);
        } else {
            let form = c"Illegal TransB setting, %d\n";
            call_cblas_xerbla(row_major, 3, routine, form, transb);
        }
        return;
    };
    let args = if row_major {
        #[rustfmt::skip]
        let swapped = GemmArgs {
            transa: tb, transb: ta, m: n, n: m, k, alpha,
            a: b, lda: ldb, b: a, ldb: lda, beta, c, ldc,
        };
        swapped
    } else {
        GemmArgs {
            transa: ta,
            transb: tb,
            m,
            n,
            k,
            alpha,
            a,
            lda,
            b,
            ldb,
            beta,
            c,
            ldc,
        }
    };
    // SAFETY: the caller's CBLAS contract is the column-major BLAS contract of `args`.
    match unsafe { gemm_col_major(args) } {
        Ok(()) => {}
        // The Fortran position plus one (CBLAS has `layout` first); for row-major calls the
        // positions of the swapped call, as the reference reports them.
        Err(Refusal::BadArgument(position)) => {
            call_cblas_xerbla(row_major, position + 1, routine, c"", 0);
        }
        Err(Refusal::Failed(e)) => {
            let routine = routine.to_string_lossy();
            let _ = writeln!(std::io::stderr(), "oxblis: {routine} did nothing: {e}");
        }
    }
}

/// The complex CBLAS calls: scalars and arrays by untyped pointer.
///
/// # Safety
/// The CBLAS contract; `alpha` and `beta` point at one `T` each (null is reported as a bad
/// argument, position 7 or 12).
#[allow(clippy::too_many_arguments)]
unsafe fn cblas_complex_gemm<T>(
    routine: &CStr,
    layout: c_int,
    transa: c_int,
    transb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: *const c_void,
    a: *const c_void,
    lda: c_int,
    b: *const c_void,
    ldb: c_int,
    beta: *const c_void,
    c: *mut c_void,
    ldc: c_int,
) where
    T: GemmPair<T, Acc = T> + Scalar,
{
    // SAFETY: null or pointing at a T, by the contract.
    let (alpha, beta) = unsafe { (read(alpha.cast::<T>()), read(beta.cast::<T>())) };
    let (Some(alpha), Some(beta)) = (alpha, beta) else {
        let position = if alpha.is_none() { 7 } else { 12 };
        call_cblas_xerbla(false, position, routine, c"", 0);
        return;
    };
    // SAFETY: the caller's contract, passed on with the arrays typed.
    unsafe {
        cblas_gemm(
            routine,
            layout,
            transa,
            transb,
            m,
            n,
            k,
            alpha,
            a.cast::<T>(),
            lda,
            b.cast::<T>(),
            ldb,
            beta,
            c.cast::<T>(),
            ldc,
        )
    }
}

/// Defines an exported real CBLAS gemm (scalars by value) in terms of [`cblas_gemm`].
macro_rules! cblas_real_entry {
    ($t:ty, $name:ident) => {
        #[doc = concat!("CBLAS `", stringify!($name), "`: C := alpha·op(A)·op(B) + beta·C in either layout.")]
        ///
        /// # Safety
        /// The CBLAS contract: the arrays are valid for the dimensions and layout given.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            layout: c_int, transa: c_int, transb: c_int, m: c_int, n: c_int, k: c_int,
            alpha: $t, a: *const $t, lda: c_int, b: *const $t, ldb: c_int,
            beta: $t, c: *mut $t, ldc: c_int,
        ) {
            // A constant: checking the name's bytes on every call was a few ns of a small one.
            const ROUTINE: &CStr =
                match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                    Ok(name) => name,
                    Err(_) => panic!("a routine name is one nul-terminated string"),
                };
            // SAFETY: the caller's contract, passed on.
            unsafe {
                cblas_gemm(
                    ROUTINE, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                    beta, c, ldc,
                )
            }
        }
    };
}

/// Defines an exported complex CBLAS gemm (scalars and arrays by untyped pointer) in terms
/// of [`cblas_complex_gemm`].
macro_rules! cblas_complex_entry {
    ($t:ty, $name:ident) => {
        #[doc = concat!("CBLAS `", stringify!($name), "`: C := alpha·op(A)·op(B) + beta·C in either layout; complex scalars by pointer.")]
        ///
        /// # Safety
        /// The CBLAS contract: the arrays are valid for the dimensions and layout given,
        /// `alpha` and `beta` point at complex values.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            layout: c_int, transa: c_int, transb: c_int, m: c_int, n: c_int, k: c_int,
            alpha: *const c_void, a: *const c_void, lda: c_int, b: *const c_void, ldb: c_int,
            beta: *const c_void, c: *mut c_void, ldc: c_int,
        ) {
            // A constant: checking the name's bytes on every call was a few ns of a small one.
            const ROUTINE: &CStr =
                match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                    Ok(name) => name,
                    Err(_) => panic!("a routine name is one nul-terminated string"),
                };
            // SAFETY: the caller's contract, passed on.
            unsafe {
                cblas_complex_gemm::<$t>(
                    ROUTINE, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                    beta, c, ldc,
                )
            }
        }
    };
}

cblas_real_entry!(f32, cblas_sgemm);
cblas_real_entry!(f64, cblas_dgemm);
cblas_complex_entry!(c32, cblas_cgemm);
cblas_complex_entry!(c64, cblas_zgemm);
