//! The tall-A path: C with few columns (n ≤ the kernel's NT) and an A past L2, such as
//! 1500×8×1500 or 4096×16×4096. The packed path reads A once, by packing, and computes only
//! after each block is packed, so the caches and the FMA units take turns; here the kernel
//! reads A in place, so they work at the same time. Two ways, by A's size
//! (`TallLimits`):
//! * **In cache** (A of 4–12 MiB on haswell, 4–24 MiB on skx): k blocks of the kernel's KC
//!   (256) columns, one kernel call per row tile, prefetching a few tiles ahead (below).
//! * **From memory** (past `max_a_bytes`, where the configuration sets `from_memory_kc`:
//!   haswell and skx, 8): there the KC block's reads (one line from each of 256 columns in
//!   turn) outrun what the hardware prefetcher follows (about 2 GB/s on a Zen 3, session 38).
//!   Instead k blocks of a few columns, each read down all of a pass's rows (up to 4096) by
//!   one kernel call, are a few long streams, which the prefetcher follows; C's running
//!   sums stay in a tile-major scratch ([`from_memory_rows`]). C may have up to 2·NT
//!   columns here, in groups of NT. Without `from_memory_kc` such an A is packed.
//!
//! In cache:
//!
//! ```text
//! pack B → Bp  (k×W, row after row, W = 2, 4, 8, 16 or 24 ≥ n, columns past n zero: the kernel
//!               computes W columns)
//! team: each thread its own MR-aligned block of rows (one thread: all of them)
//!   pc: for each KC-deep k block
//!     ir: for each MR-tall row tile of the block
//!           tall kernel: C[ir.., :] := alpha·A[ir.., pc..]·Bp[pc..] + (beta on the first
//!                        block, else 1)·C[ir.., :], prefetching A[ir + d·MR + MR − 1, pc..]
//!                        (the last row d tiles ahead; the next block's first rows once past
//!                        the bottom)
//! ```
//!
//! Why k blocks: A's columns are a page or more apart, so one tile's pass touches a page per
//! k step; a block of KC columns keeps those pages in the TLB while all m tiles go down it,
//! and keeps Bp's block (KC×W) in L1. C (m×n) is updated once per k block. The k blocks
//! depend on k alone, so a team's threads sum every element as one thread does. Chosen by
//! `gemm_unsuited_to_sup`, A column-stored and not conjugated, B not conjugated, when the
//! kernel's [`TallKernel::suits`] and the sup path did not take the problem; on any number
//! of threads (until session 32, one only: two threads then packed A, and dgemm 1000×4×1000
//! ran at 20 GFLOPS on two threads against 40 on one; a team of two now reaches 59–68).

use std::ops::Range;

use crate::cntx::{FROM_MEMORY_MAX_GROUPS, TallKernel};
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{TallUkrArgs, tall_packed_width};
use crate::l3::blocks::{run_on_blocks_of_c, run_on_row_blocks_with_scratch};
use crate::packbuf::PackBuf;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// C := alpha·A·B + beta·C through `tall` (A m×k with unit row stride, B k×n, C m×n, all
/// checked; neither A nor B conjugated; n ≤ NT, or ≤ 2·NT from memory: [`TallKernel::suits`])
/// on a team of `threads` (1: the calling thread alone), each on its own MR-aligned block of
/// C's rows (and A's): every thread goes down its rows over the same k blocks with the same
/// packed B, so each element of C is summed exactly as on one thread. Only the rows are
/// split: a thread with a share of the columns would still read all of A, the operand this
/// path streams.
/// B is packed whole, and the from-memory path's running sums checked out, before any thread
/// starts, so running out of memory leaves C untouched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_tall<A: GemmPair<B>, B: Element>(
    tall: &TallKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    threads: usize,
    pin: bool,
) -> Result<()> {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let (mr, nt) = tall.tile();
    let from_memory = tall.reads_from_memory(m, k);
    let max_n = if from_memory {
        FROM_MEMORY_MAX_GROUPS * nt
    } else {
        nt
    };
    assert!(a.row_stride() == 1 && !a.is_conj() && !b.is_conj() && n <= max_n);
    let widths: usize = column_groups(n, nt).map(|g| g.width).sum();
    // Checked: A and B may be zero-stride views of a k larger than any memory holds.
    let len = k.checked_mul(widths);
    let bytes = len.and_then(|len| len.checked_mul(size_of::<B>()));
    let (Some(len), Some(bytes)) = (len, bytes) else {
        let what = format!("gemm: the tall path's packed B ({k}×{widths}) does not fit in memory");
        return Err(Error::new(ErrorKind::OutOfMemory, what));
    };
    let mut buf = PackBuf::checkout(bytes)?;
    // Each thread's running sums: a pass of up to FROM_MEMORY_ROWS of its rows, all groups.
    let share = m.div_ceil(mr).div_ceil(threads) * mr;
    let sums_len = FROM_MEMORY_ROWS.next_multiple_of(mr).min(share) * widths;
    let mut sums_buf = match from_memory {
        true => Some(PackBuf::checkout(threads * sums_len * size_of::<A::Acc>())?),
        false => None,
    };
    let bp = buf.as_mut_slice::<B>(len);
    let mut rest = &mut bp[..];
    for group in column_groups(n, nt) {
        let (bp_group, later) = rest.split_at_mut(k * group.width);
        pack_b_rows(
            &b.submatrix(0, group.cols.start, k, group.cols.len()),
            group.width,
            bp_group,
        );
        rest = later;
    }
    let bp = &*bp;
    let Some(sums_buf) = sums_buf.as_mut() else {
        return run_on_blocks_of_c(c, (threads, 1), (mr, 1), pin, |rows, _, c_block| {
            let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
            tall_rows(tall, alpha, &a_rows, bp, widths, beta, c_block);
        });
    };
    let sums = sums_buf.as_mut_slice::<A::Acc>(threads * sums_len);
    let scratch = (sums, sums_len);
    run_on_row_blocks_with_scratch(c, threads, mr, pin, scratch, |rows, c_block, sums| {
        let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
        from_memory_rows(tall, alpha, &a_rows, bp, beta, c_block, sums);
    })
}

/// Rows of C per pass of the from-memory path: its running sums (rows × the packed widths,
/// 384 KiB for f64 and 12 columns) stay in L2 beside the k block of A going through.
const FROM_MEMORY_ROWS: usize = 4096;

/// One group of C's columns on the tall path: `cols`, computed `width` wide
/// ([`tall_packed_width`]).
struct ColumnGroup {
    cols: Range<usize>,
    width: usize,
}

/// C's n columns in groups of at most NT, in order (one group for n ≤ NT).
fn column_groups(n: usize, nt: usize) -> impl Iterator<Item = ColumnGroup> {
    (0..n).step_by(nt.max(1)).map(move |j0| {
        let cols = j0..n.min(j0 + nt);
        let width = tall_packed_width(cols.len(), nt);
        ColumnGroup { cols, width }
    })
}

/// The from-memory tall path on one block of rows ([`TallLimits::from_memory_kc`](crate::cntx::TallLimits::from_memory_kc)): for each
/// pass of up to `sums.len() / W` rows (W the groups' widths together), for each narrow k
/// block, for each column group, one kernel call goes down all the pass's tiles, adding to
/// the running sums in `sums` (tile-major: tile t's column j at `t·MR·w + j·MR`, group after
/// group). Then C := alpha·sums + beta·C for the pass (C not read when beta = 0). The k
/// blocks depend on k alone and the passes on the rows only, so every element is summed
/// the same way on any team.
///
/// Why: a k block of a few columns read down all the rows is a few long streams, which the
/// hardware prefetcher follows (on a Zen 3, dgemm 4096×{2–16}×4096 1.09–1.99× the packing
/// it replaced, 0.97–1.71× OpenBLAS; the KC = 256 blocks of [`tall_rows`] ran at 2 GB/s), and the sums in a contiguous scratch
/// keep C's columns, 32 KiB apart in 4096×n, from fighting A's over the same cache sets.
fn from_memory_rows<A: GemmPair<B>, B: Element>(
    tall: &TallKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    bp: &[B],
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    sums: &mut [A::Acc],
) {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let (mr, nt) = tall.tile();
    let widths: usize = column_groups(n, nt).map(|g| g.width).sum();
    assert!(a.nrows() == m && bp.len() == k * widths);
    let pass_rows = sums.len() / widths / mr * mr;
    assert!(pass_rows > 0);
    let kc = tall.limits().from_memory_kc;
    let ukr = tall.ukr();
    let cs_a = a.col_stride();
    // A(i, p) for any i, p: only ever dereferenced by the kernel inside A.
    let a_at = |i: usize, p: usize| a.as_ptr().wrapping_offset(i as isize + p as isize * cs_a);
    let one = A::Acc::one();
    for i0 in (0..m).step_by(pass_rows) {
        let rows = pass_rows.min(m - i0);
        let tile_rows = rows.next_multiple_of(mr);
        let pass_sums = &mut sums[..tile_rows * widths];
        pass_sums.fill(A::Acc::zero());
        for pc in (0..k).step_by(kc) {
            let kb = kc.min(k - pc);
            let (mut b_at, mut sums_at) = (0, 0);
            for group in column_groups(n, nt) {
                let w = group.width;
                let args = TallUkrArgs {
                    m: rows,
                    n: w,
                    k: kb,
                    alpha: one,
                    a: a_at(i0, pc),
                    cs_a,
                    b: bp[b_at + pc * w..].as_ptr(),
                    beta: one,
                    c: pass_sums[sums_at..].as_mut_ptr(),
                    rs_c: 1,
                    cs_c: mr as isize,
                    c_tile_stride: (mr * w) as isize,
                    // The few streams need no software prefetch, so the kernel's is aimed
                    // at the rows being read: the C microbenchmark of this loop read 0.99–1.00
                    // with such a prefetch against none (docs/Performance.md).
                    a_prefetch: a_at(i0, pc),
                };
                // SAFETY: rows i0..i0 + rows (≤ m) of A's columns pc..pc + kb (≤ k) are in
                // the checked view with unit row stride; `bp` holds this group's k·w packed
                // elements from b_at, kb rows of them from pc; the group's sums hold
                // tile_rows·w elements from sums_at, tile by tile (stride MR·w), each tile
                // w columns of MR; the context's kernel runs on this CPU.
                unsafe { ukr(&args) };
                b_at += k * w;
                sums_at += tile_rows * w;
            }
        }
        let mut sums_at = 0;
        for group in column_groups(n, nt) {
            let w = group.width;
            for (jj, j) in group.cols.enumerate() {
                for r in 0..rows {
                    let x = pass_sums[sums_at + r / mr * mr * w + jj * mr + r % mr];
                    let p = c.ptr_at(i0 + r, j);
                    // SAFETY: row i0 + r < m and column j < n of the exclusively borrowed C.
                    unsafe {
                        *p = if beta.is_zero() {
                            alpha * x
                        } else {
                            alpha * x + beta * *p
                        };
                    }
                }
            }
            sums_at += tile_rows * w;
        }
    }
}

/// The k blocks and row tiles of one block of rows (A's and C's), with `bp` all of B packed
/// `width` to a row.
fn tall_rows<A: GemmPair<B>, B: Element>(
    tall: &TallKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    bp: &[B],
    width: usize,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    assert!(a.nrows() == m && bp.len() == k * width);
    let mr = tall.tile().0;
    // The same k blocks for any block of rows: they depend on k alone.
    let kc = tall.kc().min(k);
    let ukr = tall.ukr();
    let cs_a = a.col_stride();
    let tiles = m.div_ceil(mr);
    let ahead = tall.prefetch_tiles();
    for pc in (0..k).step_by(kc) {
        let kb = kc.min(k - pc);
        let bp_block = &bp[pc * width..(pc + kb) * width];
        // Later blocks add to what the first one wrote.
        let beta_block = if pc == 0 { beta } else { A::Acc::one() };
        // A(i, p) for any i, p: only ever dereferenced by the kernel inside A.
        let a_at = |i: usize, p: usize| a.as_ptr().wrapping_offset(i as isize + p as isize * cs_a);
        for t in 0..tiles {
            let i = t * mr;
            // The last row of the tile `ahead` tiles on, continuing into the next k block's
            // first rows (past the last block it points past A: a harmless prefetch). The
            // last row, not the first: where A's columns do not start on a cache line, a
            // tile spans two lines, and the next tile's first row lies in the line this one
            // already loads (dgemm 1500×5×1500, 12 000-byte columns: 11.5–16.8 GFLOPS aiming at
            // the first row, 31 at the last; docs/Performance.md).
            let row = i + ahead * mr + mr - 1;
            let a_prefetch = if row < m {
                a_at(row, pc)
            } else {
                a_at(row - m, pc + kb)
            };
            let args = TallUkrArgs {
                m: mr.min(m - i),
                n,
                k: kb,
                alpha,
                a: a_at(i, pc),
                cs_a,
                b: bp_block.as_ptr(),
                beta: beta_block,
                c: c.ptr_at(i, 0),
                rs_c: c.row_stride(),
                cs_c: c.col_stride(),
                c_tile_stride: mr as isize * c.row_stride(),
                a_prefetch,
            };
            // SAFETY: rows i..i + args.m (< m) of A's columns pc..pc + kb (< k) are in the
            // checked view with unit row stride; `bp_block` holds kb·W packed elements; rows
            // i..i + args.m and columns 0..n (≤ NT) of C are in the exclusively borrowed
            // view; the context's kernel runs on this CPU.
            unsafe { ukr(&args) };
        }
    }
}

/// All of `b` (k×n, n ≤ `width`) into `dst` row after row, `width` to a row, the columns
/// past n zero: `dst[p·width + j] = b[p, j]`.
fn pack_b_rows<B: Element>(b: &MatRef<B>, width: usize, dst: &mut [B]) {
    let n = b.ncols();
    assert!(dst.len() == b.nrows() * width && n <= width);
    for (p, row) in dst.chunks_exact_mut(width).enumerate() {
        for (j, d) in row.iter_mut().enumerate() {
            *d = if j < n {
                // SAFETY: p < k rows and j < n columns: inside the view.
                unsafe { b.read_stored(p, j) }
            } else {
                B::zero()
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cntx::{TallKernel, TallLimits};
    use crate::kernels::{TallUkrArgs, tall_packed_width};

    /// Never called: `suits` only looks at the registration.
    unsafe fn unused(_: &TallUkrArgs<f64, f64>) {
        unreachable!()
    }

    /// A kernel registration for `suits` and friends to look at, its kernel never called.
    fn never_called(tile: (usize, usize), limits: TallLimits) -> TallKernel<f64, f64> {
        // SAFETY: the kernel is never called.
        unsafe { TallKernel::new("test", unused, tile, 256, 2, limits) }
    }

    #[test]
    fn packed_width_is_the_power_of_two_that_holds_n() {
        let widths: Vec<usize> = (1..=17).map(|n| tall_packed_width(n, 16)).collect();
        let mut expected = vec![2, 2, 4, 4, 8, 8, 8, 8];
        expected.extend([16; 9]);
        assert_eq!(widths, expected);
        // Never past the kernel's NT: skx's 24 takes 17–24 columns.
        assert_eq!(tall_packed_width(5, 4), 4);
        assert_eq!(tall_packed_width(17, 24), 24);
        assert_eq!(tall_packed_width(24, 24), 24);
        assert_eq!(tall_packed_width(16, 24), 16);
    }

    #[test]
    fn from_memory_past_the_maximum() {
        let limits = TallLimits {
            min_a_bytes: 8 * 1000,
            max_a_bytes: 8 * 100_000,
            from_memory_kc: 8,
        };
        let tall = never_called((8, 16), limits);
        // At the maximum: KC blocks, up to NT columns.
        assert!(tall.suits(1000, 16, 100) && !tall.reads_from_memory(1000, 100));
        assert!(!tall.suits(1000, 17, 100));
        // One column of A past it: from memory, up to 2·NT columns.
        assert!(tall.reads_from_memory(1000, 101));
        assert!(tall.suits(1000, 32, 101) && !tall.suits(1000, 33, 101));
        // Below the minimum, never; without a from-memory k block, never.
        assert!(!tall.reads_from_memory(999, 1) && !tall.suits(999, 1, 1));
        let packs = TallLimits {
            from_memory_kc: 0,
            ..limits
        };
        let tall = never_called((8, 16), packs);
        assert!(!tall.reads_from_memory(1000, 101) && !tall.suits(1000, 16, 101));
    }

    #[test]
    fn suits_at_its_boundaries() {
        let limits = TallLimits {
            min_a_bytes: 8 * 1000,
            max_a_bytes: 8 * 100_000,
            from_memory_kc: 0,
        };
        let tall = never_called((8, 16), limits);
        // A of exactly min_a_bytes (100·10·8) takes the path, one element less does not.
        assert!(tall.suits(100, 16, 10));
        assert!(!tall.suits(999, 16, 1));
        // n up to NT.
        assert!(tall.suits(100, 2, 10));
        assert!(!tall.suits(100, 17, 10));
        // A of exactly max_a_bytes (1000·100·8) too, one column more does not.
        assert!(tall.suits(1000, 16, 100));
        assert!(!tall.suits(1000, 16, 101));
        // No overflow for absurd shapes: they saturate past any maximum.
        assert!(!tall.suits(usize::MAX, 16, usize::MAX));
        let unbounded = TallLimits {
            max_a_bytes: usize::MAX,
            ..limits
        };
        let tall = never_called((8, 16), unbounded);
        assert!(tall.suits(usize::MAX, 16, usize::MAX));
    }
}
