//! Problems of a few sup tiles: up to [`MAX_TILES`] of them, at most [`ROW_TILES`] side by
//! side (n ≤ ROW_TILES·NR), short k and fewer than [`MAX_WORK`] multiply-adds:
//! the sup kernel called once per tile, straight from `gemm_front` or from the BLAS entry
//! points (`frame/blas/one_tile.rs`), before the thread plan and the path choice.
//!
//! For such a call the fixed cost ahead of the kernel is most of the time: a 4×4×4 dgemm
//! took 40 ns through the usual path (plan, path choice, `gemm_sup`'s k blocks and tile loop)
//! and 27 ns through this one (docs/Performance.md, session 22). An A the kernel cannot read
//! in place (row-stored, general strides, or conjugated) and a conjugated B are copied onto
//! the stack first when they fit (`stack_copies.rs`, as the sup path does) in a problem of one
//! row of tiles; when they do not, and past one row, the problem takes the usual path.
//!
//! What it computes is what `gemm_sup` computes for the same problem: the same tiles, one k
//! block, in the orientation `gemm_front` would choose (a short, wide C with op(B)'s rows
//! contiguous transposed, and some TT problems, `sup_solves_transposed`).

use crate::cntx::{GemmKernel, SupKernel};
use crate::kernels::SupUkrArgs;
use crate::l3::gemm::sup_solves_transposed;
use crate::l3::stack_copies::with_stack_copies;
use crate::l3::sup::{run_sup_tile, sup_suits_c};
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// The deepest problem taken. A row of tiles reads every element of A and B once per tile,
/// from L1, so splitting its k never pays (nor for a few rows: A is at most 128 rows of
/// sgemm, 64 of dgemm, 128 KiB at k = 256, well inside `sup_blocks`' k block); past it the
/// kernel's time hides the few ns the shortcut saves.
pub(crate) const ONE_TILE_MAX_K: usize = 256;

/// The most tiles side by side a problem may have to be taken (n ≤ 6·NR: 72 columns on skx,
/// 36 on haswell). Past one tile the usual path's checks and dispatch cost 20–45 ns a call.
/// Measured in session 25, ns, one tile → a row of four (OpenBLAS), alternated in one process
/// on one pinned vCPU (skx): through `cblas_{s,d}gemm`, sgemm NN 16³ 135 → 100 (99), 16×24×16
/// 168 → 140 (158), 24³ 351 → 315 (402); NT 16³ 119 → 104 (95); dgemm NN 16³ 247 → 204
/// (200), NT 210 → 176 (184); and through `gemm_front` alone (the BLAS shortcut off in both
/// builds), sgemm NN 8×16×8 110 → 88 (81), 16³ 165 → 137 (122), 24³ 398 → 364 (389), NT 16³
/// 167 → 137 (111), dgemm NN 8×16×8 96 → 75 (71), NT 16³ 237 → 211 (204). Session 22 had
/// measured dgemm 16³–32³ level through `gemm_ex`. From four to six in session 35, with
/// up to four rows of tiles (GFLOPS ratio six / four, alternated in one process): sgemm NN and
/// NT 56³ 1.010 / 1.008, 64³ 1.007 / 1.008, 32×64×64 1.015 / 1.013, 64×72×32 1.009 / 1.012;
/// dgemm 56³ 1.015 / 1.006, 64³ 1.007 / 1.004, but NN 32×64×64 0.986 and 64×72×32 0.987
/// (NT 1.009, 1.010).
pub(crate) const ROW_TILES: usize = 6;

/// The most tiles taken: rows of tiles × tiles side by side, so four rows of six, or up to
/// 24 MR-tall rows of one tile (a tall C of a few columns, such as a short, wide problem
/// solved transposed). They are the tiles the sup path calls, in its order (column panels
/// outer, rows inner); A is read in place past one row of tiles (a copy of more than one
/// row's A does not fit the stack buffer, `stack_copies.rs`), and with k ≤ 256 and fewer
/// than [`MAX_WORK`] multiply-adds A is within one of `sup_blocks`' k blocks, as on the usual
/// path. Measured in session 35 through `cblas_dgemm` (GFLOPS, one row → up to four rows of
/// six; OpenBLAS): skx NN 24³ 50.6 → 53.7 (52.2), 32³ 52.4 → 54.6 (54.6), NT 24³ 49.9 → 52.6
/// (53.2), 32³ 50.4 → 54.7 (55.3); forced haswell NN 16³ 34.6 → 44.6, 24³ 49.0 → 52.2,
/// sgemm NN 32³ 96.8 → 102.8; 40³–64³ +0.2–2 %. Then from four rows to any 24 tiles (new /
/// four rows, `cblas_{s,d}gemm` NT, transposed): dgemm 2×96×96 1.045, 2×256×256 1.033,
/// 128×12×64 1.028, 3×200×200 1.003, sgemm 3×200×200 1.031, 200×8×100 1.012, 2×96×96 0.990
/// (docs/Performance.md).
pub(crate) const MAX_TILES: usize = 24;

/// The most multiply-adds (m·n·k) taken, exclusive: below two threads' minimum work on every
/// configuration (`ThreadPrefs::min_work_per_thread`, 2^18 on skx, haswell and generic), so
/// the usual path would run these problems on the calling thread too.
pub(crate) const MAX_WORK: usize = 1 << 19;

/// The most rows of tiles under a given number of tiles side by side (index 1 to
/// [`ROW_TILES`]): `MAX_TILES / tiles across`.
const ROWS_OF_TILES: [usize; ROW_TILES + 1] = {
    let mut rows = [0; ROW_TILES + 1];
    let mut across = 1;
    while across <= ROW_TILES {
        rows[across] = MAX_TILES / across;
        across += 1;
    }
    rows
};

/// Whether an m×n×k problem is within the shortcut's bounds for a kernel tile of `mr`×`nr`
/// (the tiles, k and the work; whether A is read in place is the caller's test).
///
/// Without a division: the tile sizes are the context's, not constants, so `div_ceil` was
/// two `div` instructions per orientation tested, about a fifth of the BLAS entry's own time
/// on a 16×12×16 sgemm (`perf`, session 36).
#[inline(always)]
pub(crate) fn few_tiles(m: usize, n: usize, k: usize, (mr, nr): (usize, usize)) -> bool {
    if n > ROW_TILES * nr || k > ONE_TILE_MAX_K {
        return false;
    }
    // Tiles side by side, 1 to ROW_TILES, counted rather than divided.
    let mut across = 1;
    while across * nr < n {
        across += 1;
    }
    // ceil(m / mr) ≤ ROWS_OF_TILES[across] ⇔ m ≤ mr · ROWS_OF_TILES[across]; that bounds m,
    // so the product below cannot overflow.
    m <= mr * ROWS_OF_TILES[across] && m * n * k < MAX_WORK
}

/// Runs C := alpha·op(A)·op(B) + beta·C as sup kernel calls, one per tile, when the problem
/// is within [`few_tiles`] of the kernel (in the orientation sup kernels prefer: C's columns
/// contiguous, a row-stored C solved as Cᵀ = op(B)ᵀ·op(A)ᵀ, and so is a short, wide C whose
/// op(B) has contiguous rows) and its limits, with A read in place past one row of tiles,
/// and returns true; returns false, having touched nothing, for any other problem.
#[inline(always)]
pub(crate) fn gemm_rows_of_tiles<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
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
    if col_stored && !sup_solves_transposed(kernel, c, a, b) {
        return rows_of_tiles_oriented(sup, alpha, a, b, beta, c);
    }
    if (col_stored || c.col_stride() == 1)
        && let Some((bt, at)) = A::swapped(a, b)
    {
        return rows_of_tiles_oriented(sup, alpha, &bt, &at, beta, &mut c.rb().t());
    }
    // A mixed pair cannot trade places: as it is.
    col_stored && rows_of_tiles_oriented(sup, alpha, a, b, beta, c)
}

/// [`gemm_rows_of_tiles`] once C is column-stored.
#[inline(always)]
fn rows_of_tiles_oriented<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> bool {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    if !few_tiles(m, n, k, sup.tile()) {
        return false;
    }
    let a_in_place = a.row_stride() == 1 && !a.is_conj();
    if m > sup.tile().0 && !a_in_place {
        return false;
    }
    // The limits bind here too (a copy of A has column stride m): a context whose limits
    // refuse A (a test's, to reach the packed paths at small sizes) never takes a sup path.
    let a_col_stride = if a_in_place {
        a.col_stride().unsigned_abs()
    } else {
        m
    };
    if !sup_suits_c(sup, c, k, Some(a_col_stride)) {
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

/// [`rows_of_tiles_oriented`] with A copied (unless the kernel reads it in place) and B copied
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
        // it was), B no pending conjugation; the tiles are the whole problem, within
        // `few_tiles` (checked by the caller).
        unsafe { run_tiles(sup, alpha, a, b, beta, c) };
    })
    .is_ok()
}

/// The sup kernel on the whole problem, tile by tile in the sup path's order (NR-wide column
/// panels, MR-tall rows inside each), each tile as the sup path calls it (`run_sup_tile`: a
/// tile of one or two rows with B's rows contiguous as its transpose, and the rows past a
/// whole vector where the kernel's `TransposedRemainder` takes them).
///
/// # Safety
/// C has at least one row and one column; A has unit row stride and no pending conjugation, B
/// no pending conjugation; all three are checked views (C exclusively borrowed) of a problem
/// whose shapes agree.
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
    let (m, n) = (c.nrows(), c.ncols());
    let mut args = SupUkrArgs {
        m: m.min(mr),
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
        let mut i = 0;
        loop {
            args.m = mr.min(m - i);
            // Row i of A (unit row stride) and element (i, j) of C: inside their views.
            args.a = a.as_ptr().wrapping_add(i);
            args.c = c.ptr_at(i, j);
            // SAFETY: the kernel's contract (a tile within MR×NR: rows i.. and columns j..
            // of C, in its view; A with unit row stride, B any strides, C exclusively
            // borrowed) is the caller's promise; the context's kernel runs on this CPU.
            unsafe { run_sup_tile(sup, &args) };
            i += mr;
            if i >= m {
                break;
            }
        }
        j += nr;
        if j >= n {
            break;
        }
        // Column j of B: still inside its view (j < n), so the offset stays in its
        // allocation.
        args.n = nr.min(n - j);
        args.b = args.b.wrapping_offset(nr as isize * args.cs_b);
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_TILES, MAX_WORK, ONE_TILE_MAX_K, ROW_TILES, few_tiles};
    use crate::gks::supported_contexts;
    use crate::types::{c32, c64};

    /// The division-free test says what the bounds say with divisions: at most `MAX_TILES`
    /// tiles, `ROW_TILES` of them side by side, k and the work bounded. Every m and n to one
    /// past the largest taken, for every tile of every configuration and a few odd ones.
    #[test]
    fn few_tiles_counts_tiles_as_the_divisions_do() {
        let mut tiles: Vec<(usize, usize)> = supported_contexts()
            .iter()
            .flat_map(|cntx| {
                [
                    cntx.kernel::<f32, f32>().sup().map(|sup| sup.tile()),
                    cntx.kernel::<f64, f64>().sup().map(|sup| sup.tile()),
                    cntx.kernel::<c32, c32>().sup().map(|sup| sup.tile()),
                    cntx.kernel::<c64, c64>().sup().map(|sup| sup.tile()),
                ]
            })
            .flatten()
            .collect();
        tiles.extend([(1, 1), (3, 5), (7, 2), (32, 12)]);
        let mut taken = 0;
        for (mr, nr) in tiles {
            for m in 1..=MAX_TILES * mr + 1 {
                for n in 1..=ROW_TILES * nr + 1 {
                    for k in [1, 2, ONE_TILE_MAX_K, ONE_TILE_MAX_K + 1] {
                        let expected = n <= ROW_TILES * nr
                            && m.div_ceil(mr) * n.div_ceil(nr) <= MAX_TILES
                            && k <= ONE_TILE_MAX_K
                            && m * n * k < MAX_WORK;
                        assert_eq!(
                            few_tiles(m, n, k, (mr, nr)),
                            expected,
                            "{m}×{n}×{k}, tile {mr}×{nr}"
                        );
                        taken += usize::from(expected);
                    }
                }
            }
        }
        assert!(taken > 0);
    }

    /// The shortcut runs on the calling thread; the usual path would too, for these sizes.
    #[test]
    fn the_shortcuts_work_stays_below_every_two_thread_threshold() {
        for cntx in supported_contexts() {
            let min_work = cntx.thread_prefs().min_work_per_thread.max(1);
            assert!(
                MAX_WORK <= 2 * min_work,
                "{}: two threads from {} multiply-adds",
                cntx.name(),
                2 * min_work
            );
        }
    }
}
