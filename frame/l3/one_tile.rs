//! Problems of a single sup tile (m ≤ MR, n ≤ NR, short k): one call of the sup kernel,
//! straight from `gemm_front`, before the thread plan and the path choice.
//!
//! For such a call the fixed cost ahead of the kernel is most of the time: a 4×4×4 dgemm
//! took 40 ns through the usual path (plan, path choice, `gemm_sup`'s k blocks and tile loop)
//! and 27 ns through this one (docs/Performance.md, session 22). An A the kernel cannot read
//! in place (row-stored, general strides, or conjugated) and a conjugated B are copied onto
//! the stack first when they fit (`stack_copies.rs`, as the sup path does); when they do not,
//! the problem takes the usual path.
//!
//! What it computes is what `gemm_sup` computes for the same problem: one tile, one k block.
//! Problems of several tiles gained nothing measurable from the same shortcut (dgemm 16³ to
//! 32³ level, 24³ 2 % slower), so they keep the usual path.

use crate::cntx::{GemmKernel, SupKernel};
use crate::kernels::SupUkrArgs;
use crate::l3::stack_copies::with_stack_copies;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// The deepest problem taken. A single tile reads every element of A and B once, so
/// splitting its k never pays; the bound keeps these problems far below any thread threshold
/// (a 32×12×256 tile is 2^16.6 multiply-adds; threads start at 2^18 each), and past it the
/// kernel's time hides the few ns the shortcut saves.
pub(crate) const ONE_TILE_MAX_K: usize = 256;

/// Runs C := alpha·op(A)·op(B) + beta·C as one sup kernel call when the problem is a single
/// tile of the kernel (in the orientation sup kernels prefer: C's columns contiguous, a
/// row-stored C solved as Cᵀ = op(B)ᵀ·op(A)ᵀ) within its limits, and returns true; returns
/// false, having touched nothing, for any other problem.
#[inline(always)]
pub(crate) fn gemm_one_tile<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    let Some(sup) = kernel.sup() else {
        return false;
    };
    if c.row_stride() == 1 {
        return one_tile_oriented(sup, alpha, a, b, beta, c);
    }
    if c.col_stride() == 1
        && let Some((bt, at)) = A::swapped(a, b)
    {
        return one_tile_oriented(sup, alpha, &bt, &at, beta, &mut c.rb().t());
    }
    false
}

/// [`gemm_one_tile`] once C is column-stored.
#[inline(always)]
fn one_tile_oriented<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    let (mr, nr) = sup.tile();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    if m > mr || n > nr || k > ONE_TILE_MAX_K {
        return false;
    }
    let a_in_place = a.row_stride() == 1 && !a.is_conj();
    // The limits bind here too (a copy of A has column stride m): a context whose limits
    // refuse A (a test's, to reach the packed paths at small sizes) never takes a sup path.
    let a_col_stride = if a_in_place {
        a.col_stride().unsigned_abs()
    } else {
        m
    };
    if !sup.suits(m, k, Some(a_col_stride)) {
        return false;
    }
    if a_in_place && !b.is_conj() {
        // SAFETY: A has unit row stride and no pending conjugation, B none either; the tile
        // is the whole problem and within MR×NR.
        unsafe { run_tile(sup, alpha, a, b, beta, c) };
        return true;
    }
    one_tile_from_copies(sup, alpha, a, b, beta, c)
}

/// [`one_tile_oriented`] with A copied (unless the kernel reads it in place) and B copied
/// (if conjugated) onto the stack (`stack_copies.rs`); false, having touched nothing, when
/// they do not fit. Out of line, so that the usual call does not carry the buffer in its
/// stack frame.
#[inline(never)]
fn one_tile_from_copies<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    with_stack_copies(a, b, |a, b| {
        // SAFETY: A now has unit row stride and no pending conjugation (the copy's, or as
        // it was), B no pending conjugation; the tile is the whole problem, within MR×NR
        // (checked by the caller).
        unsafe { run_tile(sup, alpha, a, b, beta, c) };
    })
    .is_ok()
}

/// One call of the sup kernel for the whole problem.
///
/// # Safety
/// C is at most MR×NR of `sup`; A has unit row stride and no pending conjugation, B no
/// pending conjugation; all three are checked views (C exclusively borrowed) of a problem
/// whose shapes agree.
#[inline(always)]
unsafe fn run_tile<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    let args = SupUkrArgs {
        m: c.nrows(),
        n: c.ncols(),
        k: a.ncols(),
        alpha,
        a: a.as_ptr(),
        cs_a: a.col_stride(),
        b: b.as_ptr(),
        rs_b: b.row_stride(),
        cs_b: b.col_stride(),
        beta,
        c: c.ptr_at(0, 0),
        rs_c: c.row_stride(),
        cs_c: c.col_stride(),
    };
    // SAFETY: the kernel's contract (tile within MR×NR, A with unit row stride, B any
    // strides, C exclusively borrowed) is the caller's promise; the context's kernel runs on
    // this CPU.
    unsafe { (sup.ukr())(&args) };
}
