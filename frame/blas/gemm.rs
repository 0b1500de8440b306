//! The reference BLAS ?GEMM, shared by the Fortran and CBLAS entry points: argument checks
//! in reference order and numbering, then the product on column-major views, as
//! [`crate::gemm_ex`] computes it.

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::api::gemm_unguarded;
use crate::blas::one_tile::blas_one_tile;
use crate::error::{Error, ErrorKind, internal_from_panic};
use crate::gks;
use crate::rntm::Rntm;
use crate::types::{GemmPair, Scalar};
use crate::view::{MatMut, MatRef, blas_array_fits};

/// op() of an operand, from a BLAS TRANS character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Plain,
    Transpose,
    ConjTranspose,
}

impl Op {
    /// 'N', 'T' or 'C' in either case (the reference LSAME), else `None`.
    pub(crate) fn from_char(c: u8) -> Option<Op> {
        match c.to_ascii_uppercase() {
            b'N' => Some(Op::Plain),
            b'T' => Some(Op::Transpose),
            b'C' => Some(Op::ConjTranspose),
            _ => None,
        }
    }

    /// The (row, column) strides of op(X) for a column-major X with leading dimension `ld`,
    /// as [`op`] gives its view.
    pub(crate) fn strides(self, ld: usize) -> (isize, isize) {
        match self {
            Op::Plain => (1, ld as isize),
            Op::Transpose | Op::ConjTranspose => (ld as isize, 1),
        }
    }

    /// The (rows, columns) of the array an operand is stored in, for op(operand) of
    /// `rows`×`cols`.
    pub(crate) fn shape_of_operand<I>(self, rows: I, cols: I) -> (I, I) {
        match self {
            Op::Plain => (rows, cols),
            Op::Transpose | Op::ConjTranspose => (cols, rows),
        }
    }
}

/// Why a BLAS call did nothing.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The reference BLAS would call XERBLA with this (1-based) argument position.
    BadArgument(c_int),
    /// The arguments were valid BLAS but oxblis could not run the call (C overlapping A or
    /// B, out of memory, an internal error); C is untouched.
    Failed(Error),
}

/// The arguments of a column-major ?GEMM call, by value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GemmArgs<T> {
    pub transa: Op,
    pub transb: Op,
    pub m: c_int,
    pub n: c_int,
    pub k: c_int,
    pub alpha: T,
    pub a: *const T,
    pub lda: c_int,
    pub b: *const T,
    pub ldb: c_int,
    pub beta: T,
    pub c: *mut T,
    pub ldc: c_int,
}

/// Checks `args` in the reference order (M 3, N 4, K 5, LDA 8, LDB 10, LDC 13; the TRANS
/// characters, 1 and 2, were decoded by the caller) and runs the product.
///
/// # Safety
/// The BLAS contract: with the checks passed, A is an LDA×(K or M) column-major array, B an
/// LDB×(N or K), C an LDC×N one, valid as BLAS documents (C readable and writable), unless
/// the dimensions make them unused.
// Inlined into each entry point: the argument block then stays in registers. Measured
// (session 24, `cblas_dgemm`, two builds alternated in one process, three runs): 2³ 23.0 ns
// inlined against 24.5 not, 4³ 24.3–25.4 against 26.5–27.0; level from 8³.
#[inline(always)]
pub(crate) unsafe fn gemm_col_major<T>(args: GemmArgs<T>) -> Result<(), Refusal>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    #[rustfmt::skip]
    let GemmArgs { transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, .. } = args;
    let nrow_a = transa.shape_of_operand(m, k).0;
    let nrow_b = transb.shape_of_operand(k, n).0;
    let bad = |position| Err(Refusal::BadArgument(position));
    if m < 0 {
        return bad(3);
    }
    if n < 0 {
        return bad(4);
    }
    if k < 0 {
        return bad(5);
    }
    if lda < nrow_a.max(1) {
        return bad(8);
    }
    if ldb < nrow_b.max(1) {
        return bad(10);
    }
    if ldc < m.max(1) {
        return bad(13);
    }
    // The reference quick return: nothing to do, and C is not touched.
    if m == 0 || n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return Ok(());
    }
    // The closure borrows `args` whole: capturing each of its fields was a dozen stores
    // and loads on every call.
    // SAFETY: the BLAS contract of `args`, checked above; no quick return.
    match catch_unwind(AssertUnwindSafe(|| unsafe { run_checked(&args) })) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Refusal::Failed(e)),
        Err(panic) => Err(Refusal::Failed(internal_from_panic(&*panic))),
    }
}

/// The product of a call whose reference checks passed: a single tile straight to its
/// kernel (`one_tile.rs`), anything else through [`crate::gemm_ex`]'s checks and dispatch
/// with the global thread defaults.
///
/// # Safety
/// The BLAS contract of `args`, whose checks passed and which is no quick return.
#[inline(always)]
unsafe fn run_checked<T>(args: &GemmArgs<T>) -> crate::Result<()>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let cntx = gks::context()?;
    // SAFETY: the caller's.
    if unsafe { blas_one_tile(cntx, args) } {
        return Ok(());
    }
    // SAFETY: the caller's.
    unsafe { run_usual(cntx, args) }
}

/// [`run_checked`] past the shortcut: the views, and [`crate::gemm_ex`]'s checks and
/// dispatch. Out of line, so that the calls the shortcut takes do not carry its frame.
///
/// # Safety
/// As [`run_checked`].
#[inline(never)]
unsafe fn run_usual<T>(cntx: &crate::cntx::Cntx, args: &GemmArgs<T>) -> crate::Result<()>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let dim = |x: c_int| x as usize; // all checked non-negative
    let (m, n, k) = (dim(args.m), dim(args.n), dim(args.k));
    let (nrow_a, ncol_a) = args.transa.shape_of_operand(m, k);
    let (nrow_b, ncol_b) = args.transb.shape_of_operand(k, n);
    let (lda, ldb, ldc) = (dim(args.lda), dim(args.ldb), dim(args.ldc));
    if !(blas_array_fits::<T>(nrow_a, ncol_a, lda)
        && blas_array_fits::<T>(nrow_b, ncol_b, ldb)
        && blas_array_fits::<T>(m, n, ldc))
    {
        return Err(larger_than_memory());
    }
    // SAFETY: the BLAS contract: these are the arrays the caller passed, with the extents
    // BLAS defines, which fit in isize (checked just above).
    let (a, b, c) = unsafe {
        (
            MatRef::from_blas_array(args.a, nrow_a, ncol_a, lda),
            MatRef::from_blas_array(args.b, nrow_b, ncol_b, ldb),
            MatMut::from_blas_array(args.c, m, n, ldc),
        )
    };
    let a = op(a, args.transa).scaled(args.alpha);
    let b = op(b, args.transb);
    gemm_unguarded(&a, &b, &mut c.with_beta(args.beta), cntx, &Rntm::default())
}

/// Dimensions no array in memory can have (more than `isize::MAX` bytes): refused before
/// anything is read, as the views' own checks refuse them in the Rust API.
#[cold]
#[inline(never)]
fn larger_than_memory() -> Error {
    Error::new(
        ErrorKind::InvalidView,
        "the dimensions and leading dimensions describe an array larger than memory",
    )
}

/// op(v) for a TRANS character.
pub(crate) fn op<T: GemmPair<T>>(v: MatRef<'_, T>, t: Op) -> MatRef<'_, T> {
    match t {
        Op::Plain => v,
        Op::Transpose => v.t(),
        Op::ConjTranspose => v.h(),
    }
}

/// Reads `*p`, or `None` for a null pointer (which BLAS callers must not pass, but a C
/// caller can).
///
/// # Safety
/// `p` is null or valid for a read.
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    // SAFETY: the caller's.
    unsafe { p.as_ref().copied() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn dimensions_larger_than_memory_are_refused_and_nothing_is_touched() {
        let a = [1.0f64; 4];
        let mut c = [7.0f64; 4];
        let big = c_int::MAX;
        // Every reference check passes (LDA ≥ M and so on), but each array would span about
        // 2^65 bytes; no array in memory can, so nothing may be read.
        let args = GemmArgs {
            transa: Op::Plain,
            transb: Op::Plain,
            m: big,
            n: big,
            k: big,
            alpha: 1.0,
            a: a.as_ptr(),
            lda: big,
            b: a.as_ptr(),
            ldb: big,
            beta: 0.0,
            c: c.as_mut_ptr(),
            ldc: big,
        };
        // SAFETY: refused before any array is read (what this test checks).
        match unsafe { gemm_col_major(args) } {
            Err(Refusal::Failed(e)) => assert_eq!(e.kind(), ErrorKind::InvalidView, "{e}"),
            other => panic!("not refused: {other:?}"),
        }
        assert_eq!(c, [7.0; 4]);
    }
}
