//! The degenerate shapes: C with one column is a gemv, y := alpha·op(A)·x + beta·y, and C with
//! one row is the same problem transposed (Cᵀ = op(B)ᵀ·op(A)ᵀ). These are bound by memory,
//! not arithmetic: packing A would double the traffic, and a tile kernel would waste most of
//! its lanes, so they go to the context's gemv kernel, which streams A once (contract:
//! `GemvUkr` in `kernels/mod.rs`). Chosen by `gemm_front` for every dtype with a gemv
//! kernel; runs on the calling thread. The same kernel also writes outer products (k = 1),
//! one column of C per call ([`gemm_by_columns`], chosen in `gemm_oriented`; with threads,
//! [`gemm_by_columns_on_plan`] gives each its own block of C), and a C of a few columns whose A
//! is not worth packing, through the columns kernel where the context has one
//! ([`gemm_by_column_groups`], `GemvColumnsUkr`).

use crate::error::Result;
use crate::kernels::{GEMV_COLUMNS_MAX, GemvColumnsUkr, GemvUkr, GemvUkrArgs};
use crate::l3::blocks::run_on_blocks_of_c;
use crate::rntm::Rntm;
use crate::thread::plan::{Plan, SINGLE, SplitFirst, block_ways};
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// C (m×n) := alpha·A (m×k)·B (k×n) + beta·C through `gemv`, one column of C at a time; operands
/// checked. One call for C with one column; for an outer product (k = 1), where C is nearly
/// all the traffic, writing it column by column, one stream, beats the tile kernels' MR×NR
/// tiles.
pub(crate) fn gemm_by_columns<A: GemmPair<B>, B: Element>(
    gemv: GemvUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let mut args = first_column_args(alpha, a, b, beta, c);
    for j in 0..c.ncols() {
        args.x = b.as_ptr().wrapping_offset(j as isize * b.col_stride());
        args.y = c.ptr_at(0, j);
        // SAFETY: A (m×k), x (column j of B, k elements) and y (column j of C, m elements)
        // are in checked views, C exclusively borrowed; the context's kernel runs on this
        // CPU.
        unsafe { gemv(&args) };
    }
    Ok(())
}

/// C := alpha·A·B + beta·C for a C of a few columns, up to [`GEMV_COLUMNS_MAX`] at a time
/// through a columns kernel, which reads A once per group where it can (C with few columns
/// and an A not worth packing, `gemm.rs`).
pub(crate) fn gemm_by_column_groups<A: GemmPair<B>, B: Element>(
    columns: GemvColumnsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let args = first_column_args(alpha, a, b, beta, c);
    for first in (0..c.ncols()).step_by(GEMV_COLUMNS_MAX) {
        let n = GEMV_COLUMNS_MAX.min(c.ncols() - first);
        let group = GemvUkrArgs {
            x: b.as_ptr().wrapping_offset(first as isize * b.col_stride()),
            y: c.ptr_at(0, first),
            ..args
        };
        // SAFETY: A (m×k), the n columns of B from `first` (k elements each, col_stride
        // apart) and of C (m elements each, exclusively borrowed, col_stride apart, distinct
        // and apart from A and B: checked views) are valid; the context's kernel runs on
        // this CPU.
        unsafe { columns(&group, n, b.col_stride(), c.col_stride()) };
    }
    Ok(())
}

/// The gemv arguments for y := alpha·A·x + beta·y with x and y the first columns of B and C.
fn first_column_args<A: GemmPair<B>, B: Element>(
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> GemvUkrArgs<A, B> {
    GemvUkrArgs {
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
    }
}

/// A gemv-path function run as `plan` says: on the calling thread, or on a team whose
/// threads each take their own block of C, C's columns split first (`block_ways` with
/// `SplitFirst::Columns`, as measured for these paths); `None` where such a team cannot
/// follow the plan (it splits k).
pub(crate) fn gemm_by_columns_on_plan<A: GemmPair<B>, B: Element>(
    per_block: impl Fn(&MatRef<A>, &MatRef<B>, &mut MatMut<A::Acc>) -> Result<()> + Sync,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
    plan: &Plan,
) -> Option<Result<()>> {
    if plan.ways == SINGLE {
        return Some(per_block(a, b, c));
    }
    let shape = (c.nrows(), c.ncols());
    let ways = block_ways(rntm, plan.ways, shape, (1, 1), SplitFirst::Columns)?;
    Some(gemm_by_columns_team(per_block, a, b, c, ways, plan.pin))
}

/// A gemv-path function on a team of `ways.0 × ways.1` threads (see
/// [`block_ways`](crate::thread::plan::block_ways)), each on its own block of C (`blocks.rs`),
/// so the threads never wait for each other: `per_block` ([`gemm_by_columns`] or
/// [`gemm_by_column_groups`] with the scalars bound) gets each block's rows of A, columns of B
/// and block of C. Every element of C is computed as one thread would compute it.
fn gemm_by_columns_team<A: GemmPair<B>, B: Element>(
    per_block: impl Fn(&MatRef<A>, &MatRef<B>, &mut MatMut<A::Acc>) -> Result<()> + Sync,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    ways: (usize, usize),
    pin: bool,
) -> Result<()> {
    let k = a.ncols();
    // Rows are split (only where C has fewer columns than threads) in whole cache lines.
    let row_align = 64 / size_of::<A::Acc>().clamp(1, 64);
    run_on_blocks_of_c(c, ways, (row_align, 1), pin, |rows, cols, c_block| {
        let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
        let b_cols = b.submatrix(0, cols.start, k, cols.len());
        // Cannot fail: the views are checked and the kernels report nothing.
        let _ = per_block(&a_rows, &b_cols, c_block);
    })
}
