//! The gemm loop nest, read top to bottom (Goto's algorithm, BLIS's five loops), run by
//! every thread of the call's team with its own share of each loop:
//!
//! ```text
//! jc: for each NC-wide column block of this thread's jc range     (loop 5)
//!   pc: for each KC-deep slice of this thread's pc (k) range       (loop 4)
//!         pack B[pc.., jc..] → Bp  (KC×NC, NR-wide panels; shared by the B team)
//!     ic: for each MC-tall row block of this thread's ic range     (loop 3)
//!           pack A[ic.., pc..] → Ap  (MC×KC, MR-tall panels; shared by the A team)
//!           macrokernel: jr (NR) → ir (MR) → microkernel           (loops 2, 1)
//!   with more than one k group: wait for all, then C += each group's partial product
//! ```
//!
//! **The thread-control tree.** A call's `Ways` (jc, pc, ic, jr, ir) number its threads
//! `tid = (((jc_id·pc + pc_id)·ic + ic_id)·jr + jr_id)·ir + ir_id`. Each loop splits its
//! range among its ways with `partition` (aligned to NR for jc, MR for ic, so every thread's
//! tiles are the tiles one thread would use and results do not depend on the split). Threads
//! with the same (jc_id, pc_id) form a *B team* (ic·jr·ir threads): they pack one B block
//! together, each a share of its panels, and share it. Threads with the same (jc_id, pc_id,
//! ic_id) form an *A team* (jr·ir threads) around one packed A block. Each team has a barrier:
//! after packing (nobody reads a half-packed block) and before repacking (nobody is still
//! reading the old one). The k groups (pc > 1) are the part BLIS forbids: group 0 updates C
//! with beta, every other group writes its own partial product with beta = 0, and after a
//! barrier of the whole team each thread adds the partials into its share of C, in group order
//! (deterministic, though not bit-identical to one thread, as the sum is regrouped).
//!
//! One thread with at most MC rows uses B blocks of an A block's size (`nest_blocks`): they
//! are read once, right after packing, so they are kept L2-sized rather than L3-sized; and
//! where op(B)'s rows are contiguous, such a problem takes k slices a quarter of KC deep and
//! B blocks four times as wide, so that packing reads B's rows in longer runs. Where that
//! one A block is not small (`slices_outer`), the thread swaps loops 5 and 4: each k slice
//! of A is packed once and kept in cache for every column block
//! ([`one_thread_slices_outer`]); every tile of C sees the same updates in the same order,
//! so the result is the same, bit for bit.
//!
//! All memory (packed blocks for every team, partial products, the barriers) is taken before
//! any thread starts, so running out of memory is reported with C untouched.
//!
//! Called by the API (`frame/api.rs`) after the arguments were checked. [`gemm_front`]
//! settles the cases that need no loop nest (C with one row or column goes to the gemv kernel,
//! a short, wide C with op(B)'s columns contiguous to the dots kernel, `frame/l3/dots.rs`, a
//! row of sup tiles straight to its kernel), orients the problem to the kernel's preferred C
//! storage, plans the threads (`frame/thread/plan.rs`), and sends:
//! * problems with a compact A down the unpacked sup path (each thread its own block of C),
//!   and larger single-threaded ones whose B reads well in place down the same kernels with
//!   only A packed (both `frame/l3/sup.rs`);
//! * C of at most NT columns (24 on skx) with a large column-stored A to `frame/l3/tall.rs`
//!   (teams split its rows);
//! * a tall C of a few columns whose A's columns are too far apart for the sup kernels to the
//!   gemv columns kernel (four columns at a time), and outer products (k = 1) column by
//!   column to the gemv kernel (both `frame/l3/gemv.rs`, each thread its own block of C).
//!
//! Docs: `docs/KernelsHowTo.md`, `docs/Multithreading.md`.

use std::cmp::Ordering;
use std::ops::Range;

use crate::cntx::{Blocksizes, Cntx, GemmKernel, SupKernel};
use crate::error::Result;
use crate::kernels::{GEMV_COLUMNS_MAX, GemvColumnsUkr};
use crate::l3::dots::gemm_dots;
use crate::l3::gemv::{
    gemm_by_column_groups, gemm_by_column_groups_buffered, gemm_by_columns, gemm_by_columns_on_plan,
};
use crate::l3::macrokernel::macrokernel;
use crate::l3::narrow::gemm_narrow;
use crate::l3::one_tile::gemm_rows_of_tiles;
use crate::l3::raw::{RawBuf, RawMat};
use crate::l3::short_k::gemm_short_k;
use crate::l3::sup::{
    PACK_A_ONLY_MAX_THREADS, TRANSPOSED_MIN_K, gemm_sup, gemm_sup_a_by_blocks, gemm_sup_packed_a,
    gemm_sup_team, packs_only_a, splits_k_over_large_c, sup_suits_c, sup_takes_b,
};
use crate::l3::tall::gemm_tall;
use crate::packbuf::PackBuf;
use crate::packm::{pack_a_for, pack_b_for};
use crate::rntm::{Rntm, Ways};
use crate::thread::barrier::{BarrierSet, Poisoned};
use crate::thread::partition::{largest_part, partition};
use crate::thread::plan::{Plan, SINGLE, SplitFirst, block_ways, plan};
use crate::thread::pool::run_team;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// C := alpha·op(A)·op(B) + beta·C for checked operands, where alpha is the product of the
/// scalars A and B carry and beta is C's.
pub(crate) fn gemm_front<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
) -> Result<()> {
    let alpha = a.scale() * b.scale();
    let beta = c.beta();
    if c.nrows() == 0 || c.ncols() == 0 {
        return Ok(());
    }
    // BLAS: with alpha = 0 or k = 0 the product is absent, and A and B are never read.
    if alpha.is_zero() || a.ncols() == 0 {
        scale_c(beta, c);
        return Ok(());
    }
    let kernel = A::kernel(cntx);
    // One column or one row: a gemv, streamed once instead of packed (frame/l3/gemv.rs).
    if let Some(gemv) = kernel.gemv() {
        if c.ncols() == 1 {
            return gemm_by_columns(gemv, alpha, a, b, beta, c);
        }
        if c.nrows() == 1
            && let Some((bt, at)) = A::swapped(a, b)
        {
            return gemm_by_columns(gemv, alpha, &bt, &at, beta, &mut c.rb().t());
        }
    }
    if let Some(result) = gemm_shortcuts(Some((cntx, rntm)), kernel, alpha, a, b, beta, c) {
        return result;
    }
    // Cᵀ = op(B)ᵀ·op(A)ᵀ: when C's storage is the opposite of what the kernel writes
    // fastest, solve the transposed problem instead, so the kernel sees its favourite layout
    // (same-type pairs only: a mixed pair's kernel takes its operands in one order).
    let c_is_row_stored = c.col_stride().unsigned_abs() < c.row_stride().unsigned_abs();
    let c_is_col_stored = c.row_stride().unsigned_abs() < c.col_stride().unsigned_abs();
    let transpose = if kernel.prefers_rows() {
        c_is_col_stored
    } else {
        c_is_row_stored || sup_solves_transposed(kernel, c, a, b)
    };
    // Swapped only when used, and each orientation passed on by reference: moving the views
    // through an `Option` of a tuple cost a store-forwarding stall on every call (perf).
    if transpose && let Some((bt, at)) = A::swapped(a, b) {
        return gemm_oriented(cntx, kernel, alpha, &bt, &at, beta, &mut c.rb().t(), rntm);
    }
    gemm_oriented(cntx, kernel, alpha, a, b, beta, c, rntm)
}

/// The paths a problem takes before the thread plan and the orientation, in this order: a
/// short, wide C whose op(B) has contiguous columns (or its transpose) as dot products
/// (`frame/l3/dots.rs`), a tall C of a few columns at short k through the columns kernel
/// (`frame/l3/narrow.rs`), a product a few k steps deep through the short-k kernel
/// (`frame/l3/short_k.rs`), then a few rows of a few sup tiles straight to the sup kernel
/// (`frame/l3/one_tile.rs`). Returns the result of the one that took the problem, or `None`,
/// having touched nothing. Shared by [`gemm_front`] and the BLAS entry points' shortcut
/// (`frame/blas/one_tile.rs`), so that both take the same calls the same way; `threads` as
/// for `gemm_dots` (`None`: the calling thread).
#[inline(always)]
pub(crate) fn gemm_shortcuts<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    if let Some(result) = gemm_dots(threads, kernel, alpha, a, b, beta, c) {
        return Some(result);
    }
    if let Some(result) = gemm_narrow(threads, kernel, alpha, a, b, beta, c) {
        return Some(result);
    }
    if let Some(result) = gemm_short_k(threads, kernel, alpha, a, b, beta, c) {
        return Some(result);
    }
    gemm_rows_of_tiles(kernel, alpha, a, b, beta, c).then_some(Ok(()))
}

/// The longest columns of C, in bytes, that [`short_and_wide_with_b_rows`] solves
/// transposed: dgemm m ≤ 6, sgemm m ≤ 12. Until session 29 it was 32 (less than a 256-bit
/// vector: dgemm m ≤ 3, sgemm m ≤ 7), on the reasoning that a fuller vector wastes little.
/// But as it is, such a C's tile is one (masked) vector tall and 12 columns wide: 13 loads
/// per 12 FMAs, B's rows a whole row stride apart at every k step. Measured through
/// `cblas_{s,d}gemm` NT and TT (GFLOPS, transposed against as it is, OpenBLAS): dgemm
/// 4×256×256 NT 52.0 / 34.7 (55.9), TT 51.7 / 33.5 (58.0), 5×96×96 NT 47.2 / 35.3, TT
/// 47.3 / 32.6, 6×256×256 NT 48.7 / 40.6, TT 53.4 / 41.9; sgemm 10×96×96 NT 86.6 / 70.4, TT
/// 86.5 / 65.7, 12×256×256 NT 103.8 / 87.2, TT 103.6 / 85.2, 8×256×256 NT 101.7 / 93.4.
/// Past it, no longer worth it: dgemm m = 7 (NT 0.95, TT 1.10), m = 8 (0.82–0.95), sgemm
/// m = 13 (0.90–0.97). The k from which they go: [`NT_SHORT_COLUMN_MIN_K`],
/// [`WIDE_COLUMN_MIN_K`], [`EXACT_VECTOR_MIN_K`]. With op(A)'s rows contiguous (TT) the
/// limit is [`MAX_TRANSPOSED_COLUMN_BYTES_A_ROWS`].
const MAX_TRANSPOSED_COLUMN_BYTES: usize = 52;

/// [`MAX_TRANSPOSED_COLUMN_BYTES`] where op(A)'s rows are contiguous (TT): dgemm m ≤ 7,
/// sgemm m ≤ 14. As it is, such an A is first copied onto the stack by columns (element by
/// element), which the transposed problem avoids: it reads op(A)'s rows in place as its B.
/// Since session 30 (row-stored C written by rows in the sup kernels, `sup_real.rs`),
/// transposed against as it is, through `cblas_{s,d}gemm` TT: sgemm 13×96×96 1.06, 14×64×48
/// 1.10, dgemm 7×96×96 1.19, 7×40×32 1.06; not for a whole 512-bit vector or more: sgemm
/// 15×48×32 0.90, 16×96×96 0.92, 16×256×256 0.95, dgemm 8×96×96 0.98, 8×256×256 0.99.
/// Past it, columns that end in a partial vector go transposed up to the configuration's
/// `SupLimits::max_transposed_partial_column_bytes` (since session 34, whose row-stored
/// epilogue in registers read sgemm 15×48×32 1.08 transposed).
const MAX_TRANSPOSED_COLUMN_BYTES_A_ROWS: usize = 60;

/// The shortest k for which a short, wide C with op(A)'s columns contiguous (NT) goes
/// transposed, where its columns are of at most 32 bytes and not a whole vector of the
/// kernel's ([`EXACT_VECTOR_MIN_K`]): k = 1 is an outer product, decided before. It was
/// `sup::TRANSPOSED_MIN_K` (32, measured on single tiles of two rows) until session 55, whose
/// sweep (skx, one thread, two alternated runs, transposed against as it is, geometric means
/// over m and n = 13–1000) found every k from 2 to 24 gaining: sgemm m = 2–7 1.40–1.47×
/// (2×300×16 3.0×, 4×300×16 2.27×), dgemm m = 2–3 1.20–1.29× (3×300×8 1.70×), and dgemm
/// m = 4 (32 bytes, half of skx's vector) 1.15–2.9×; the least 0.99. With haswell's kernels
/// forced on the same machine: sgemm m = 2 1.75×, 5 2.48×, dgemm m = 2–3 1.31–1.38×
/// (k = 2–16), none under 0.99.
const NT_SHORT_COLUMN_MIN_K: usize = 2;

/// The longest columns of C, in bytes, that [`NT_SHORT_COLUMN_MIN_K`] applies to (and the
/// bound of complex's limits, [`COMPLEX_WIDE_COLUMN_MIN_K`]): a 256-bit vector.
const SHORT_COLUMN_BYTES: usize = 32;

/// [`NT_SHORT_COLUMN_MIN_K`] for columns of 33 to [`MAX_TRANSPOSED_COLUMN_BYTES`] bytes that
/// are not a whole vector of the kernel's. It was 40 until session 55 (64 until session
/// 30), the partial-vector rule (`SupLimits::nt_partial_column_min_k`) taking most such C
/// from k = 32 since session 54. Session 55, transposed against as it is, k = 2–16, n =
/// 16–1000 (skx): sgemm m = 9 and 10 1.0–1.57× (9×300×16 1.57×), m = 12 1.04–1.36× from
/// k = 4 but 12×48×2 0.91; dgemm m = 5 1.09–1.64×, m = 6 1.04–1.46× (6×48×2 1.00); forced
/// haswell sgemm m = 10 1.37×, 12 1.22×, dgemm m = 5 2.05×, 6 1.65× (geometric means, none
/// under 1.0).
const WIDE_COLUMN_MIN_K: usize = 4;

/// [`WIDE_COLUMN_MIN_K`] for cgemm and zgemm, whose limits are those the real types had
/// before session 55 (k from `sup::TRANSPOSED_MIN_K` under 32 bytes, from
/// [`EXACT_VECTOR_MIN_K`] at 32): the real types' lower k lost there (transposed against as
/// it is: zgemm NT 2×16×2–16 0.71–0.81, 3×48×4 0.83, cgemm 4×16×2–8 0.80–0.86, though cgemm
/// 2×48×k gained 1.7–1.9×).
const COMPLEX_WIDE_COLUMN_MIN_K: usize = 40;

/// A column of C that exactly fills a vector of the kernel's (`SupKernel::tile`'s MR / 2
/// elements: on haswell dgemm m = 4, sgemm m = 8; on skx none of the short, wide rule's), with
/// op(A)'s columns contiguous too (NN, NT), is computed as it is without masks, one full
/// vector load of A per k step; the transposed problem passes it only from this k.
/// Transposed against as it is: dgemm NT 4×96×96 0.96, 4×64×48 0.90, 4×256×256 1.54; sgemm
/// NT 8×96×96 0.93 (haswell 0.88), 8×64×48 0.78 (0.79), 8×256×256 1.30 (0.99). With session
/// 30's row transposes it still depends on n, not only k: sgemm NT 8×64×64 1.03, 8×96×96
/// 1.06, but 8×24×64 0.88, 8×48×48 0.86, dgemm 4×96×96 1.06, but 4×24×64 0.89, 4×48×48
/// 0.89; so the limit stays. In session 55, with haswell's kernels forced on a Zen 4, sgemm
/// 8×n×2–16 still lost transposed (0.64–0.97), while dgemm 4×n gained (1.06–1.8×). On skx
/// these columns are half a vector, and gained from k = 2 ([`NT_SHORT_COLUMN_MIN_K`]).
/// With op(A) = Aᵀ (TT) the transposed problem is taken from [`TT_TRANSPOSED_MIN_K`].
const EXACT_VECTOR_MIN_K: usize = 128;

/// The shortest k for which a short, wide TT C (op(A)'s rows contiguous, so that as it is
/// op(A) would be copied onto the stack first) goes transposed: `sup::TRANSPOSED_MIN_K` (32)
/// until session 54, whose sweep (dgemm m = 2–7, sgemm m = 2–14, n = 12–300, k = 1–31) found
/// TT with k under 32 at 0.33–0.44 of OpenBLAS at worst. Transposed against as it is (skx,
/// one thread, three alternated runs; geometric means over the 16 shapes of each k): dgemm
/// k = 6 1.48×, 8 1.49×, 12 1.35×, 16–31 1.33–1.38×; sgemm 6 1.59×, 8 1.67×, 12 1.56×,
/// 16–31 1.56–1.64×; the least 0.95 (dgemm 7×300×6, sgemm 14×48×6). k = 1 is an outer
/// product, decided before. Forced haswell on the same machine, with k from 2 for every m:
/// 2.24× over k = 2–24 (the least dgemm 7×105×2, 0.84).
const TT_TRANSPOSED_MIN_K: usize = 6;

/// [`TT_TRANSPOSED_MIN_K`] for C's columns of at most [`TT_SHORT_COLUMN_BYTES`]: k = 2–5
/// gained 1.49–1.53× in dgemm (geometric means; 2×105×3 2.55×, 5×105×2 1.97×) and 1.76–1.85×
/// in sgemm (2×105×4 3.17×, 9×48×2 1.25× the least), dgemm's least 0.99 at n = 300 with 2–3
/// rows, where the streaming kernel takes the problem either way. Longer columns lost there:
/// sgemm 14×300×2 0.81, 14×48×2 0.83 (at 2.2–2.3× OpenBLAS as they are), dgemm 7×300×4 0.93.
const TT_SHORT_COLUMN_MIN_K: usize = 2;

/// The longest column of C, in bytes, that [`TT_SHORT_COLUMN_MIN_K`] applies to (dgemm m ≤ 5,
/// sgemm m ≤ 10).
const TT_SHORT_COLUMN_BYTES: usize = 40;

/// Whether a column-stored C, for a kernel that prefers columns, is solved as Cᵀ =
/// op(B)ᵀ·op(A)ᵀ so that the sup kernel reads its operands in place: a short, wide C with
/// op(B)'s rows contiguous ([`short_and_wide_with_b_rows`]), or a TT problem by the
/// configuration's rule ([`tt_transposed_in_place`]). `gemm_front` and the rows-of-tiles
/// shortcut (`frame/l3/one_tile.rs`) both decide by it.
///
/// Inlined, with both rules' common test (op(B)'s rows contiguous) and each one's cheapest
/// ahead of their out-of-line bodies: every column-stored call asks, and as an out-of-line
/// call that saved seven registers this was 8 % of a 2³ `cblas_dgemm` NN (`perf`, session 36).
#[inline(always)]
pub(crate) fn sup_solves_transposed<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    c: &MatMut<A::Acc>,
    a: &MatRef<A>,
    b: &MatRef<B>,
) -> bool {
    let b_rows = b.col_stride() == 1 && b.row_stride() != 1;
    b_rows
        && ((c.ncols() > c.nrows() && short_and_wide_with_b_rows(kernel, c, a, b))
            || (a.row_stride() != 1 && tt_transposed_in_place(kernel, c, a, b)))
}

/// Whether a TT problem (op(A)'s and op(B)'s rows contiguous: Aᵀ and Bᵀ of column-major
/// arrays) of any shape goes transposed, by the kernel's `SupLimits::tt_transposed`: k at
/// least `min_k` and `min_k_per_column`·n (or C at least `min_rows_per_column` times as tall
/// as it is wide: skx's dgemm, since session 55), op(B) of at most `max_b_bytes`. (For the real
/// types on skx `min_k` is 1: unlike the short, wide rule's k limits then (k ≥ 32, which
/// guarded tiles of few rows), TT gained at 2³–28³ too, 1.23–1.55×.) As it is, op(A) is copied
/// (onto the stack, or into a pooled buffer through the packing transposes: 10 % of a dgemm
/// TT 32³ call in `perf`) and the tiles run as for NN; transposed, the kernel reads B as its
/// A and A as its column-stored B, in place, and writes Cᵀ by rows, transposing each tile in
/// registers (`sup_real.rs`, `write_rows`). The copy grows with m·k, the row epilogue with
/// m·n, hence the rule in k / n. Measured on skx in session 35, through `cblas_{s,d}gemm` TT,
/// GFLOPS as it is → transposed (OpenBLAS): dgemm 32³ 41.2 → 52.0 (51.6), 48³ 50.2 → 54.3
/// (54.1), 96³ 54.9 → 56.0 (56.6), 200³ 54.2 → 56.2 (49.6), 96×16×96 45.0 → 55.3 (56.3),
/// 8×96×96 48.2 → 51.4; sgemm 32³ 82.8 → 95.9 (99.4), 48³ 100.4 → 103.4, 96³ 108.5 → 107.9,
/// 96×16×96 83.6 → 106.9 (110.8), 64×64×300 104.8 → 112.2, 16×256×256 114.1 → 111.6; with
/// k < n it lost (sgemm 96×96×32 0.91, 500×500×64 0.94; dgemm level).
#[inline(never)]
fn tt_transposed_in_place<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    c: &MatMut<A::Acc>,
    a: &MatRef<A>,
    b: &MatRef<B>,
) -> bool {
    // The strides first (the caller's inline test has already turned most calls away).
    if a.row_stride() == 1 || b.col_stride() != 1 || b.row_stride() == 1 {
        return false;
    }
    let Some(sup) = kernel.sup() else {
        return false;
    };
    let Some(rule) = sup.limits().tt_transposed else {
        return false;
    };
    let (m, n, k) = (c.nrows(), c.ncols(), b.nrows());
    let b_bytes = n.saturating_mul(k).saturating_mul(size_of::<B>());
    b_bytes <= rule.max_b_bytes
        && k >= rule.min_k
        && (k >= n.saturating_mul(rule.min_k_per_column.max(1))
            || (rule.min_rows_per_column > 0 && m >= n.saturating_mul(rule.min_rows_per_column)))
        && sup.suits_row_stored_c(n, m, k, Some(b.row_stride().unsigned_abs()))
}

/// Whether C (column-stored, for a kernel that prefers columns) is so short that its columns
/// are under [`MAX_TRANSPOSED_COLUMN_BYTES`] (or [`MAX_TRANSPOSED_COLUMN_BYTES_A_ROWS`]) while
/// B's rows are contiguous (op(B) = Bᵀ of a column-major B), and the sup kernel would read
/// Cᵀ = op(B)ᵀ·op(A)ᵀ's A, op(B)ᵀ, in place.
/// Then the transposed problem has tall columns, computed with whole vectors; as it is, each
/// k step spends a vector (mostly masked off) per column of C, and the sup path's transposed
/// edges (`sup::run_sup_tile`) turn tiles of up to two rows only, each 12 columns tall.
/// Measured through `cblas_{s,d}gemm` NT (ns, as it is → transposed, OpenBLAS): sgemm
/// 2×96×96 906 → 602 (491), 3×96×96 1603 → 779 (921), 4×96×96 1571 → 950 (839), 2×256×4096
/// 130 → 87 µs (219); dgemm 2×96×96 1168 → 928 (771), 3×96×96 1616 → 1309 (1447). Where the
/// sup kernel would not read op(B)ᵀ in place (its columns too far apart, or too many bytes),
/// the transposed problem was packed and lost: dgemm 2×1000×1000 209 → 586 µs (since
/// session 36 a C of 2–4 rows is streamed there instead, [`short_and_wide_streaming_b`],
/// which this rule leaves alone); and with k below the limits ([`NT_SHORT_COLUMN_MIN_K`],
/// [`WIDE_COLUMN_MIN_K`], [`EXACT_VECTOR_MIN_K`], [`TT_TRANSPOSED_MIN_K`]) its set-up costs
/// more than it saves.
#[inline(never)]
fn short_and_wide_with_b_rows<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    c: &MatMut<A::Acc>,
    a: &MatRef<A>,
    b: &MatRef<B>,
) -> bool {
    // The streaming rule takes precedence (it is decided again in `gemm_oriented`, which
    // runs it; both ask the same predicates, so they cannot disagree). Where this rule
    // takes the problem, streaming defers to it for far-apart rows: it need not ask again.
    transposed_sup_takes_short_and_wide(kernel, c, a, b)
        && short_and_wide_streaming_b(kernel, c, b, || true).is_none()
}

/// [`short_and_wide_with_b_rows`] but for the streaming rule, which defers to this one where
/// op(B)'s rows lie far apart.
fn transposed_sup_takes_short_and_wide<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    c: &MatMut<A::Acc>,
    a: &MatRef<A>,
    b: &MatRef<B>,
) -> bool {
    let (m, n, k) = (c.nrows(), c.ncols(), b.nrows());
    // The shape and B's strides first (the caller's inline test has already turned most
    // calls away).
    if n <= m || b.col_stride() != 1 || b.row_stride() == 1 {
        return false;
    }
    let Some(sup) = kernel.sup() else {
        return false;
    };
    let column_bytes = m * size_of::<A::Acc>();
    let vector_bytes = sup.tile().0 / 2 * size_of::<A::Acc>();
    let a_rows = a.row_stride() != 1;
    let (max_bytes, min_k) = if a_rows {
        let min_k = if column_bytes <= TT_SHORT_COLUMN_BYTES {
            TT_SHORT_COLUMN_MIN_K
        } else {
            TT_TRANSPOSED_MIN_K
        };
        (MAX_TRANSPOSED_COLUMN_BYTES_A_ROWS, min_k)
    } else if A::Acc::IS_COMPLEX {
        let min_k = match column_bytes.cmp(&SHORT_COLUMN_BYTES) {
            Ordering::Less => TRANSPOSED_MIN_K,
            Ordering::Equal => EXACT_VECTOR_MIN_K,
            Ordering::Greater => COMPLEX_WIDE_COLUMN_MIN_K,
        };
        (MAX_TRANSPOSED_COLUMN_BYTES, min_k)
    } else if column_bytes == vector_bytes {
        (MAX_TRANSPOSED_COLUMN_BYTES, EXACT_VECTOR_MIN_K)
    } else if column_bytes <= SHORT_COLUMN_BYTES {
        (MAX_TRANSPOSED_COLUMN_BYTES, NT_SHORT_COLUMN_MIN_K)
    } else {
        (MAX_TRANSPOSED_COLUMN_BYTES, WIDE_COLUMN_MIN_K)
    };
    // Past the byte limit, TT still goes transposed where C's columns end in a partial
    // vector, up to the configuration's limit (`SupLimits::max_transposed_partial_column_bytes`).
    // Transposed against as it is, through `cblas_{s,d}gemm` TT (session 34, after the
    // row-stored epilogue went into registers, `sup_real.rs`): skx dgemm 10×64×64 1.43,
    // 12×48×40 1.16, 12×256×256 1.12, 30×256×256 1.09, sgemm 15×48×32 1.08, 20×64×48 1.35,
    // 33×64×40 1.15, 50×256×256 1.18; whole vectors stay as they are, where the transposed
    // problem was level at best and lost on haswell (skx sgemm 16×96×96 0.96, 32×96×96 0.98;
    // haswell dgemm 8×96×96 0.76, sgemm 32×64×64 0.80).
    // With op(A)'s columns contiguous (NT), such columns go transposed too where their last
    // vector is not a whole half-width one either, from the configuration's
    // `SupLimits::nt_partial_column_min_k` whatever their bytes and the k limits above.
    let limits = sup.limits();
    let partial = column_bytes <= limits.max_transposed_partial_column_bytes
        && m % (sup.tile().0 / 2).max(1) != 0;
    let takes = if a_rows {
        (column_bytes < max_bytes || partial) && k >= min_k
    } else {
        (column_bytes < max_bytes && k >= min_k)
            || (partial
                && m % (sup.tile().0 / 4).max(1) != 0
                && k >= limits.nt_partial_column_min_k)
    };
    takes && sup.suits_row_stored_c(n, m, k, Some(b.row_stride().unsigned_abs()))
}

/// The smallest op(B), in bytes, that [`short_and_wide_streaming_b`] streams when its rows
/// lie close enough for the sup kernels: half of the L2 here. Below it B stays in the L2 and
/// the tiles win (streamed against as it is, `cblas_{s,d}gemm` NT, one thread: sgemm
/// 2×64×64 0.56, 2×256×256 0.93, 4×256×256 0.85; dgemm 2×128×128 0.73, 4×256×256 0.98, but
/// 2×256×256 1.20, at exactly this size).
const STREAMED_B_MIN_BYTES: usize = 512 << 10;

/// The largest op(B), in bytes, that [`short_and_wide_streaming_b`] streams. Past it B
/// comes from memory, and four rows lost (dgemm 4×1500×1500 0.66–0.82, 4×2000×2000 0.71,
/// while 2×2000×2000 read 1.17 and sgemm 4×2000×2000 1.82).
const STREAMED_B_MAX_BYTES: usize = 16 << 20;

/// The columns kernel for a short, wide C (2 to `GEMV_COLUMNS_MAX` rows, real; far-apart
/// rows only where `transposed_sup_takes` says the transposed sup path does not) whose op(B)
/// has contiguous rows that the sup kernels read badly in place: further apart than they take
/// (`SupLimits::max_a_col_stride_bytes`), or past half of the L2 in all
/// ([`STREAMED_B_MIN_BYTES`]), up to [`STREAMED_B_MAX_BYTES`]; `None` for any other problem.
///
/// As it is (or transposed in place, [`short_and_wide_with_b_rows`]), the tiles walk op(B)
/// along k one row at a time, each row far from the last (on a page of its own from 4 KiB),
/// which the hardware prefetcher does not follow: B came at about 20 GB/s from L3. Solved as
/// Cᵀ = op(B)ᵀ·op(A)ᵀ, op(B)ᵀ has contiguous columns, and the columns kernel streams them
/// once per group of C's rows, with C's rows (Cᵀ's strided columns) through a buffer
/// (`gemv.rs`, `gemm_by_column_groups_buffered`). Measured in session 36 through
/// `cblas_{s,d}gemm` NT, one thread, GFLOPS before → streamed (OpenBLAS): dgemm 2×300×300
/// 28.6 → 42.7 (41.8), 2×384×384 23.8 → 39.7 (44.7), 2×512×512 10.4 → 35.1 (32.0), 3×512×512
/// 17.1 → 47.0 (24.4), 4×384×384 29.2 → 48.6 (56.0), 2×1000×1000 12.7 → 35.2 (7.9); sgemm
/// 2×384×384 51.1 → 96.9 (100.7), 2×512×512 42.5 → 88.2 (88.4), 3×512×512 58.4 → 91.4 (70.4),
/// 2×1000×1000 25.5 → 65.1 (19.7), 4×1500×1500 20.7 → 68.7 (26.2).
fn short_and_wide_streaming_b<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    c: &MatMut<A::Acc>,
    b: &MatRef<B>,
    transposed_sup_takes: impl FnOnce() -> bool,
) -> Option<GemvColumnsUkr<A, B>> {
    let (m, n, k) = (c.nrows(), c.ncols(), b.nrows());
    if A::Acc::IS_COMPLEX
        || !(2..=GEMV_COLUMNS_MAX).contains(&m)
        || n <= m
        || b.col_stride() != 1
        || b.row_stride() == 1
    {
        return None;
    }
    let sup = kernel.sup()?;
    let limits = sup.limits();
    let row_bytes = b.row_stride().unsigned_abs().saturating_mul(size_of::<B>());
    let b_bytes = n.saturating_mul(k).saturating_mul(size_of::<B>());
    let far_or_large = row_bytes > limits.max_a_col_stride_bytes || b_bytes >= STREAMED_B_MIN_BYTES;
    if !far_or_large || b_bytes > STREAMED_B_MAX_BYTES {
        return None;
    }
    // Far-apart rows that spread over the L1's sets the sup kernels read in place from
    // `SupLimits::far_a_min_n` columns of the transposed problem (4 on haswell): there they
    // beat streaming (forced haswell NT, GFLOPS as it is / streamed: sgemm 4×1000×1000 70.2 /
    // 48.9, 4×1000×300 74.1 / 47.4, dgemm 4×700×700 40.3 / 25.2). From
    // `SupLimits::far_a_min_n_c_rows` only where the problem then goes transposed: as it is,
    // 3–4 rows lost to streaming (skx sgemm NT 3×1000×16 0.51, 4×1000×16 0.63).
    if row_bytes > limits.max_a_col_stride_bytes
        && (sup.suits(n, m, k, Some(b.row_stride().unsigned_abs())) || transposed_sup_takes())
    {
        return None;
    }
    kernel.gemv_columns().map(|(columns, _)| columns)
}

/// The shortest columns of C (in elements) that an outer product (k = 1) writes column by
/// column rather than tile by tile. Measured on skx, one thread, beta = 0, GFLOPS tiles →
/// columns: sgemm 512×512×1 24.4 → 27.5, 500×2000×1 28.9 → 32.4, 1024×1024×1 8.9 → 30.1 (C's
/// columns 4 KiB apart: the tiles' column writes crowd one L1 set), 4096×4096×1 6.1 → 11.0;
/// dgemm 4.8 → 17.0, 12.4 → 17.1, 4.8 → 15.3, 3.5 → 4.3; cgemm and zgemm 1.4–2.1× faster at
/// the same shapes, before their axpy form folded beta in too (cgemm 1024×1024×1 then 33 → 62); but sgemm 64×4096×1 26.7 → 17.5 and 256×1024×1 35.1 → 32.3, where a gemv
/// call per short column costs more than it saves. k = 2…4 stays with the tiles: columns win
/// only where C's columns alias (sgemm 2048×2048×2 17 → 28) and lose elsewhere (1000×1000×4
/// 59 → 43, docs/Performance.md).
pub(crate) const OUTER_PRODUCT_MIN_M: usize = 384;

/// [`gemm_front`] once C is in the kernel's preferred orientation: plans the threads and
/// picks the path (sup, tall, packed A only, or the loop nest).
#[allow(clippy::too_many_arguments)]
fn gemm_oriented<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
) -> Result<()> {
    let shape = (c.nrows(), c.ncols(), a.ncols());
    let plan = plan(rntm, shape, kernel.blocksizes(), cntx.thread_prefs());
    // An outer product (k = 1): C column by column through the gemv kernel
    // (frame/l3/gemv.rs).
    if shape.2 == 1
        && shape.0 >= OUTER_PRODUCT_MIN_M
        && a.row_stride() == 1
        && !a.is_conj()
        && c.row_stride() == 1
        && let Some(gemv) = kernel.gemv()
    {
        // On one thread, or each thread on its own block of C (frame/l3/blocks.rs).
        let per_block = |a: &MatRef<A>, b: &MatRef<B>, c: &mut MatMut<A::Acc>| {
            gemm_by_columns(gemv, alpha, a, b, beta, c)
        };
        if let Some(done) =
            gemm_by_columns_on_plan(per_block, a, b, c, rntm, &plan, SplitFirst::Columns)
        {
            return done;
        }
    }
    // A short, wide C whose op(B) has contiguous rows that the sup kernels read badly in
    // place: solved transposed through the columns kernel, which streams op(B)ᵀ's columns
    // (`short_and_wide_streaming_b`); on a team each thread takes its own rows of op(B)ᵀ.
    if let Some(columns) = short_and_wide_streaming_b(kernel, c, b, || {
        transposed_sup_takes_short_and_wide(kernel, c, a, b)
    }) && let Some((bt, at)) = A::swapped(a, b)
    {
        let per_block = |bt: &MatRef<A>, at: &MatRef<B>, ct: &mut MatMut<A::Acc>| {
            gemm_by_column_groups_buffered(columns, alpha, bt, at, beta, ct)
        };
        let mut ct = c.rb().t();
        if let Some(done) = gemm_by_columns_on_plan(
            per_block,
            &bt,
            &at,
            &mut ct,
            rntm,
            &plan,
            SplitFirst::LargerOperand,
        ) {
            return done;
        }
    }
    // Problems whose A is compact enough skip packing (frame/l3/sup.rs), unless k would be
    // split over a large C and packing A is allowed.
    let a_col_stride = (a.row_stride() == 1).then(|| a.col_stride().unsigned_abs());
    if let Some(sup) = kernel.sup()
        && sup_suits_c(sup, c, shape.2, a_col_stride)
        && sup_takes_b(b)
        && !sup.packs_b_with_rows_contiguous(shape.0, plan.ways.total(), b)
        && !(splits_k_over_large_c(sup, shape.0, shape.1, shape.2)
            && may_pack_only_a(sup, b, kernel.blocksizes()))
    {
        let transposes = kernel.pack_transposes();
        // An op(A) the kernel cannot read in place, too large to copy whole: packed block
        // by block, each block read from L2 (`SupLimits::a_by_blocks_min_copy_bytes`).
        if plan.ways == SINGLE && sup.packs_a_by_blocks(a, b) {
            let blocks = kernel.blocksizes();
            return gemm_sup_a_by_blocks(sup, transposes.0, blocks, alpha, a, b, beta, c);
        }
        if plan.ways == SINGLE {
            return gemm_sup(sup, transposes, alpha, a, b, beta, c);
        }
        // With more threads, each takes its own block of C (frame/l3/blocks.rs).
        if let Some(ways) = block_ways(
            rntm,
            plan.ways,
            (shape.0, shape.1),
            sup.tile(),
            SplitFirst::LargerOperand,
        ) {
            return gemm_sup_team(sup, transposes, alpha, a, b, beta, c, ways, plan.pin);
        }
    }
    gemm_unsuited_to_sup(cntx, kernel, alpha, a, b, beta, c, rntm, &plan)
}

/// The rest of [`gemm_oriented`]: the tall, packed-A and loop-nest paths. Out of line, so that
/// the sup path's small calls do not pay for these paths' stack frame: merged back into
/// `gemm_oriented`, a dgemm 2×2×2 call took 36.3 instead of 32.7 ns and 8×8×8 50.5 instead of
/// 47 ns (the two builds run alternately, three rounds).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn gemm_unsuited_to_sup<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
    plan: &Plan,
) -> Result<()> {
    let shape = (c.nrows(), c.ncols(), a.ncols());
    // C with few columns and a large column-stored A: read A in place, prefetching ahead,
    // instead of packing it (frame/l3/tall.rs).
    if let Some(tall) = kernel.tall()
        && a.row_stride() == 1
        && !a.is_conj()
        && !b.is_conj()
        && tall.suits(shape.0, shape.1, shape.2)
    {
        // With more threads, each takes its own block of rows (tall.rs).
        return gemm_tall(tall, alpha, a, b, beta, c, plan.ways.total(), plan.pin);
    }
    // The same for cgemm and zgemm, through the real parts' tall kernel
    // (frame/l3/tall_complex.rs).
    if A::Acc::IS_COMPLEX
        && let Some(done) =
            A::gemm_tall_by_real_parts(cntx, alpha, a, b, beta, c, plan.ways.total(), plan.pin)
    {
        return done;
    }
    // C with few columns whose A's columns lie too far apart for the sup kernels (fewer
    // columns than `SupLimits::far_a_min_n`, or columns sharing L1 sets), though A is no
    // larger than the sup path takes (so it stays in cache): through the context's gemv
    // columns kernel, a pass over A in place per four columns, rather than packing A
    // (`GemvColumnsUkr`; the limit on columns is the configuration's, measured there). Real
    // dtypes only: the complex ones were not measured. A stays within the sup path's
    // `max_a_bytes` (4 MiB on skx and haswell): from memory, passes over A lost to skx's tall
    // kernel, which reads it once (one column at a time: dgemm 4000×4×4000 11.9 → 6.0
    // GFLOPS, 2000×4×2000 13.2 → 8.7, sgemm 4000×3×4000 18.9 → 13.7). On teams as well, so
    // that the result does not depend on the number of threads.
    let a_bytes = shape
        .0
        .saturating_mul(shape.2)
        .saturating_mul(size_of::<A>());
    if let Some((columns, max_n)) = kernel.gemv_columns()
        && shape.1 <= max_n
        && !A::Acc::IS_COMPLEX
        && a.row_stride() == 1
        && !a.is_conj()
        && c.row_stride() == 1
        && kernel.sup().is_some_and(|sup| {
            let limits = sup.limits();
            a.col_stride().unsigned_abs() * size_of::<A>() > limits.max_a_col_stride_bytes
                && a_bytes <= limits.max_a_bytes
        })
    {
        let per_block = |a: &MatRef<A>, b: &MatRef<B>, c: &mut MatMut<A::Acc>| {
            gemm_by_column_groups(columns, alpha, a, b, beta, c)
        };
        if let Some(done) =
            gemm_by_columns_on_plan(per_block, a, b, c, rntm, plan, SplitFirst::Columns)
        {
            return done;
        }
    }
    // Past the sup limits (or with a large C, above), one thread or two may still read B
    // in place, packing only A, where B's panels read well in place (frame/l3/sup.rs). Two
    // threads take a block of rows each, whatever ways they were asked for (as on the tall
    // path); the result is one thread's, bit for bit.
    let blocks = kernel.blocksizes();
    let threads = plan.ways.total();
    if let Some(sup) = kernel.sup()
        && threads <= PACK_A_ONLY_MAX_THREADS
        && !b.is_conj()
        && may_pack_only_a(sup, b, blocks)
    {
        let transpose_a = kernel.pack_transposes().0;
        return gemm_sup_packed_a(
            sup,
            transpose_a,
            blocks,
            alpha,
            a,
            b,
            beta,
            c,
            threads,
            plan.pin,
        );
    }
    gemm_nest(kernel, alpha, a, b, beta, c, plan)
}

/// Whether a problem may pack only A and read B in place with `sup`'s kernel.
fn may_pack_only_a<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    b: &MatRef<B>,
    blocks: Blocksizes,
) -> bool {
    packs_only_a(sup.limits().pack_a_only, b, sup.b_group(), blocks.kc)
}

/// C := beta·C, without reading C when beta = 0 (NaN in C becomes 0).
fn scale_c<T: Scalar>(beta: T, c: &mut MatMut<T>) {
    if beta.is_one() {
        return;
    }
    // Walk the smaller stride innermost.
    let c = if c.row_stride().unsigned_abs() <= c.col_stride().unsigned_abs() {
        c.rb()
    } else {
        c.rb().t()
    };
    for j in 0..c.ncols() {
        for i in 0..c.nrows() {
            let p = c.ptr_at(i, j);
            // SAFETY: (i, j) is in range of a checked, exclusively borrowed view.
            unsafe { *p = if beta.is_zero() { T::zero() } else { beta * *p } };
        }
    }
}

/// What every thread of a call shares: operands, scalars, buffers, barriers.
struct Shared<'a, A: Element, B: Element> {
    kernel: &'a GemmKernel<A, B>,
    /// The kernel's blocksizes with this call's KC and NC ([`nest_blocks`]), worked out once
    /// for all threads.
    blocks: Blocksizes,
    ways: Ways,
    alpha: A::Acc,
    beta: A::Acc,
    a: &'a MatRef<'a, A>,
    b: &'a MatRef<'a, B>,
    c: RawMat<A::Acc>,
    /// One packed B block per B team, `b_len` elements each.
    b_blocks: RawBuf<B>,
    b_len: usize,
    /// One packed A block per A team, `a_len` elements each.
    a_blocks: RawBuf<A>,
    a_len: usize,
    /// The partial products of k groups 1.., each m×n column-major.
    partials: RawBuf<A::Acc>,
    /// B teams' barriers, then A teams', then the whole team's.
    barriers: &'a BarrierSet,
    /// One thread, k slices outside the column blocks ([`slices_outer`]).
    slices_outer: bool,
}

/// Sets up the team's memory and runs [`gemm_thread`] on every thread of the plan.
fn gemm_nest<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    plan: &Plan,
) -> Result<()> {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let ways = plan.ways;
    let b_rows_contiguous = b.col_stride() == 1 && b.row_stride() != 1;
    let blocks = nest_blocks(
        kernel.blocksizes(),
        (m, k),
        b_rows_contiguous,
        kernel.k_group(),
        ways,
    );
    let Blocksizes { mr, nr, kc, mc, nc } = blocks;
    let b_teams = ways.jc * ways.pc;
    let a_teams = b_teams * ways.ic;

    // Blocks sized for this problem's largest share (a small call packs small blocks). The
    // sizes cannot overflow: each factor is bounded by a blocksize (`Cntx::validate` bounded
    // their products) or by C's extent (m·n elements of C exist in memory).
    // Packed panels are padded to the kernel's k group (1 for most kernels).
    // A slice or row block can be up to a third longer than KC or MC (`cache_blocks`).
    let k_share = kernel.padded_k(longest_block(kc).min(largest_part(k, ways.pc, 1)));
    let b_len = k_share * nc.min(largest_part(n, ways.jc, nr)).next_multiple_of(nr);
    let a_len = longest_block(mc)
        .min(largest_part(m, ways.ic, mr))
        .next_multiple_of(mr)
        * k_share;
    let partials_len = (ways.pc - 1) * m * n;
    let mut b_buf = PackBuf::checkout(b_teams * b_len * size_of::<B>())?;
    let mut a_buf = PackBuf::checkout(a_teams * a_len * size_of::<A>())?;
    let mut partial_buf = match partials_len {
        0 => None,
        len => Some(PackBuf::checkout(len * size_of::<A::Acc>())?),
    };
    let team_sizes = [
        (b_teams, ways.ic * ways.jr * ways.ir),
        (a_teams, ways.jr * ways.ir),
        (1, ways.total()),
    ];
    let barriers = BarrierSet::checkout(&team_sizes)?;

    let shared = Shared {
        kernel,
        blocks,
        ways,
        alpha,
        beta,
        a,
        b,
        c: c.raw(),
        b_blocks: RawBuf::new(b_buf.as_mut_ptr(b_teams * b_len), b_teams * b_len),
        b_len,
        a_blocks: RawBuf::new(a_buf.as_mut_ptr(a_teams * a_len), a_teams * a_len),
        a_len,
        partials: match &mut partial_buf {
            Some(buf) => RawBuf::new(buf.as_mut_ptr(partials_len), partials_len),
            None => RawBuf::new(std::ptr::NonNull::dangling().as_ptr(), 0),
        },
        barriers: &barriers,
        slices_outer: slices_outer(blocks, (m, n), b_rows_contiguous, ways),
    };
    // A thread that meets a poisoned barrier just stops; run_team reports the panic.
    let job = |tid: usize| drop(gemm_thread(&shared, tid));
    run_team(ways.total(), plan.pin, &job, &|| barriers.poison())
}

/// One thread's part of the loop nest (see the module docs for the tree and its barriers).
fn gemm_thread<A: GemmPair<B>, B: Element>(s: &Shared<A, B>, tid: usize) -> Result<(), Poisoned> {
    if s.slices_outer {
        one_thread_slices_outer(s);
        return Ok(());
    }
    let Blocksizes { mr, nr, kc, mc, nc } = s.blocks;
    let (m, n, k) = (s.c.m, s.c.n, s.a.ncols());
    let Ways {
        jc: jc_ways,
        pc: pc_ways,
        ic: ic_ways,
        jr: jr_ways,
        ir: ir_ways,
    } = s.ways;

    // Where this thread sits in the tree.
    let ir_id = tid % ir_ways;
    let jr_id = tid / ir_ways % jr_ways;
    let ic_id = tid / (ir_ways * jr_ways) % ic_ways;
    let pc_id = tid / (ir_ways * jr_ways * ic_ways) % pc_ways;
    let jc_id = tid / (ir_ways * jr_ways * ic_ways * pc_ways);
    let b_team = jc_id * pc_ways + pc_id;
    let a_team = b_team * ic_ways + ic_id;
    let (b_size, b_rank) = (
        ic_ways * jr_ways * ir_ways,
        tid % (ic_ways * jr_ways * ir_ways),
    );
    let (a_size, a_rank) = (jr_ways * ir_ways, tid % (jr_ways * ir_ways));
    let b_barrier = b_team;
    let a_barrier = jc_ways * pc_ways + a_team;
    let team_barrier = jc_ways * pc_ways * (1 + ic_ways);
    let b_block = s.b_blocks.part(b_team * s.b_len, s.b_len);
    let a_block = s.a_blocks.part(a_team * s.a_len, s.a_len);
    // The kernel's per-thread hardware state (AMX tiles), released when this returns.
    let _hw = s.kernel.enter_hw_context();

    // k group 0 updates C with beta; the others overwrite their own partial product.
    let (target, beta_group) = if pc_id == 0 {
        (s.c, s.beta)
    } else {
        let ptr = s.partials.part((pc_id - 1) * m * n, m * n).as_mut_ptr();
        (
            RawMat {
                ptr,
                m,
                n,
                rs: 1,
                cs: m as isize,
            },
            A::Acc::zero(),
        )
    };

    let jc_range = partition(n, jc_ways, jc_id, nr);
    let pc_range = partition(k, pc_ways, pc_id, 1);
    let ic_range = partition(m, ic_ways, ic_id, mr);
    let mut b_block_in_use = false;

    // Loop 5 (jc): NC-wide column blocks of this thread's share of C's columns.
    for jc in jc_range.clone().step_by(nc) {
        let nc_cur = nc.min(jc_range.end - jc);

        // Loop 4 (pc): KC-deep slices of this k group's range. Each slice adds into the same
        // C block, so beta scales it only on the group's first slice; later ones add (beta 1).
        for Range { start: pc, end } in cache_blocks(pc_range.clone(), kc) {
            let kc_cur = end - pc;
            let beta_pc = if pc == pc_range.start {
                beta_group
            } else {
                A::Acc::one()
            };

            // Pack B, each B-team member its share of the panels. Wait first until nobody
            // still reads the previous block, and after until the whole block is packed.
            if b_block_in_use {
                s.barriers.wait(b_barrier)?;
            }
            let b_panels = nc_cur.div_ceil(nr);
            let mine = partition(b_panels, b_size, b_rank, 1);
            // Packed depth: kc_cur padded to the kernel's k group.
            let kp = s.kernel.padded_k(kc_cur);
            let panel_len = kp * nr;
            // SAFETY: B-team members pack disjoint panel ranges of their team's block, and
            // no one reads it until the barrier below.
            let dst = unsafe { b_block.slice_mut(mine.start * panel_len..mine.end * panel_len) };
            let b_src = s.b.submatrix(pc, jc, kc_cur, nc_cur);
            pack_b_for(s.kernel, &b_src, mine, dst);
            s.barriers.wait(b_barrier)?;
            b_block_in_use = true;
            // SAFETY: packed (barrier above); not written again before the next B barrier.
            let b_packed = unsafe { b_block.slice(0..b_panels * panel_len) };

            // Loop 3 (ic): MC-tall row blocks, each reusing the packed B block from cache.
            // The B barrier above also freed the A block (every A team is inside a B team).
            let mut a_block_in_use = false;
            for Range { start: ic, end } in cache_blocks(ic_range.clone(), mc) {
                let mc_cur = end - ic;
                if a_block_in_use {
                    s.barriers.wait(a_barrier)?;
                }
                let a_panels = mc_cur.div_ceil(mr);
                let mine = partition(a_panels, a_size, a_rank, 1);
                let panel_len = mr * kp;
                // SAFETY: as for B, within the A team.
                let dst =
                    unsafe { a_block.slice_mut(mine.start * panel_len..mine.end * panel_len) };
                let a_src = s.a.submatrix(ic, pc, mc_cur, kc_cur);
                pack_a_for(s.kernel, &a_src, mine, dst);
                s.barriers.wait(a_barrier)?;
                a_block_in_use = true;
                // SAFETY: packed (barrier above); not written before the next A barrier.
                let a_packed = unsafe { a_block.slice(0..a_panels * panel_len) };

                // Loops 2 (jr) and 1 (ir): this thread's micropanels of the block.
                let c_block = target.block(ic, jc, mc_cur, nc_cur);
                let jr_panels = partition(b_panels, jr_ways, jr_id, 1);
                let ir_panels = partition(a_panels, ir_ways, ir_id, 1);
                let tiles = Tiles {
                    jr: jr_panels,
                    ir: ir_panels,
                };
                macrokernel(
                    s.kernel, s.alpha, a_packed, b_packed, kp, beta_pc, c_block, tiles,
                );
            }
        }
    }

    if pc_ways > 1 {
        // Every k group done; add the partial products into C, each thread a share of it.
        s.barriers.wait(team_barrier)?;
        add_partials(s, partition(m * n, s.ways.total(), tid, 1));
    }
    Ok(())
}

/// Whether one thread walks the k slices outside the column blocks
/// ([`one_thread_slices_outer`]) rather than inside: for one A block (at most MC rows) and
/// more than one column block, where op(B)'s rows are contiguous or the block is at least
/// half of MC tall. Inside, the A block is packed again for every column block and comes
/// back to L2 from the source each time; outside, each slice is packed once and stays in L2
/// while the column blocks pass, at the price of a pass over C per slice. Measured on a
/// Zen 3 (session 50, one thread, GFLOPS ratio outside/inside, `blasbench --interleave
/// call`): dgemm NN 128–240×2048×2048 1.04–1.11, 200×600×600 1.03–1.07, NT 32–240 rows
/// 1.00–1.11; sgemm NN 176–240 rows 1.08–1.13, NT 1.05–1.15; cgemm NN 128–160 rows
/// 1.02–1.06, zgemm NN 96×2048×1024 1.09. Shorter blocks with op(B)'s columns contiguous
/// read level or lost: dgemm NN 100×4096×1000 0.95, sgemm NN 32×2048×2048 0.96–0.99
/// (`docs/Performance.md`, "k slices outside the column blocks").
fn slices_outer(
    blocks: Blocksizes,
    (m, n): (usize, usize),
    b_rows_contiguous: bool,
    ways: Ways,
) -> bool {
    ways == SINGLE && m <= blocks.mc && n > blocks.nc && (b_rows_contiguous || 2 * m >= blocks.mc)
}

/// The loop nest on one thread with loops 5 and 4 swapped ([`slices_outer`]):
///
/// ```text
/// pc: for each KC-deep slice of k
///       pack A[.., pc..] → Ap  (all m rows: one A block)
///   jc: for each NC-wide column block
///         pack B[pc.., jc..] → Bp
///         macrokernel
/// ```
///
/// Each tile of C is updated by the same slices in the same order, with the same beta, as
/// in [`gemm_thread`], so the result is the same bit for bit.
fn one_thread_slices_outer<A: GemmPair<B>, B: Element>(s: &Shared<A, B>) {
    let Blocksizes { mr, nr, kc, nc, .. } = s.blocks;
    let (m, n, k) = (s.c.m, s.c.n, s.a.ncols());
    debug_assert!(s.ways == SINGLE && m <= s.blocks.mc);
    let a_block = s.a_blocks.part(0, s.a_len);
    let b_block = s.b_blocks.part(0, s.b_len);
    let _hw = s.kernel.enter_hw_context();
    let a_panels = m.div_ceil(mr);
    for Range { start: pc, end } in cache_blocks(0..k, kc) {
        let kc_cur = end - pc;
        let beta_pc = if pc == 0 { s.beta } else { A::Acc::one() };
        let kp = s.kernel.padded_k(kc_cur);
        let a_len = a_panels * mr * kp;
        // SAFETY: the only thread; the block is sized for an A block of this slice
        // (`gemm_nest`), and the macrokernel calls that read the previous slice are done.
        let dst = unsafe { a_block.slice_mut(0..a_len) };
        pack_a_for(s.kernel, &s.a.submatrix(0, pc, m, kc_cur), 0..a_panels, dst);
        // SAFETY: packed above; not written again before the next slice.
        let a_packed = unsafe { a_block.slice(0..a_len) };
        for jc in (0..n).step_by(nc) {
            let nc_cur = nc.min(n - jc);
            let b_panels = nc_cur.div_ceil(nr);
            let b_len = b_panels * kp * nr;
            // SAFETY: as for A, for the B block of this slice and column block.
            let dst = unsafe { b_block.slice_mut(0..b_len) };
            pack_b_for(
                s.kernel,
                &s.b.submatrix(pc, jc, kc_cur, nc_cur),
                0..b_panels,
                dst,
            );
            // SAFETY: packed above; not written again before the next column block.
            let b_packed = unsafe { b_block.slice(0..b_len) };
            let tiles = Tiles {
                jr: 0..b_panels,
                ir: 0..a_panels,
            };
            let c_block = s.c.block(0, jc, m, nc_cur);
            macrokernel(
                s.kernel, s.alpha, a_packed, b_packed, kp, beta_pc, c_block, tiles,
            );
        }
    }
}

/// `range` in steps of `size` (KC for the k slices, MC for the row blocks), except that the
/// last step takes a remainder of up to a third of `size` with it rather than leaving it a
/// thin block of its own. A thin last k slice costs a whole extra pass over C and a thin row
/// block a whole extra pass over the packed B block, for little work: dgemm 512³ on skx
/// (KC 384, MC 240) had slices 384 + 128 and blocks 240 + 240 + 32; with one slice of 512
/// and blocks 240 + 272 it runs about 1 % faster on one thread, 4 % on two
/// (docs/Performance.md). Every block but the last starts `size` after the one
/// before, so row blocks stay aligned to MR (MC is a multiple of it).
pub(super) fn cache_blocks(
    range: Range<usize>,
    size: usize,
) -> impl Iterator<Item = Range<usize>> + Clone {
    debug_assert!(size >= 1);
    let mut start = range.start;
    std::iter::from_fn(move || {
        let left = range.end.checked_sub(start).filter(|&left| left > 0)?;
        let len = if left <= longest_block(size) {
            left
        } else {
            size
        };
        start += len;
        Some(start - len..start)
    })
}

/// How many times shallower than KC the k slices of one A block are where op(B)'s rows are
/// contiguous ([`nest_blocks`]), down to [`SHALLOW_KC_MIN`].
const SHALLOW_KC_DIVISOR: usize = 4;

/// The shallowest k slices [`nest_blocks`] takes (or KC, if that is less). A quarter of
/// dgemm's KC, 64, was best on one thread but lost on two (the loop nest's C passes:
/// dgemm NT 100×1024×1000 0.79–0.93, 128×1024×1024 0.93 against KC slices); at 96 two threads
/// read 0.99–1.05 and one kept most of the gain (`docs/Performance.md`, "Shallow k slices").
const SHALLOW_KC_MIN: usize = 96;

/// The blocksizes the loop nest uses for an m×·×k problem on `ways`: the context's, but for
/// one A block (at most MC rows), where each packed B block is read by one macrokernel call
/// right after it is packed, and never again.
///
/// * **NC**: on one thread, a B block no larger than an A block (MC·KC elements), still in
///   L2 when the macrokernel reads it; a wide block went to L3 and back. The price is
///   packing A once per NC block; at MC rows that is a pass as long as the B block's, so
///   the rule stops there (m = 240 of haswell's MC read 0.94–1.05, 200 rows 1.03–1.07, 128
///   rows 1.01–1.24; on a Zen 3, `docs/Performance.md`, "One A block: B blocks of its
///   size"). On two threads it lost (NT 200×4096×4096 0.83–0.87), so teams keep the
///   context's NC.
/// * **KC**: where op(B)'s rows are contiguous (op(B) = Bᵀ of a column-major B) and k is
///   longer than KC, slices [`SHALLOW_KC_DIVISOR`] times shallower, down to
///   [`SHALLOW_KC_MIN`] (rounded up to the kernel's k group), so that the one-thread B
///   block of the same size is as many times wider. Packing such a B reads each of a
///   slice's rows in a run of NC elements, each row on a page of its own for large B: at
///   NC = MC (a KiB of f32) packing was a string of short, cold runs, 72 % of sgemm NT
///   16×4096×4096 in `perf`. Runs four times longer took it from 17.6 to 27.0 GFLOPS
///   (`docs/Performance.md`, "Shallow k slices"). Decided from the problem alone, not the
///   threads, so that every team sums each element of C over the same slices as one thread
///   (`docs/Multithreading.md`).
pub(super) fn nest_blocks(
    blocks: Blocksizes,
    (m, k): (usize, usize),
    b_rows_contiguous: bool,
    k_group: usize,
    ways: Ways,
) -> Blocksizes {
    let one_a_block = m <= blocks.mc;
    let kc = if one_a_block && b_rows_contiguous && k > blocks.kc {
        (blocks.kc / SHALLOW_KC_DIVISOR)
            .max(SHALLOW_KC_MIN)
            .min(blocks.kc)
            .next_multiple_of(k_group.max(1))
    } else {
        blocks.kc
    };
    let nc = if ways == SINGLE && one_a_block {
        // As many elements as an A block of MC×KC.
        let a_block_size_nc = blocks.mc * blocks.kc / kc;
        blocks.nc.min(a_block_size_nc.next_multiple_of(blocks.nr))
    } else {
        blocks.nc
    };
    Blocksizes { kc, nc, ..blocks }
}

/// The longest block [`cache_blocks`] hands out for `size`.
pub(super) fn longest_block(size: usize) -> usize {
    size + size / 3
}

/// The micropanels of one block a thread computes: NR-panels `jr` × MR-panels `ir`.
pub(super) struct Tiles {
    pub(super) jr: Range<usize>,
    pub(super) ir: Range<usize>,
}

/// C\[e\] += Σ partial_g\[e\] over k groups g = 1.. with a non-empty k range, for the elements
/// `e` (column-major index into m×n) of `share`, in group order.
fn add_partials<A: GemmPair<B>, B: Element>(s: &Shared<A, B>, share: Range<usize>) {
    let (m, mn, k, pc_ways) = (s.c.m, s.c.m * s.c.n, s.a.ncols(), s.ways.pc);
    let groups = || (1..pc_ways).filter(|&g| !partition(k, pc_ways, g, 1).is_empty());
    // SAFETY: every partial product was completed before the team barrier; all threads only
    // read them from now on.
    let partials = unsafe { s.partials.slice(0..(pc_ways - 1) * mn) };
    for e in share {
        let sum = groups().fold(A::Acc::zero(), |sum, g| sum + partials[(g - 1) * mn + e]);
        let p = s.c.ptr_at(e % m, e / m);
        // SAFETY: element e of C is in this thread's share alone (the partition is disjoint),
        // and every k group finished writing C before the team barrier.
        unsafe { *p = *p + sum };
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::cntx::Cntx;
    use crate::kernels::{GemmUkrArgs, reference};
    use crate::rntm::Rntm;
    use crate::view::{MatMut, MatRef};

    thread_local! {
        /// (row stride, column stride) of C at the last kernel call on this thread.
        static LAST_C_STRIDES: Cell<(isize, isize)> = const { Cell::new((0, 0)) };
    }

    /// The reference 4×4 kernel, recording the C strides it was handed.
    unsafe fn recording_ukr(args: &GemmUkrArgs<f64, f64>) {
        LAST_C_STRIDES.set((args.rs_c, args.cs_c));
        // SAFETY: same contract, same MR×NR.
        unsafe { reference::gemm_ukr::<f64, f64, 4, 4>(args) }
    }

    fn context_preferring(rows: bool) -> Cntx {
        // SAFETY: the recording kernel is the portable 4×4 reference kernel.
        unsafe { Cntx::generic_with_test_dgemm(recording_ukr, rows) }
    }

    /// Column-major 8×8 A, B and an 8×8 C with the given strides: C := A·B, then the strides
    /// the kernel saw and whether C is right.
    fn run(rows_preferred: bool, c_row_major: bool) -> ((isize, isize), bool) {
        let n = 8;
        let a: Vec<f64> = (0..n * n).map(|x| (x % 7) as f64 - 3.0).collect();
        let b: Vec<f64> = (0..n * n).map(|x| (x % 5) as f64 - 2.0).collect();
        let mut c = vec![0.0; n * n];
        let av = MatRef::col_major(&a, n, n, n).unwrap();
        let bv = MatRef::col_major(&b, n, n, n).unwrap();
        let mut cv = if c_row_major {
            MatMut::row_major(&mut c, n, n, n).unwrap()
        } else {
            MatMut::col_major(&mut c, n, n, n).unwrap()
        };
        super::gemm_front(
            &context_preferring(rows_preferred),
            &av,
            &bv,
            &mut cv,
            &Rntm::new(),
        )
        .unwrap();
        let at = |i: usize, j: usize| {
            if c_row_major {
                c[i * n + j]
            } else {
                c[i + j * n]
            }
        };
        let correct = (0..n).all(|i| {
            (0..n).all(|j| at(i, j) == (0..n).map(|p| a[i + p * n] * b[p + j * n]).sum::<f64>())
        });
        (LAST_C_STRIDES.get(), correct)
    }

    #[test]
    fn the_kernel_always_sees_its_preferred_c_storage() {
        for c_row_major in [false, true] {
            let ((rs, cs), correct) = run(true, c_row_major);
            assert!(correct);
            assert_eq!(
                (rs, cs),
                (8, 1),
                "row-preferring kernel, C row-major: {c_row_major}"
            );
            let ((rs, cs), correct) = run(false, c_row_major);
            assert!(correct);
            assert_eq!(
                (rs, cs),
                (1, 8),
                "column-preferring kernel, C row-major: {c_row_major}"
            );
        }
    }

    /// The reference 4×4 kernel, after making a gemm call of its own (with 4 threads asked
    /// for) and checking it: what a callback into oxblis from inside a worker looks like.
    unsafe fn nesting_ukr(args: &GemmUkrArgs<f64, f64>) {
        let a = [1.0, 2.0, 3.0, 4.0];
        let mut c = [0.0; 4];
        let av = MatRef::col_major(&a, 2, 2, 2).unwrap();
        let four = Rntm::new().with_num_threads(4).unwrap();
        if crate::thread::pool::in_worker() {
            let bs = crate::cntx::Blocksizes {
                mr: 4,
                nr: 4,
                kc: 8,
                mc: 8,
                nc: 8,
            };
            let prefs = crate::cntx::ThreadPrefs {
                min_work_per_thread: 1,
            };
            let plan = crate::thread::plan::plan(&four, (1000, 1000, 1000), bs, prefs);
            assert_eq!(plan.ways.total(), 1, "nested calls run single-threaded");
        }
        let mut cv = MatMut::col_major(&mut c, 2, 2, 2).unwrap();
        crate::gemm_ex(&av, &av, &mut cv, Some(&four)).unwrap();
        assert_eq!(c, [7.0, 10.0, 15.0, 22.0]);
        // SAFETY: same contract, same MR×NR.
        unsafe { reference::gemm_ukr::<f64, f64, 4, 4>(args) }
    }

    #[test]
    fn calls_from_inside_a_worker_neither_deadlock_nor_fan_out() {
        // SAFETY: the nesting kernel ends in the portable 4×4 reference kernel.
        let cntx = unsafe { Cntx::generic_with_test_dgemm(nesting_ukr, false) };
        let n = 24;
        let a: Vec<f64> = (0..n * n).map(|x| (x % 3) as f64).collect();
        let mut c = vec![0.0; n * n];
        let ways = crate::rntm::Ways {
            jc: 1,
            pc: 1,
            ic: 2,
            jr: 2,
            ir: 1,
        };
        let rntm = Rntm::new().with_ways(ways).unwrap();
        let av = MatRef::col_major(&a, n, n, n).unwrap();
        let mut cv = MatMut::col_major(&mut c, n, n, n).unwrap();
        super::gemm_front(&cntx, &av, &av, &mut cv, &rntm).unwrap();
        for (idx, &got) in c.iter().enumerate() {
            let (i, j) = (idx % n, idx / n);
            let want: f64 = (0..n).map(|p| a[i + p * n] * a[p + j * n]).sum();
            assert_eq!(got, want);
        }
    }
}

#[cfg(test)]
mod hw_context_tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::cntx::{Cntx, HwContext};
    use crate::kernels::{GemmUkrArgs, reference};
    use crate::rntm::{Rntm, Ways};
    use crate::view::{MatMut, MatRef};

    thread_local! {
        static TILES_SET: Cell<bool> = const { Cell::new(false) };
    }
    static SETS: AtomicUsize = AtomicUsize::new(0);
    static RELEASES: AtomicUsize = AtomicUsize::new(0);
    static CALLS_OUTSIDE: AtomicUsize = AtomicUsize::new(0);

    unsafe fn set() {
        assert!(!TILES_SET.replace(true), "set twice without a release");
        SETS.fetch_add(1, Ordering::SeqCst);
    }
    unsafe fn release() {
        assert!(TILES_SET.replace(false), "released without a set");
        RELEASES.fetch_add(1, Ordering::SeqCst);
    }
    /// The reference kernel, counting calls made without the hardware context set.
    unsafe fn stateful_ukr(args: &GemmUkrArgs<f64, f64>) {
        if !TILES_SET.get() {
            CALLS_OUTSIDE.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract, same MR×NR.
        unsafe { reference::gemm_ukr::<f64, f64, 4, 4>(args) }
    }

    #[test]
    fn every_thread_sets_the_kernel_state_before_its_calls_and_releases_it_after() {
        // SAFETY: the kernel is the reference 4×4 one; set/release only touch a flag.
        let cntx = unsafe {
            let mut cntx = Cntx::generic_with_test_dgemm(stateful_ukr, false);
            cntx.dgemm = cntx.dgemm.with_hw_context(HwContext { set, release });
            cntx
        };
        let n = 37;
        let a: Vec<f64> = (0..n * n).map(|x| (x % 7) as f64).collect();
        let mut c = vec![0.0; n * n];
        let one = Ways {
            jc: 1,
            pc: 1,
            ic: 1,
            jr: 1,
            ir: 1,
        };
        for ways in [
            one,
            Ways {
                jc: 2,
                pc: 1,
                ic: 2,
                jr: 1,
                ir: 1,
            },
        ] {
            let (s0, r0) = (SETS.load(Ordering::SeqCst), RELEASES.load(Ordering::SeqCst));
            let rntm = Rntm::new().with_ways(ways).unwrap();
            let av = MatRef::col_major(&a, n, n, n).unwrap();
            let mut cv = MatMut::col_major(&mut c, n, n, n).unwrap();
            super::gemm_front(&cntx, &av, &av, &mut cv, &rntm).unwrap();
            let sets = SETS.load(Ordering::SeqCst) - s0;
            assert_eq!(sets, ways.total(), "one set per thread");
            assert_eq!(RELEASES.load(Ordering::SeqCst) - r0, sets);
        }
        assert_eq!(CALLS_OUTSIDE.load(Ordering::SeqCst), 0);
        assert!(!TILES_SET.get());
    }

    #[test]
    fn a_held_context_is_not_set_again_and_a_different_one_is_restored() {
        use std::sync::atomic::AtomicUsize;
        // Counters of its own: the test above counts `set` calls across a team, and the two
        // run side by side.
        static HELD_SETS: AtomicUsize = AtomicUsize::new(0);
        static OTHER_SETS: AtomicUsize = AtomicUsize::new(0);
        unsafe fn held_set() {
            assert!(!TILES_SET.replace(true), "set twice without a release");
            HELD_SETS.fetch_add(1, Ordering::SeqCst);
        }
        unsafe fn held_release() {
            assert!(TILES_SET.replace(false), "released without a set");
        }
        unsafe fn other_set() {
            OTHER_SETS.fetch_add(1, Ordering::SeqCst);
        }
        unsafe fn other_release() {}
        std::thread::spawn(|| {
            // SAFETY: the reference kernel; set/release only count or flip a flag.
            let (held, other) = unsafe {
                let base = Cntx::generic_with_test_dgemm(stateful_ukr, false).dgemm;
                (
                    base.with_hw_context(HwContext {
                        set: held_set,
                        release: held_release,
                    }),
                    base.with_hw_context(HwContext {
                        set: other_set,
                        release: other_release,
                    }),
                )
            };
            let sets = || HELD_SETS.load(Ordering::SeqCst);
            held.hold_hw_context();
            let after_hold = sets();
            assert!(TILES_SET.get());
            for _ in 0..3 {
                let _guard = held.enter_hw_context();
            }
            assert_eq!(sets(), after_hold, "a held context is not set again");
            assert!(TILES_SET.get());
            {
                let _guard = other.enter_hw_context();
                assert!(
                    !TILES_SET.get(),
                    "the held one gives way to another kernel's"
                );
            }
            assert!(TILES_SET.get(), "and comes back after");
            assert_eq!(OTHER_SETS.load(Ordering::SeqCst), 1);
            crate::cntx::release_held_hw_context();
            assert!(!TILES_SET.get());
        })
        .join()
        .unwrap();
    }
}

#[cfg(test)]
mod nest_blocks_tests {
    use super::{nest_blocks, slices_outer};
    use crate::cntx::Blocksizes;
    use crate::rntm::Ways;
    use crate::thread::plan::SINGLE;

    const BLOCKS: Blocksizes = Blocksizes {
        mr: 8,
        nr: 6,
        kc: 512,
        mc: 240,
        nc: 4080,
    };

    /// NC and KC for m rows and k, one k group; B's columns contiguous or its rows.
    fn nc_kc(m: usize, k: usize, rows: bool, ways: Ways) -> (usize, usize) {
        let blocks = nest_blocks(BLOCKS, (m, k), rows, 1, ways);
        assert_eq!((blocks.mr, blocks.nr, blocks.mc), (8, 6, 240));
        (blocks.nc, blocks.kc)
    }

    #[test]
    fn nc_shrinks_to_mc_only_for_one_thread_of_at_most_mc_rows() {
        for m in [1, 16, 239, 240] {
            assert_eq!(nc_kc(m, 1000, false, SINGLE), (240, 512), "m = {m}");
        }
        // Past MC (one block of up to 320 rows, or more blocks).
        for m in [241, 320, 321, 1000, 4096] {
            assert_eq!(nc_kc(m, 1000, false, SINGLE), (4080, 512), "m = {m}");
            assert_eq!(nc_kc(m, 1000, true, SINGLE), (4080, 512), "m = {m}");
        }
        // Teams keep NC.
        assert_eq!(
            nc_kc(16, 1000, false, Ways { ic: 2, ..SINGLE }),
            (4080, 512)
        );
        assert_eq!(
            nc_kc(16, 1000, false, Ways { jc: 2, ..SINGLE }),
            (4080, 512)
        );
        // MC rounded up to NR, and never above NC.
        let mc_100 = Blocksizes { mc: 100, ..BLOCKS };
        assert_eq!(nest_blocks(mc_100, (50, 10), false, 1, SINGLE).nc, 102);
        let nc_96 = Blocksizes { nc: 96, ..BLOCKS };
        assert_eq!(nest_blocks(nc_96, (50, 10), false, 1, SINGLE).nc, 96);
    }

    #[test]
    fn contiguous_rows_of_b_take_shallow_slices_past_kc_on_any_team() {
        // A quarter of KC, and on one thread a B block four times as wide.
        for m in [1, 16, 240] {
            assert_eq!(nc_kc(m, 513, true, SINGLE), (960, 128), "m = {m}");
            assert_eq!(nc_kc(m, 100_000, true, SINGLE), (960, 128), "m = {m}");
        }
        // k within one KC slice keeps it.
        assert_eq!(nc_kc(16, 512, true, SINGLE), (240, 512));
        assert_eq!(nc_kc(16, 1, true, SINGLE), (240, 512));
        // Teams slice k alike (the same sums), with the context's NC.
        assert_eq!(nc_kc(16, 1000, true, Ways { jc: 2, ..SINGLE }), (4080, 128));
        assert_eq!(nc_kc(16, 1000, true, Ways { ir: 2, ..SINGLE }), (4080, 128));
        // No shallower than 96 (KC 256: 96, not 64; NC 240·256/96 = 640, rounded up to NR),
        // nor deeper than KC.
        let kc_256 = Blocksizes { kc: 256, ..BLOCKS };
        let blocks = nest_blocks(kc_256, (16, 1000), true, 1, SINGLE);
        assert_eq!((blocks.kc, blocks.nc), (96, 642));
        let kc_50 = Blocksizes { kc: 50, ..BLOCKS };
        assert_eq!(nest_blocks(kc_50, (16, 1000), true, 1, SINGLE).kc, 50);
        // Rounded up to the kernel's k group (128 → 160), NC from it (240·512/160 = 768).
        let blocks = nest_blocks(BLOCKS, (16, 1000), true, 40, SINGLE);
        assert_eq!((blocks.kc, blocks.nc), (160, 768));
        // Never above NC.
        let nc_600 = Blocksizes { nc: 600, ..BLOCKS };
        assert_eq!(nest_blocks(nc_600, (16, 1000), true, 1, SINGLE).nc, 600);
    }

    #[test]
    fn slices_go_outside_for_one_thread_with_one_a_block_and_several_column_blocks() {
        // MC 240, NC 240 (one thread's, `nest_blocks`).
        let blocks = Blocksizes { nc: 240, ..BLOCKS };
        // op(B)'s rows contiguous: any block height up to MC.
        for m in [1, 119, 240] {
            assert!(slices_outer(blocks, (m, 241), true, SINGLE), "m = {m}");
        }
        // op(B)'s columns contiguous: from half of MC.
        assert!(slices_outer(blocks, (120, 241), false, SINGLE));
        assert!(slices_outer(blocks, (240, 5000), false, SINGLE));
        assert!(!slices_outer(blocks, (119, 5000), false, SINGLE));
        // Not past one A block, nor for one column block, nor on a team.
        assert!(!slices_outer(blocks, (241, 5000), true, SINGLE));
        assert!(!slices_outer(blocks, (240, 240), true, SINGLE));
        assert!(!slices_outer(
            blocks,
            (240, 5000),
            true,
            Ways { ir: 2, ..SINGLE }
        ));
        assert!(!slices_outer(
            blocks,
            (240, 5000),
            true,
            Ways { jc: 2, ..SINGLE }
        ));
    }
}

#[cfg(test)]
mod far_rows_tests {
    use super::{short_and_wide_streaming_b, short_and_wide_with_b_rows};
    use crate::gks::supported_contexts;
    use crate::types::{GemmPair, Scalar};
    use crate::view::{MatMut, MatRef};

    /// Which path a short, wide C (m×n) takes when op(B) = Bᵀ has rows `n` elements apart,
    /// with op(A) = Aᵀ (TT) or A (NT): (solved transposed by the sup kernel, streamed).
    fn paths<T: GemmPair<T, Acc = T> + Scalar>(
        cntx: &crate::cntx::Cntx,
        (m, n, k): (usize, usize, usize),
        a_rows: bool,
    ) -> (bool, bool) {
        let kernel = T::kernel(cntx);
        let a_data = vec![T::zero(); m * k];
        let b_data = vec![T::zero(); n * k];
        let mut c_data = vec![T::zero(); m * n];
        let a = if a_rows {
            MatRef::col_major(&a_data, k, m, k).unwrap().t()
        } else {
            MatRef::col_major(&a_data, m, k, m).unwrap()
        };
        let b = MatRef::col_major(&b_data, n, k, n).unwrap().t();
        let c = MatMut::col_major(&mut c_data, m, n, m).unwrap();
        (
            short_and_wide_with_b_rows(kernel, &c, &a, &b),
            short_and_wide_streaming_b(kernel, &c, &b, || {
                super::transposed_sup_takes_short_and_wide(kernel, &c, &a, &b)
            })
            .is_some(),
        )
    }

    /// op(B)'s rows far apart (700 columns: 2800 bytes in f32, past every configuration's
    /// `max_a_col_stride_bytes`, spread over the L1's sets): the streaming kernel gives way
    /// to the transposed sup path from `SupLimits::far_a_min_n_c_rows` rows of C where that
    /// path takes the problem (TT and NT at k = 16), and only there: NT at k = 1, under the
    /// short, wide rule's k, stays streamed below `far_a_min_n` rows.
    fn far_rows_go_to_sup_from_its_row_limit<T: GemmPair<T, Acc = T> + Scalar>() {
        let mut checked = 0;
        for cntx in supported_contexts() {
            let kernel = T::kernel(cntx);
            let (Some(sup), Some(_)) = (kernel.sup(), kernel.gemv_columns()) else {
                continue;
            };
            let limits = sup.limits();
            checked += 1;
            for m in 2..limits.far_a_min_n {
                let taken = m >= limits.far_a_min_n_c_rows;
                let tt = paths::<T>(cntx, (m, 700, 16), true);
                assert_eq!(tt, (taken, !taken), "{} TT m = {m}", cntx.name);
                let nt = paths::<T>(cntx, (m, 700, 16), false);
                assert_eq!(nt, (taken, !taken), "{} NT m = {m}", cntx.name);
                let nt_short_k = paths::<T>(cntx, (m, 700, 1), false);
                assert_eq!(nt_short_k, (false, true), "{} NT k = 1, m = {m}", cntx.name);
            }
        }
        assert!(checked > 0 || supported_contexts().len() == 1);
    }

    #[test]
    fn far_rows_go_to_sup_from_its_row_limit_f32() {
        far_rows_go_to_sup_from_its_row_limit::<f32>();
    }

    #[test]
    fn far_rows_go_to_sup_from_its_row_limit_f64() {
        far_rows_go_to_sup_from_its_row_limit::<f64>();
    }
}
