//! The reference BLAS ?GEMM, shared by the Fortran and CBLAS entry points: argument checks
//! in reference order and numbering, then [`gemm_ex`] on column-major views.

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Error, internal_from_panic};
use crate::gemm_ex;
use crate::types::{GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

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
pub(crate) unsafe fn gemm_col_major<T>(args: GemmArgs<T>) -> Result<(), Refusal>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let GemmArgs {
        transa,
        transb,
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
    } = args;
    let (nrow_a, ncol_a) = if transa == Op::Plain { (m, k) } else { (k, m) };
    let (nrow_b, ncol_b) = if transb == Op::Plain { (k, n) } else { (n, k) };
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
    let run = || -> crate::Result<()> {
        let dim = |x: c_int| x as usize; // all checked non-negative above
        // SAFETY: the BLAS contract (see the function docs): these are the arrays the caller
        // passed, with the extents BLAS defines; `from_raw_parts` checks index overflow.
        let (a, b, mut c) = unsafe {
            (
                MatRef::from_raw_parts(a, dim(nrow_a), dim(ncol_a), 1, lda as isize)?,
                MatRef::from_raw_parts(b, dim(nrow_b), dim(ncol_b), 1, ldb as isize)?,
                MatMut::from_raw_parts(c, dim(m), dim(n), 1, ldc as isize)?,
            )
        };
        let a = op(a, transa).scaled(alpha);
        let b = op(b, transb);
        gemm_ex(&a, &b, &mut c.rb().with_beta(beta), None)
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Refusal::Failed(e)),
        Err(panic) => Err(Refusal::Failed(internal_from_panic(&*panic))),
    }
}

/// op(v) for a TRANS character.
fn op<T: GemmPair<T>>(v: MatRef<'_, T>, t: Op) -> MatRef<'_, T> {
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
