//! The degenerate shapes: C with one column is a gemv, y := alpha·op(A)·x + beta·y, and C with
//! one row is the same problem transposed (Cᵀ = op(B)ᵀ·op(A)ᵀ). These are bound by memory,
//! not arithmetic: packing A would double the traffic, and a tile kernel would waste most of
//! its lanes, so they go to the context's gemv kernel, which streams A once (contract:
//! `GemvUkr` in `kernels/mod.rs`). Chosen by `gemm_front` for every dtype with a gemv
//! kernel; runs on the calling thread.

use crate::error::Result;
use crate::kernels::{GemvUkr, GemvUkrArgs};
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// C (m×1) := alpha·A (m×k)·B (k×1) + beta·C through `gemv`; operands checked.
pub(crate) fn gemm_gemv<A: GemmPair<B>, B: Element>(
    gemv: GemvUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    debug_assert!(c.ncols() == 1 && b.ncols() == 1);
    let args = GemvUkrArgs {
        m: c.nrows(),
        k: a.ncols(),
        alpha,
        a: a.as_ptr(),
        rs_a: a.row_stride(),
        cs_a: a.col_stride(),
        conj_a: a.is_conj(),
        x: b.as_ptr(),
        inc_x: b.row_stride(),
        conj_x: b.is_conj(),
        beta,
        y: c.as_mut_ptr(),
        inc_y: c.row_stride(),
    };
    // SAFETY: A (m×k), x (k elements of B's column) and y (C's column) are checked views,
    // C exclusively borrowed; the context's kernel runs on this CPU.
    unsafe { gemv(&args) };
    Ok(())
}
