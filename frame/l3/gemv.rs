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

use crate::cntx::{Blocksizes, Cntx};
use crate::error::Result;
use crate::kernels::{GEMV_COLUMNS_MAX, GemvColumnsUkr, GemvUkr, GemvUkrArgs};
use crate::l3::blocks::run_on_blocks_of_c;
use crate::l3::one_tile::MAX_WORK;
use crate::rntm::Rntm;
use crate::thread::plan::{Plan, SINGLE, SplitFirst, block_ways, plan};
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// C (m×n) := alpha·A (m×k)·B (k×n) + beta·C through `gemv`, one column of C at a time; operands
/// checked. One call for C with one column; for an outer product (k = 1), where C is nearly
/// all the traffic, writing it column by column, one stream, beats the tile kernels' MR×NR
/// tiles.
///
/// Inlined: out of line, its copy of A's two strides from the caller's freshly written view
/// (one 16-byte load of two 8-byte stores) stalled on store forwarding, about a fifth of a
/// 1×1×1 `cblas_dgemm` (`perf`, session 56).
#[inline(always)]
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
    // By blocks of rows, so that a group's columns of C stay in the L1 while the kernel
    // passes over A's columns (each block of A then comes from the L2 once per group): whole,
    // four f64 columns of 2048 rows (64 KiB) made dgemm 2048×16×64 run at 0.63 of OpenBLAS
    // (session 55).
    for_each_block(&args, a, b, c.ncols(), |block, first_row, first, n| {
        let group = GemvUkrArgs {
            y: c.ptr_at(first_row, first),
            ..block
        };
        // SAFETY: the block's rows of A (k columns) and the n columns of B from `first`
        // (`for_each_block`), and those rows of C's n columns (exclusively borrowed,
        // col_stride apart, distinct and apart from A and B: checked views) are valid; the
        // context's kernel runs on this CPU.
        unsafe { columns(&group, n, b.col_stride(), c.col_stride()) };
    });
    Ok(())
}

/// The rows of C one [`gemm_by_column_groups_buffered`] block computes: its buffer holds
/// [`GEMV_COLUMNS_MAX`] columns of them (16 KiB of f64), in the L1 beside the columns of A
/// the kernel streams. [`gemm_by_column_groups`] walks C in blocks of as many rows.
const BUFFERED_ROWS: usize = 512;

/// [`gemm_by_column_groups`] for a C whose columns are not contiguous (the rows of a short,
/// wide C, solved transposed), where the columns kernel would fall back to one strided gemv
/// per column: each block of [`BUFFERED_ROWS`] rows is computed into a contiguous buffer
/// (beta = 0), then added to C's block with beta. A is read once per group of columns, a
/// block of rows at a time.
pub(crate) fn gemm_by_column_groups_buffered<A: GemmPair<B>, B: Element>(
    columns: GemvColumnsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    // Zeroed although the kernel writes it with beta = 0 before it is read: safe code, and
    // the memset was 0.7 % of a dgemm NT 2×512×512 call in `perf` (session 36).
    let mut buffer = [<A::Acc as Element>::zero(); BUFFERED_ROWS * GEMV_COLUMNS_MAX];
    let args = first_column_args(alpha, a, b, <A::Acc as Element>::zero(), c);
    let strides = (c.row_stride(), c.col_stride());
    for_each_block(&args, a, b, c.ncols(), |block, first_row, first, n| {
        let group = GemvUkrArgs {
            y: buffer.as_mut_ptr(),
            inc_y: 1,
            ..block
        };
        // SAFETY: the block's rows of A (k columns) and the n columns of B from `first` lie
        // in checked views (`for_each_block`); the n columns of y (`block.m` elements each,
        // BUFFERED_ROWS apart) in the buffer, which overlaps nothing else; the context's
        // kernel runs on this CPU.
        unsafe { columns(&group, n, b.col_stride(), BUFFERED_ROWS as isize) };
        let c_block = (c.ptr_at(first_row, first), block.m, n);
        // SAFETY: rows `first_row..first_row + block.m` and columns `first..first + n` lie in
        // the exclusively borrowed, checked view C, whose strides these are.
        unsafe {
            if beta.is_zero() {
                write_back::<_, false>(&buffer, c_block, strides, beta);
            } else {
                write_back::<_, true>(&buffer, c_block, strides, beta);
            }
        }
    });
    Ok(())
}

/// Calls `f` for each block of [`BUFFERED_ROWS`] rows (of A's m) by [`GEMV_COLUMNS_MAX`]
/// columns (of C's `ncols`), rows outermost, with `args` narrowed to the block's rows of A
/// and first column of B (y left as it was), the block's first row, its first column, and
/// its column count.
fn for_each_block<A: GemmPair<B>, B: Element>(
    args: &GemvUkrArgs<A, B>,
    a: &MatRef<A>,
    b: &MatRef<B>,
    ncols: usize,
    mut f: impl FnMut(GemvUkrArgs<A, B>, usize, usize, usize),
) {
    let m = a.nrows();
    for first_row in (0..m).step_by(BUFFERED_ROWS) {
        let rows = BUFFERED_ROWS.min(m - first_row);
        for first in (0..ncols).step_by(GEMV_COLUMNS_MAX) {
            let n = GEMV_COLUMNS_MAX.min(ncols - first);
            let block = GemvUkrArgs {
                m: rows,
                a: a.as_ptr()
                    .wrapping_offset(first_row as isize * a.row_stride()),
                x: b.as_ptr().wrapping_offset(first as isize * b.col_stride()),
                ..*args
            };
            f(block, first_row, first, n);
        }
    }
}

/// C's block (at most [`BUFFERED_ROWS`] × [`GEMV_COLUMNS_MAX`], `rows`×`n` from `at` with
/// strides `(rs, cs)`) := computed + beta·C where `ADDS_TO_C`, else := computed (C not
/// read), column j of `buffer` (BUFFERED_ROWS apart) holding its column j. Row by row: C here is the transpose of a
/// short, wide C, so a row is contiguous where its columns are a whole (short) column
/// apart; column after column, with a multiplication per element, this was a third of a
/// dgemm NT 4×1000×16 call (`perf`, session 54).
///
/// # Safety
/// The block's elements are valid for reads and writes, and nothing else refers to them.
#[inline(always)]
unsafe fn write_back<T: Scalar, const ADDS_TO_C: bool>(
    buffer: &[T],
    (at, rows, n): (*mut T, usize, usize),
    (rs, cs): (isize, isize),
    beta: T,
) {
    let mut row = at;
    for i in 0..rows {
        let mut element = row;
        for j in 0..n {
            let value = buffer[j * BUFFERED_ROWS + i];
            // SAFETY: `element` is (i, j) of the block (i < rows, j < n), valid by the
            // caller's contract.
            unsafe {
                *element = if ADDS_TO_C {
                    value + beta * *element
                } else {
                    value
                }
            };
            element = element.wrapping_offset(cs);
        }
        row = row.wrapping_offset(rs);
    }
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
/// threads each take their own block of C, split as `split_first` says (`block_ways`: the
/// columns first for outer products and tall C of a few columns, as measured for these
/// paths; the larger operand's dimension for a short, wide C solved transposed, so that
/// each thread streams its own rows of the large A); `None` where such a team cannot follow
/// the plan (it splits k).
pub(crate) fn gemm_by_columns_on_plan<A: GemmPair<B>, B: Element>(
    per_block: impl Fn(&MatRef<A>, &MatRef<B>, &mut MatMut<A::Acc>) -> Result<()> + Sync,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
    plan: &Plan,
    split_first: SplitFirst,
) -> Option<Result<()>> {
    if plan.ways == SINGLE {
        return Some(per_block(a, b, c));
    }
    let shape = (c.nrows(), c.ncols());
    let ways = block_ways(rntm, plan.ways, shape, (1, 1), split_first)?;
    Some(gemm_by_columns_team(per_block, a, b, c, ways, plan.pin))
}

/// `per_block` over all of C: on the calling thread, or, given `threads` and at least
/// [`MAX_WORK`] multiply-adds, as [`gemm_by_columns_on_plan`] runs it with C's columns split
/// first (on the calling thread alone where such a team cannot follow the plan). For the
/// paths among `gemm_front`'s shortcuts, which come before its thread plan (`short_k.rs`,
/// `narrow.rs`). Inlined into them: as a call of its own it cost a dgemm NN 40×3×4 about
/// 2.5 ns (4 %, session 60).
#[inline(always)]
pub(crate) fn gemm_by_columns_if_worth_threads<A: GemmPair<B>, B: Element>(
    threads: Option<(&Cntx, &Rntm)>,
    blocks: Blocksizes,
    per_block: impl Fn(&MatRef<A>, &MatRef<B>, &mut MatMut<A::Acc>) -> Result<()> + Sync,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let work = m.saturating_mul(n).saturating_mul(k);
    let Some((cntx, rntm)) = threads.filter(|_| work >= MAX_WORK) else {
        return per_block(a, b, c);
    };
    let plan = plan(rntm, (m, n, k), blocks, cntx.thread_prefs());
    gemm_by_columns_on_plan(&per_block, a, b, c, rntm, &plan, SplitFirst::Columns)
        .unwrap_or_else(|| per_block(a, b, c))
}

/// A gemv-path function on a team of `ways.0 × ways.1` threads (see
/// [`block_ways`]), each on its own block of C (`blocks.rs`),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Expected, Op, Rng, Storage, TestMatrix, Values};
    use crate::gks::supported_contexts;
    use crate::types::Scalar;

    /// Every context's columns kernel through [`gemm_by_column_groups`], on every row count
    /// up to past eight vectors of 16 lanes and 1 to 5 columns (a group of four and one
    /// more): k either side of the one-pass form's 32 and of the blocks form's 8, x's strides
    /// of B column- and row-stored, A column-stored and general (one gemv per column there),
    /// C column-stored and general, beta 0 (NaN in C), 1 and other; nothing written outside
    /// C.
    fn kernel_matches_on_every_row_count<T: GemmPair<T, Acc = T> + Scalar>() {
        let mut rng = Rng::new(61);
        let values = Values::SmallIntegers;
        for cntx in supported_contexts() {
            let Some((columns, _)) = T::kernel(cntx).gemv_columns() else {
                continue;
            };
            let mut case = 0;
            for m in 1..=130 {
                for k in [1, 2, 5, 8, 9, 16, 31, 32, 33, 41] {
                    for (n, st_a, op_b, st_c) in [
                        (2, Storage::Col, Op::N, Storage::Col),
                        (3, Storage::Col, Op::T, Storage::Col),
                        (4, Storage::Col, Op::N, Storage::Gen),
                        (5, Storage::Col, Op::T, Storage::Col),
                        (1, Storage::Col, Op::N, Storage::Col),
                        (3, Storage::Gen, Op::N, Storage::Col),
                    ] {
                        case += 1;
                        let (br, bc) = op_b.stored_shape(k, n);
                        let a = TestMatrix::<T>::random(&mut rng, values, m, k, st_a);
                        let b = TestMatrix::<T>::random(&mut rng, values, br, bc, Storage::Col);
                        let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                        let (av, bv) = (a.view(), op_b.apply(b.view()));
                        let alpha = [T::one(), rng.value(values)][case % 2];
                        let beta = [T::zero(), T::one(), rng.value(values)][case % 3];
                        let expected = Expected::new(alpha, &av, &bv, beta, &mut c);
                        let done = gemm_by_column_groups(
                            columns,
                            alpha,
                            &av,
                            &bv,
                            beta,
                            &mut c.view_mut(),
                        );
                        let what = format!(
                            "{}: {m}×{n}×{k} A {st_a:?} op(B) {op_b:?} C {st_c:?}",
                            cntx.name()
                        );
                        assert!(done.is_ok(), "{what}: failed");
                        let got = expected.compare(&c, k);
                        assert_eq!(got.residual, 0.0, "{what}: wrong values");
                        assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
                    }
                }
            }
        }
    }

    #[test]
    fn columns_kernel_matches_on_every_row_count_f32() {
        kernel_matches_on_every_row_count::<f32>();
    }

    #[test]
    fn columns_kernel_matches_on_every_row_count_f64() {
        kernel_matches_on_every_row_count::<f64>();
    }
}
