//! Problems of one row of at most [`ROW_TILES`] sup tiles (m ≤ MR, n ≤ ROW_TILES·NR, short
//! k): the sup kernel called once per NR columns, straight from `gemm_front` or from the BLAS
//! entry points (`frame/blas/one_tile.rs`), before the thread plan and the path choice.
//!
//! For such a call the fixed cost ahead of the kernel is most of the time: a 4×4×4 dgemm
//! took 40 ns through the usual path (plan, path choice, `gemm_sup`'s k blocks and tile loop)
//! and 27 ns through this one (docs/Performance.md, session 22). An A the kernel cannot read
//! in place (row-stored, general strides, or conjugated) and a conjugated B are copied onto
//! the stack first when they fit (`stack_copies.rs`, as the sup path does); when they do not,
//! the problem takes the usual path.
//!
//! What it computes is what `gemm_sup` computes for the same problem: the same tiles, one k
//! block, in the orientation `gemm_front` would choose (a short, wide C with op(B)'s rows
//! contiguous transposed, `short_and_wide_with_b_rows`).

use crate::cntx::{GemmKernel, SupKernel};
use crate::kernels::SupUkrArgs;
use crate::l3::gemm::short_and_wide_with_b_rows;
use crate::l3::stack_copies::with_stack_copies;
use crate::l3::sup::run_sup_tile;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// The deepest problem taken. A row of tiles reads every element of A and B once per tile,
/// from L1, so splitting its k never pays; the bound keeps these problems below any thread
/// threshold (a 32×12×256 tile is 2^16.6 multiply-adds, a row of four 2^18.6; two threads
/// start at 2^18 each, 2^19 in all), and past it the kernel's time hides the few ns the
/// shortcut saves.
pub(crate) const ONE_TILE_MAX_K: usize = 256;

/// The most tiles side by side a problem may have to be taken (n ≤ 4·NR: 48 columns on skx,
/// 24 on haswell). Past one tile the usual path's checks and dispatch cost 20–45 ns a call.
/// Measured in session 25, ns, one tile → a row of four (OpenBLAS), alternated in one process
/// on one pinned vCPU (skx): through `cblas_{s,d}gemm`, sgemm NN 16³ 135 → 100 (99), 16×24×16
/// 168 → 140 (158), 24³ 351 → 315 (402); NT 16³ 119 → 104 (95); dgemm NN 16³ 247 → 204
/// (200), NT 210 → 176 (184); and through `gemm_front` alone (the BLAS shortcut off in both
/// builds), sgemm NN 8×16×8 110 → 88 (81), 16³ 165 → 137 (122), 24³ 398 → 364 (389), NT 16³
/// 167 → 137 (111), dgemm NN 8×16×8 96 → 75 (71), NT 16³ 237 → 211 (204). Session 22 had
/// measured dgemm 16³–32³ level through `gemm_ex`. A row of four is at most 32×48×256,
/// below the two-thread threshold (2^19 multiply-adds).
pub(crate) const ROW_TILES: usize = 4;

/// Runs C := alpha·op(A)·op(B) + beta·C as sup kernel calls, one per NR columns, when the
/// problem is one row of at most [`ROW_TILES`] tiles of the kernel (in the orientation sup
/// kernels prefer: C's columns contiguous, a row-stored C solved as Cᵀ = op(B)ᵀ·op(A)ᵀ, and
/// so is a short, wide C whose op(B) has contiguous rows) within its limits, and returns
/// true; returns false, having touched nothing, for any other problem.
#[inline(always)]
pub(crate) fn gemm_row_of_tiles<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
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
    let col_stored = c.row_stride() == 1;
    if col_stored && !short_and_wide_with_b_rows(kernel, c, a, b) {
        return row_of_tiles_oriented(sup, alpha, a, b, beta, c);
    }
    if (col_stored || c.col_stride() == 1)
        && let Some((bt, at)) = A::swapped(a, b)
    {
        return row_of_tiles_oriented(sup, alpha, &bt, &at, beta, &mut c.rb().t());
    }
    // A mixed pair cannot trade places: as it is.
    col_stored && row_of_tiles_oriented(sup, alpha, a, b, beta, c)
}

/// [`gemm_row_of_tiles`] once C is column-stored.
#[inline(always)]
fn row_of_tiles_oriented<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    let (mr, nr) = sup.tile();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    if m > mr || n > nr * ROW_TILES || k > ONE_TILE_MAX_K {
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
    if !sup.suits(m, n, k, Some(a_col_stride)) {
        return false;
    }
    if a_in_place && !b.is_conj() {
        // SAFETY: A has unit row stride and no pending conjugation, B none either; the row
        // of tiles is the whole problem, at most MR tall.
        unsafe { run_tiles(sup, alpha, a, b, beta, c) };
        return true;
    }
    row_of_tiles_from_copies(sup, alpha, a, b, beta, c)
}

/// [`row_of_tiles_oriented`] with A copied (unless the kernel reads it in place) and B copied
/// (if conjugated) onto the stack (`stack_copies.rs`); false, having touched nothing, when
/// they do not fit. Out of line, so that the usual call does not carry the buffer in its
/// stack frame.
#[inline(never)]
fn row_of_tiles_from_copies<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    with_stack_copies(a, b, |a, b| {
        // SAFETY: A now has unit row stride and no pending conjugation (the copy's, or as
        // it was), B no pending conjugation; the row of tiles is the whole problem, at most
        // MR tall (checked by the caller).
        unsafe { run_tiles(sup, alpha, a, b, beta, c) };
    })
    .is_ok()
}

/// The sup kernel on the whole problem, NR columns per call, each tile as the sup path calls
/// it (`run_sup_tile`: a tile of one or two rows with B's rows contiguous as its transpose).
///
/// # Safety
/// C has at most MR rows of `sup` (and at least one column); A has unit row stride and no
/// pending conjugation, B no pending conjugation; all three are checked views (C exclusively
/// borrowed) of a problem whose shapes agree.
#[inline(always)]
unsafe fn run_tiles<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    let (mr, nr) = sup.tile();
    let ukr = sup.ukr();
    let n = c.ncols();
    let mut args = SupUkrArgs {
        m: c.nrows(),
        n: n.min(nr),
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
    let mut j = 0;
    loop {
        // SAFETY: the kernel's contract (a tile within MR×NR: columns j..j + args.n of C and
        // B, in their views; A with unit row stride, B any strides, C exclusively borrowed)
        // is the caller's promise; the context's kernel runs on this CPU.
        unsafe { run_sup_tile(ukr, mr, &args) };
        j += nr;
        if j >= n {
            break;
        }
        // Column j of B and C: still inside their views (j < n), so the offsets stay in
        // their allocations.
        args.n = nr.min(n - j);
        args.b = args.b.wrapping_offset(nr as isize * args.cs_b);
        args.c = args.c.wrapping_offset(nr as isize * args.cs_c);
    }
}
