//! Short, wide C whose op(B) has contiguous columns (NN and TN with a column-major B, 2 to
//! [`MAX_DOT_ROWS`] rows in a column shorter than [`MAX_C_COLUMN_BYTES`]: sgemm m = 2–8,
//! dgemm 2–7, NN dgemm 2–5; NN only for C wider than the sup kernel's tile): every element
//! of C is the dot product of a row of op(A) and a contiguous column of op(B), computed by
//! the context's dots kernel in one call per k block (contract: `DotsUkr` in
//! `kernels/mod.rs`). The transposed shape, a tall C of a few columns whose op(A) has
//! contiguous rows, is the same problem as Cᵀ = op(B)ᵀ·op(A)ᵀ. With both op(A)'s rows and
//! op(B)'s columns contiguous (TN), a small C goes this way too (9 to
//! [`MAX_BLOCKED_DOT_ROWS`] rows or columns, the shorter side, and at most
//! [`MAX_BLOCKED_DOT_COLUMNS`] on the other; or up to [`MAX_WIDER_DOT_ROWS`] in a C of at most
//! [`MAX_WIDER_DOT_ELEMENTS`] elements), in blocks of at most [`BLOCKED_DOT_ROWS`] rows, one
//! pass over op(B) each: the tile path would copy op(A) first and mask most of a tile's rows.
//!
//! The tile kernels compute such a C badly: their vectors run down C's columns, a few
//! elements long, so every k step spends a mostly masked vector on each column. The dots
//! kernel's vectors run along k instead, and every lane is useful.
//!
//! The kernel reads op(A)'s rows as contiguous runs. Where they are (TN: op(A) = Aᵀ of a
//! column-major A) it reads them in place, all of k in one call; where they are not (NN), it
//! gathers them into a buffer of its own first, [`DOT_K_BLOCK`] elements of each row at a
//! time, one call per k block, C updated once per block (beta on the first, then 1).
//!
//! Chosen by `gemm_front` (and by the BLAS entry points' shortcut, `frame/blas/one_tile.rs`)
//! for every dtype whose context has a dots kernel. With threads, each takes its own
//! columns of C (`blocks.rs`).

use std::ops::Range;

use crate::cntx::{Cntx, GemmKernel};
use crate::error::Result;
use crate::kernels::{DotsUkr, DotsUkrArgs, MAX_DOT_GATHER_K, MAX_DOT_ROWS};
use crate::l3::blocks::run_on_blocks_of_c;
use crate::l3::sup::even_blocks;
use crate::rntm::Rntm;
use crate::thread::plan::{SINGLE, SplitFirst, block_ways, plan};
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The longest k block of gathered rows of A (NN), in elements: the kernel's buffer holds
/// this many of each row. Four rows of it take 8 KiB of f32 or 16 KiB of f64, a share of L1
/// next to the B columns streaming through. Rows read in place (TN) went in blocks of this
/// length too until session 54, when all of k in one call gained on skx (sgemm TN
/// 4×4096×4096 1.75×, 16×16×1000 1.11×, 4×200×1000 1.13×; dgemm 3×3000×3000 1.34×,
/// 16×16×2048 1.18×, 8×512×8192 level; `kernels/x86/dots_real.rs`, which keeps the blocks
/// for the 16-register bodies).
const DOT_K_BLOCK: usize = MAX_DOT_GATHER_K;

/// The shortest k, in bytes of a row, a problem needs to take the dots path. Below it the
/// tile kernels' short k loops beat the dots kernel's lane sums.
const DOT_MIN_K_BYTES: usize = 128;

/// The same where the tile kernels waste less or the dots kernel does more per element of
/// C: where A's rows are gathered first (NN) and C's columns fill a 256-bit vector (dgemm
/// m ≥ 4). Measured: dgemm NN m = 4 was level with the tile path at k = 32 and ahead from
/// 48; m = 5–7 level at 32, and at 48 ahead for m = 5, 6 (+11–28 %), behind for 7 (−10 %).
const DOT_MIN_K_BYTES_COPIED: usize = 384;

/// The same for seven rows or more, or six gathered (block of 6 or 7 rows: its epilogue
/// writes C element by element). Measured against the tile path: sgemm NN m = 6 level at
/// k = 48 and +18 % at 64, m = 7 −16 % at 48, −7 % at 64, level at 80; dgemm TN m = 7
/// −13 % at k = 16, −7 % at 24, +3 % at 32; m = 5, 6 ahead from k = 16–24.
const DOT_MIN_K_BYTES_MANY_ROWS: usize = 256;

/// A short, wide C's columns must be shorter than this many bytes: a column that fills a
/// 512-bit vector (dgemm m = 8) goes to the tile kernels, which were ahead there on skx and
/// on haswell (two 256-bit vectors), by 4–25 %; sgemm m = 8 was 0.94–1.22× them on both.
/// Not for the transposed shape (a tall C of up to [`MAX_DOT_ROWS`] columns), whose
/// alternative, the tile path, copies op(A) first (dgemm TN 96×8×96 1.3×, 256×8×256 2.5×).
const MAX_C_COLUMN_BYTES: usize = 64;

/// The same where op(A)'s rows are gathered first (NN): dgemm NN m = 6, 7 was 0.83–1.07×
/// the tile path (m = 5 1.23–1.45×, TN m = 6, 7 0.94–1.22×).
const MAX_GATHERED_C_COLUMN_BYTES: usize = 48;

/// The longest shorter side of a TN C that the dots path takes in row blocks (past the
/// short, wide C above) whatever its longer side, up to [`MAX_BLOCKED_DOT_COLUMNS`].
/// Measured on skx (session 53, a Zen 4, one thread, ratio to OpenBLAS, tile path → dots in
/// blocks of six rows): sgemm 9×32×1000 0.56 → 0.91, 12×12×1000 0.53 → 0.84, 12×48×1000 0.73
/// → 0.96, 36×11×2048 0.54 → 1.10, 10×20×256 0.52 → 0.98, 64×12×200 0.75 → 1.04, 9×32×64
/// 0.60 → 0.91; dgemm 9×32×1000 0.66 → 1.12, 12×12×1000 0.60 → 0.96, 36×11×2048 0.71 → 1.14,
/// 64×12×200 0.70 → 0.85, 12×12×96 0.62 → 0.98.
const MAX_BLOCKED_DOT_ROWS: usize = 12;

/// The longest longer side of such a C (measured to 64: sgemm 9×64×512 0.61 → 1.12, 12×64×300
/// 0.76 → 0.98).
const MAX_BLOCKED_DOT_COLUMNS: usize = 64;

/// Past [`MAX_BLOCKED_DOT_ROWS`], the longest shorter side of a TN C taken in row blocks, for
/// a C of at most [`MAX_WIDER_DOT_ELEMENTS`] elements whose k is long enough
/// ([`WIDER_DOT_MIN_K_BYTES`]). Measured on skx (session 54, a Zen 4, one thread, the tile
/// path against dots in row blocks with k taken whole, three alternated runs over shorter
/// sides 13–32, longer sides up to 64 and k = 64–2048; docs/Performance.md, "Small TN C as
/// dot products up to 28 rows"): within the rule sgemm gained 1.28× (geometric mean of 56
/// shapes; 20×20×256 0.57 → 0.85 of OpenBLAS, 16×16×1000 0.76 → 0.93), the least 0.97; dgemm
/// 1.16× (61 shapes; 20×20×1000 0.74 → 0.90), the least 0.88 (16×40×2048, where the tile
/// path was 1.87× OpenBLAS). A shorter side of 32 lost at most k (0.73–1.02 sgemm,
/// 0.77–1.04 dgemm, mostly under 0.95), and so did larger C (sgemm 16×64×512 0.88, dgemm 16×64×2048 0.75,
/// 24×40×1000 0.82).
const MAX_WIDER_DOT_ROWS: usize = 28;

/// The most elements of a C that [`MAX_WIDER_DOT_ROWS`] admits (20×40, 28×28).
const MAX_WIDER_DOT_ELEMENTS: usize = 800;

/// The shortest k, in bytes of a row, for such a C of more than [`SHORT_K_WIDER_DOT_ELEMENTS`]
/// elements: at k = 64 sgemm lost on larger C (16×40 0.87, 24×40 0.87, 28×28 0.96) and gained
/// on smaller ones (16×16 1.13, 20×20 1.18, 13×40 1.07); dgemm at k = 64 alike (16×40 0.90,
/// 20×20 1.15).
const WIDER_DOT_MIN_K_BYTES: usize = 1024;

/// The most elements of a C taken at any k (24×24).
const SHORT_K_WIDER_DOT_ELEMENTS: usize = 576;

/// The rows of one dots kernel call in such a C: the kernel's blocks of five or six rows
/// (5×4, 6×4 accumulators) load fewer vectors per FMA than its 8×2 (session 53, blocks of at
/// most 6 against 8: sgemm 16×16×1000 0.68 → 0.82, 48×16×1000 0.84 → 0.96, dgemm 16×16×1000
/// 0.79 → 0.96, 32×32×1000 0.95 → 1.22 of OpenBLAS; at most 4 read 0.98–1.0 of 6).
const BLOCKED_DOT_ROWS: usize = 6;

/// The same where A's rows and B's columns are both a multiple of 4 KiB apart, so that a
/// block's rows and columns all fall in one set of the L1 (eight ways): four rows and four
/// columns fit it, six and four did not. Session 54, skx, against blocks of six (three
/// alternated runs): dgemm TN 16×16×2048 1.24×, 32×32×2048 1.24×, 24×40×2048 1.27×,
/// 16×16×1024 1.27×, 32×32×1024 1.33×, 12×12×2048 1.24×; sgemm 16×16×2048 1.20×, 24×40×2048
/// 1.30×, 16×16×4096 1.19×; 20×40×2048 level (0.99×), 64×32×2048 0.91×.
const BLOCKED_DOT_ROWS_IN_ONE_SET: usize = 4;

/// Whether C (m×n) = op(A)·op(B) suits the dots path as it is: op(B)'s columns contiguous,
/// 2 to `max_rows` rows (one row is a gemv), k long enough, and, where op(A)'s rows are
/// gathered first, more than `tile_columns` columns (the sup kernel's NR; 0 without one).
/// Measured against the tile kernels through `cblas_{s,d}gemm` (docs/Performance.md, "Short,
/// wide C as dot products").
///
/// The gather costs m·k element moves whatever n is, and a C of one tile's width spreads it
/// over too few columns: there the tile kernel, which reads A in place, won. Session 59 (a
/// Zen 4, one thread, two alternated runs, m = 2–8, n = 3–32, k = 16–256, tile path against
/// dots): on skx dgemm NN 3×3×32 1.73×, 2×3×24 1.70×, 3×12×64
/// 1.27×, 5×6×64 1.25×; sgemm 6×3×64 1.80×, 5×12×32 1.47×, 8×8×128 1.43×; TT (the
/// transposed shape, op(B)'s rows gathered) dgemm 3×3×64 1.70×, 12×3×32 1.35×; haswell
/// (NR = 6), forced, dgemm 3×6×32 1.42×, sgemm 5×6×32 1.22×. Past NR dots mostly kept ahead
/// (skx sgemm 2×16×256 0.59, haswell dgemm 2×8×64 0.90); over the NN grids the least choice,
/// against the better of the two, went from 0.47–0.56 to 0.71–0.81, and their geometric
/// means from 0.86–0.93 to 0.984–0.988.
fn suits<A: Element, B: Element>(
    m: usize,
    b: &MatRef<B>,
    a: &MatRef<A>,
    max_rows: usize,
    tile_columns: usize,
) -> bool {
    const VECTOR_BYTES: usize = 32;
    let fills_vector = m * size_of::<A>() >= VECTOR_BYTES;
    let copied = a.col_stride() != 1;
    let min_k_bytes = if copied && fills_vector {
        DOT_MIN_K_BYTES_COPIED
    } else if m >= 7 || (copied && m >= 6) {
        DOT_MIN_K_BYTES_MANY_ROWS
    } else {
        DOT_MIN_K_BYTES
    };
    (2..=max_rows).contains(&m)
        && !(copied && b.ncols() <= tile_columns)
        && b.row_stride() == 1
        && !a.is_conj()
        && !b.is_conj()
        && b.nrows().saturating_mul(size_of::<B>()) >= min_k_bytes
}

/// Computes C := alpha·op(A)·op(B) + beta·C with the dots kernel when the problem suits it,
/// as it is or transposed (see the module docs), and returns its result; returns `None`,
/// having touched nothing, when it does not suit. `rntm` and `cntx` plan the threads; `None`
/// runs on the calling thread (for callers whose problems are below any thread threshold).
///
/// Inlined for its first test, which turns away almost every call that is not this path's
/// (k too short, or C with too many rows and columns) in a few instructions: tiny calls
/// pay for nothing else (the whole test out of line cost 2³–8³ calls 10–17 %).
#[inline(always)]
pub(crate) fn gemm_dots<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    if k_too_short_for_dots::<A, B>(a.ncols()) || c.nrows().min(c.ncols()) > MAX_WIDER_DOT_ROWS {
        return None;
    }
    gemm_dots_if_suited(threads, kernel, alpha, a, b, beta, c)
}

/// Whether a depth of `k` is too short for the dots path whatever the shape: [`gemm_dots`]
/// declines such a problem in its first test.
#[inline(always)]
pub(crate) fn k_too_short_for_dots<A, B>(k: usize) -> bool {
    // Saturating: a zero-stride view may have a k no memory holds (`tests/tall.rs`).
    k.saturating_mul(size_of::<A>().min(size_of::<B>())) < DOT_MIN_K_BYTES
}

/// [`gemm_dots`] past its first test.
#[inline(never)]
fn gemm_dots_if_suited<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let dots = kernel.dots()?;
    let column_bytes = if a.col_stride() == 1 {
        MAX_C_COLUMN_BYTES
    } else {
        MAX_GATHERED_C_COLUMN_BYTES
    };
    let short_columns = (column_bytes - 1) / size_of::<A::Acc>();
    let tile_columns = kernel.sup().map_or(0, |sup| sup.tile().1);
    if suits(
        c.nrows(),
        b,
        a,
        short_columns.min(MAX_DOT_ROWS),
        tile_columns,
    ) {
        return Some(dots_on_threads(threads, kernel, dots, alpha, a, b, beta, c));
    }
    if suits(c.ncols(), &a.t(), &b.t(), MAX_DOT_ROWS, tile_columns) {
        return dots_on_threads_transposed(threads, kernel, dots, alpha, a, b, beta, c);
    }
    gemm_dots_in_row_blocks(threads, kernel, dots, alpha, a, b, beta, c)
}

/// [`gemm_dots`] for a small TN C of more than [`MAX_DOT_ROWS`] rows and columns: in row
/// blocks (`gemm_dots_single`) along its shorter side, as it is or transposed.
#[allow(clippy::too_many_arguments)]
fn gemm_dots_in_row_blocks<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    dots: DotsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let (m, n) = (c.nrows(), c.ncols());
    let tn = a.col_stride() == 1 && b.row_stride() == 1;
    if !tn
        || m.min(n) <= MAX_DOT_ROWS
        || !takes_in_row_blocks::<A>(m, n, a.ncols(), RowBlockRules::of(kernel))
    {
        return None;
    }
    if m <= n {
        return suits(m, b, a, MAX_WIDER_DOT_ROWS, 0)
            .then(|| dots_on_threads(threads, kernel, dots, alpha, a, b, beta, c));
    }
    if !suits(n, &a.t(), &b.t(), MAX_WIDER_DOT_ROWS, 0) {
        return None;
    }
    dots_on_threads_transposed(threads, kernel, dots, alpha, a, b, beta, c)
}

/// Whether a TN C of m×n (both past [`MAX_DOT_ROWS`]) over k of `A`'s elements is small
/// enough for the dots path in row blocks: a shorter side up to [`MAX_BLOCKED_DOT_ROWS`] with
/// a longer one up to [`MAX_BLOCKED_DOT_COLUMNS`], or one up to [`MAX_WIDER_DOT_ROWS`] in a C
/// of at most [`MAX_WIDER_DOT_ELEMENTS`] whose k is long enough; or, with k long enough, a
/// tall C (more rows than columns, at most [`MAX_WIDER_DOT_ROWS`] columns) of any rows up to
/// an op(A) of the kernel's `GemmKernel::with_tall_dots` bytes, or a wide one (9 to
/// [`MAX_WIDER_DOT_ROWS`] rows, no more than columns) whose rows do not fill the sup
/// kernel's vectors, rows up to its `GemmKernel::with_wide_dots` bytes.
///
/// The tall rule, session 58 (skx on a Zen 4, one thread, two alternated runs, dots in row
/// blocks against the tile path, which copies op(A) once for only n columns of C): sgemm
/// 64×13×1166 1.51× (0.75 → 1.14 of OpenBLAS), 200×10×1000 1.61×, 500×12×500 1.63×,
/// 300×9×2000 1.55×, 2000×16×1000 1.31×, 1000×28×1000 1.17×, 64×24×256 1.18×; dgemm
/// 64×13×1166 1.43×, 200×10×1000 1.48×, 1000×16×1000 1.25×, 500×28×1000 1.15×. It lost past
/// about 16 MiB of op(A), which the row blocks read again from memory (sgemm 3000×28×3000
/// 0.65, dgemm 4000×16×1000 0.67), hence skx's 8 MiB.
///
/// The wide rule, the same session: for a wide C the tile path's copy of A serves many
/// columns, and it kept ahead where m fills its vectors (dgemm 16×64×2048 0.89 as dots, sgemm
/// 16×200×256 0.94); where it does not, dots gained (sgemm 13×64×1000 1.29×, 17×200×1000
/// 1.55×, 12×100×500 1.31×; dgemm 13×64×1000 1.32×, 17×100×1000 1.20×), dgemm up to 100
/// columns (20×200×1000 0.97); measurements in `config/skx.rs`.
fn takes_in_row_blocks<A>(m: usize, n: usize, k: usize, rules: RowBlockRules) -> bool {
    let (shorter, elements) = (m.min(n), m * n);
    if shorter <= MAX_BLOCKED_DOT_ROWS && m.max(n) <= MAX_BLOCKED_DOT_COLUMNS {
        return true;
    }
    let k_bytes = k.saturating_mul(size_of::<A>());
    if shorter > MAX_WIDER_DOT_ROWS
        || !(elements <= SHORT_K_WIDER_DOT_ELEMENTS || k_bytes >= WIDER_DOT_MIN_K_BYTES)
    {
        return false;
    }
    let tall = m > n && m.saturating_mul(k_bytes) <= rules.tall_max_a_bytes;
    let wide = m <= n
        && rules.vector_rows > 0
        && !m.is_multiple_of(rules.vector_rows)
        && n.saturating_mul(size_of::<A>()) <= rules.wide_max_row_bytes;
    tall || wide || (shorter > MAX_BLOCKED_DOT_ROWS && elements <= MAX_WIDER_DOT_ELEMENTS)
}

/// The kernel's own bounds for [`takes_in_row_blocks`]: `GemmKernel::with_tall_dots`,
/// `GemmKernel::with_wide_dots`, and the rows of the sup kernel's vectors (MR/2; 0 without
/// one).
#[derive(Clone, Copy)]
struct RowBlockRules {
    tall_max_a_bytes: usize,
    wide_max_row_bytes: usize,
    vector_rows: usize,
}

impl RowBlockRules {
    fn of<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> Self {
        RowBlockRules {
            tall_max_a_bytes: kernel.tall_dots_max_a_bytes(),
            wide_max_row_bytes: kernel.wide_dots_max_row_bytes(),
            vector_rows: kernel.sup().map_or(0, |sup| sup.tile().0 / 2),
        }
    }
}

/// [`dots_on_threads`] on the transposed problem, Cᵀ = op(B)ᵀ·op(A)ᵀ (`None` where the dtypes
/// cannot swap roles, having touched nothing).
#[allow(clippy::too_many_arguments)]
fn dots_on_threads_transposed<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    dots: DotsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let (bt, at) = A::swapped(a, b)?;
    let mut ct = c.rb().t();
    Some(dots_on_threads(
        threads, kernel, dots, alpha, &bt, &at, beta, &mut ct,
    ))
}

/// [`gemm_dots`] once the problem suits the kernel as it is: on the threads the plan gives,
/// each with its own columns of C.
#[allow(clippy::too_many_arguments)]
fn dots_on_threads<A: GemmPair<B>, B: Element>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    dots: DotsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let Some((cntx, rntm)) = threads else {
        gemm_dots_single(dots, alpha, a, b, beta, c);
        return Ok(());
    };
    let shape = (c.nrows(), c.ncols(), a.ncols());
    let plan = plan(rntm, shape, kernel.blocksizes(), cntx.thread_prefs());
    let ways = match plan.ways {
        SINGLE => None,
        ways => block_ways(
            rntm,
            ways,
            (shape.0, shape.1),
            (MAX_DOT_ROWS, 8),
            SplitFirst::Columns,
        ),
    };
    let Some(ways) = ways.filter(|&w| w != (1, 1)) else {
        gemm_dots_single(dots, alpha, a, b, beta, c);
        return Ok(());
    };
    let k = shape.2;
    run_on_blocks_of_c(c, ways, (1, 8), plan.pin, |rows, cols, c_block| {
        let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
        let b_cols = b.submatrix(0, cols.start, k, cols.len());
        gemm_dots_single(dots, alpha, &a_rows, &b_cols, beta, c_block);
    })
}

/// The problem on the calling thread: C of fewer than [`MAX_DOT_ROWS`] rows as one block, a
/// taller one in blocks of at most [`BLOCKED_DOT_ROWS`] (of equal height but for rounding),
/// each by [`gemm_dots_rows`]. Eight rows as two blocks of four: the kernel's 4×4 blocks
/// beat its 8×2 (session 53, skx, ratio to OpenBLAS: sgemm TN 8×40×1000 0.67 → 0.81,
/// 8×8×4096 0.68 → 0.85, 8×100×2000 1.39 → 1.58; dgemm TN 8×8×4096, transposed, 0.51 →
/// 0.87); seven rows as 4 + 3 lost (sgemm 7×64×512 1.08 → 1.03, 7×30×700 1.20 → 1.12).
fn gemm_dots_single<A: GemmPair<B>, B: Element>(
    dots: DotsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    let m = c.nrows();
    let height = if m < MAX_DOT_ROWS {
        m
    } else {
        even_blocks(m, blocked_dot_rows(a, b))
    };
    for i0 in (0..m).step_by(height.max(1)) {
        gemm_dots_rows(dots, alpha, a, b, beta, c, i0..(i0 + height).min(m));
    }
}

/// The most rows of a block of C in [`gemm_dots_single`]: [`BLOCKED_DOT_ROWS_IN_ONE_SET`]
/// where A's rows and B's columns both lie a multiple of 4 KiB apart (by their strides, not
/// their addresses, so that the blocks, and the result's bits, do not depend on where the
/// arrays lie), else [`BLOCKED_DOT_ROWS`].
fn blocked_dot_rows<A: Element, B: Element>(a: &MatRef<A>, b: &MatRef<B>) -> usize {
    const PAGE: usize = 4096;
    let a_rows = a.row_stride().unsigned_abs().wrapping_mul(size_of::<A>());
    let b_columns = b.col_stride().unsigned_abs().wrapping_mul(size_of::<B>());
    if a_rows.is_multiple_of(PAGE) && b_columns.is_multiple_of(PAGE) {
        BLOCKED_DOT_ROWS_IN_ONE_SET
    } else {
        BLOCKED_DOT_ROWS
    }
}

/// Rows `rows` (at most [`MAX_DOT_ROWS`]) of C: the kernel on all of k where A's rows are
/// contiguous, else on each k block of at most [`DOT_K_BLOCK`] (blocks of equal length but
/// for rounding), C getting beta from the first block and accumulating after.
fn gemm_dots_rows<A: GemmPair<B>, B: Element>(
    dots: DotsUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    rows: Range<usize>,
) {
    let (m, n, k) = (rows.len(), c.ncols(), b.nrows());
    debug_assert!((1..=MAX_DOT_ROWS).contains(&m) && b.row_stride() == 1 && k >= 1);
    let a = &a.submatrix(rows.start, 0, m, k);
    // The kernel takes A's contiguous rows at any k (and blocks it itself where its
    // register file needs that); gathered rows come DOT_K_BLOCK at a time.
    let block_len = if a.col_stride() == 1 {
        k
    } else {
        even_blocks(k, DOT_K_BLOCK)
    };
    let mut args = DotsUkrArgs {
        m,
        n,
        k: 0,
        alpha,
        a: a.as_ptr(),
        rs_a: a.row_stride(),
        cs_a: a.col_stride(),
        b: b.as_ptr(),
        cs_b: b.col_stride(),
        beta,
        c: c.ptr_at(rows.start, 0),
        rs_c: c.row_stride(),
        cs_c: c.col_stride(),
    };
    let mut p0 = 0;
    while p0 < k {
        let kb = block_len.min(k - p0);
        args.k = kb;
        // Column p0 of A, row p0 of B: inside their views (p0 < k).
        args.a = a.as_ptr().wrapping_offset(p0 as isize * a.col_stride());
        args.b = b.as_ptr().wrapping_add(p0);
        // SAFETY: the `DotsUkr` contract: A's m ≤ MAX_DOT_ROWS rows over kb ≥ 1 columns (at
        // most MAX_DOT_GATHER_K = DOT_K_BLOCK unless A's rows are contiguous) in its checked
        // view, B's n columns contiguous over rows p0..p0 + kb of its checked view (unit row
        // stride), C a checked, exclusively borrowed view; the context's kernel runs on this
        // CPU.
        unsafe { dots(&args) };
        args.beta = A::Acc::one();
        p0 += kb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{self, Expected, Op, Rng, Storage, TestMatrix, Values};
    use crate::gks::supported_contexts;

    /// Case `case`'s alpha and beta: classes 1 or other, and 0, 1 or other.
    fn scalars<T: Scalar>(rng: &mut Rng, case: usize) -> (T, T) {
        let values = Values::SmallIntegers;
        let alpha = [T::one(), rng.value(values)][case % 2];
        let beta = [T::zero(), T::one(), rng.value(values)][case % 3];
        (alpha, beta)
    }

    /// The k, for `T`, whose rows take `bytes`.
    fn k_of<T>(bytes: usize) -> usize {
        bytes / size_of::<T>()
    }

    /// Straight through `gemm_dots` on every configuration with a dots kernel: the shapes the
    /// path exists for must be taken and match the reference (with a second k block, C of
    /// every storage, alpha/beta classes with NaN in C under beta = 0),
    /// writing nothing outside C; the others must be declined with C untouched.
    fn taken_where_meant_and_matching<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(31);
        let values = Values::SmallIntegers;
        let mut contexts = 0;
        for cntx in supported_contexts() {
            let kernel = T::kernel(cntx);
            if kernel.dots().is_none() {
                continue;
            }
            contexts += 1;
            let long = k_of::<T>(512);
            // The rule, restated: C's columns under 64 bytes (48 gathered); k from 128 bytes,
            // from 256 for seven rows or six gathered, from 384 gathered into columns of 32
            // bytes or more. TN (op(B) column-stored) C by row blocks, k from 256 bytes:
            // a shorter side of 9–12 and a longer one of at most 64, or a shorter side of
            // 13–28 in a C of at most 800 elements, with k from 1 KiB past 576 elements; or a
            // tall C (m > n) of 9–28 columns, k as before, op(A) up to the kernel's bytes.
            let tall_max = kernel.tall_dots_max_a_bytes();
            // And a wide C (m ≤ n) of 9–28 rows that do not fill the sup kernel's vectors,
            // rows up to the kernel's bytes, k as before.
            let wide_max = kernel.wide_dots_max_row_bytes();
            let vector = kernel.sup().map_or(0, |sup| sup.tile().0 / 2);
            // Gathered rows need C wider than the sup kernel's tile.
            let tile_columns = kernel.sup().map_or(0, |sup| sup.tile().1);
            // A short, wide C of `rows`, its transpose when `transposed` (no limit on the
            // columns' bytes then).
            let short_and_wide =
                |rows: usize, cols: usize, k: usize, gathered: bool, transposed: bool| {
                    let bytes = rows * size_of::<T>();
                    let min_k_bytes = if gathered && bytes >= 32 {
                        384
                    } else if rows >= 7 || (gathered && rows >= 6) {
                        256
                    } else {
                        128
                    };
                    let max_bytes = if transposed || !gathered { 64 } else { 48 };
                    (2..=MAX_DOT_ROWS).contains(&rows)
                        && !(gathered && cols <= tile_columns)
                        && (transposed || bytes < max_bytes)
                        && k * size_of::<T>() >= min_k_bytes
                };
            let meant = |m: usize, n: usize, k: usize, op_a: Op, st_b: Storage| {
                // As it is op(B)'s columns must be contiguous, op(A)'s rows are gathered
                // unless contiguous; transposed the other way round.
                let as_is = st_b == Storage::Col && short_and_wide(m, n, k, op_a == Op::N, false);
                let transposed =
                    op_a == Op::T && short_and_wide(n, m, k, st_b == Storage::Row, true);
                let (shorter, elements) = (m.min(n), m * n);
                let k_bytes = k * size_of::<T>();
                let k_suits = elements <= 576 || k_bytes >= 1024;
                let tall = m > n && (9..=28).contains(&shorter) && m * k_bytes <= tall_max;
                let wide = m <= n
                    && (9..=28).contains(&m)
                    && vector > 0
                    && !m.is_multiple_of(vector)
                    && n * size_of::<T>() <= wide_max;
                let small_tn = op_a == Op::T
                    && k_bytes >= 256
                    && (((9..=12).contains(&shorter) && m.max(n) <= 64)
                        || ((13..=28).contains(&shorter) && elements <= 800 && k_suits)
                        || ((tall || wide) && k_suits));
                as_is || transposed || (st_b == Storage::Col && small_tn)
            };
            // (m, k, op(A), op(B) stored as): k on each side of each threshold, past two k
            // blocks, and the longest a gathered A takes in one; rows past the blocked
            // path's 12 and 28; rows a multiple of 4 KiB apart (4096 bytes: blocks of four).
            let mut shapes = vec![];
            for m in (1..=MAX_BLOCKED_DOT_ROWS + 1).chain([16, 20, 28, 29, 40]) {
                let ks = [64, 128, 252, 256, 380, 384, 512, 1020, 1024, 4096].map(k_of::<T>);
                for k in ks.into_iter().chain([2 * DOT_K_BLOCK + 3]) {
                    for op_a in [Op::N, Op::T] {
                        shapes.push((m, k, op_a, Storage::Col));
                    }
                }
            }
            // Tall C past 64 rows and 800 elements, op(A) either side of the kernel's bytes
            // for tall C (2 MiB on haswell, 8 MiB on skx: 300 rows at 32 KiB is 9.4 MiB).
            for m in [100, 300] {
                for k in [64, 1020, 1024, 4096, 32 << 10].map(k_of::<T>) {
                    for op_a in [Op::N, Op::T] {
                        shapes.push((m, k, op_a, Storage::Col));
                    }
                }
            }
            // op(B)'s rows contiguous (B row-stored): not this path's.
            shapes.push((3, long, Op::T, Storage::Row));
            shapes.push((10, long, Op::T, Storage::Row));
            let two = Rntm::new().with_num_threads(2).unwrap();
            for (case, &(m, k, op_a, st_b)) in shapes.iter().enumerate() {
                for (n, st_c) in [
                    (9, Storage::Col),
                    (17, Storage::Row),
                    (10, Storage::Gen),
                    (64, Storage::Col),
                    (65, Storage::Row),
                    (150, Storage::Col),
                    // Either side of the gathered rows' bound.
                    (tile_columns, Storage::Gen),
                    (tile_columns + 1, Storage::Col),
                ] {
                    // 150 columns for the wide rule's bound only: not under the tall rows.
                    if n == 150 && m > 40 {
                        continue;
                    }
                    let meant = meant(m, n, k, op_a, st_b);
                    // Every other case on two threads, each taking its own columns of C.
                    let threads = (case % 2 == 1).then_some((cntx, &two));
                    let (ar, ac) = op_a.stored_shape(m, k);
                    let a = TestMatrix::<T>::random(&mut rng, values, ar, ac, Storage::Col);
                    let b = TestMatrix::<T>::random(&mut rng, values, k, n, st_b);
                    let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                    let (av, bv) = (op_a.apply(a.view()), b.view());
                    let (alpha, beta) = scalars(&mut rng, case);
                    let expected = Expected::new(alpha, &av, &bv, beta, &mut c);
                    let taken =
                        gemm_dots(threads, kernel, alpha, &av, &bv, beta, &mut c.view_mut());
                    let what = format!("{}: {m}×{n}×{k} op(A) {op_a:?} B {st_b:?}", cntx.name());
                    assert_eq!(taken.is_some(), meant, "{what}: taken");
                    if meant {
                        let got = expected.compare(&c, k);
                        assert_eq!(got.residual, 0.0, "{what}: wrong values");
                        assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
                    } else {
                        assert!(
                            check::unchanged(&c.buf, &expected.original),
                            "{what}: declined but changed C"
                        );
                    }
                }
            }
        }
        // Every x86-64 machine this runs on has AVX2 at least (haswell's dots kernels).
        if cfg!(target_arch = "x86_64") && crate::sandbox::ACTIVE.is_none() {
            assert!(contexts > 0, "no configuration has a dots kernel");
        }
    }

    /// Every context's dots kernel, called directly, on every row count its contract takes
    /// (whether or not `suits` sends it there): A in place and gathered (column-stored and
    /// general), k around the register widths and up to the longest gathered (past it in
    /// place), C of every storage, beta 0 (NaN in C), 1 and other; nothing written outside C.
    fn kernel_matches_on_every_row_count<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(33);
        let values = Values::SmallIntegers;
        for cntx in supported_contexts() {
            let Some(dots) = T::kernel(cntx).dots() else {
                continue;
            };
            let mut case = 0;
            for m in 1..=MAX_DOT_ROWS {
                // Past the longest gathered k for A read in place (row-stored): whole on
                // the 32-register bodies, in blocks on the 16-register ones.
                for k in [
                    1,
                    3,
                    8,
                    17,
                    64,
                    101,
                    MAX_DOT_GATHER_K,
                    2 * MAX_DOT_GATHER_K + 5,
                ] {
                    for (st_a, n, st_c) in [
                        (Storage::Row, 13, Storage::Col),
                        (Storage::Col, 9, Storage::Row),
                        (Storage::Gen, 5, Storage::Gen),
                        (Storage::Col, 4, Storage::Col),
                        // Row-stored C (the transposed shape's) with blocks and remainders
                        // of every width, written in pairs, fours or one by one.
                        (Storage::Row, 6, Storage::Row),
                        (Storage::Col, 10, Storage::Row),
                    ] {
                        if k > MAX_DOT_GATHER_K && st_a != Storage::Row {
                            continue;
                        }
                        case += 1;
                        let a = TestMatrix::<T>::random(&mut rng, values, m, k, st_a);
                        let b = TestMatrix::<T>::random(&mut rng, values, k, n, Storage::Col);
                        let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                        let (av, bv) = (a.view(), b.view());
                        let (alpha, beta) = scalars(&mut rng, case);
                        let expected = Expected::new(alpha, &av, &bv, beta, &mut c);
                        let cv = c.view_mut();
                        let args = DotsUkrArgs {
                            m,
                            n,
                            k,
                            alpha,
                            a: av.as_ptr(),
                            rs_a: av.row_stride(),
                            cs_a: av.col_stride(),
                            b: bv.as_ptr(),
                            cs_b: bv.col_stride(),
                            beta,
                            c: cv.ptr_at(0, 0),
                            rs_c: cv.row_stride(),
                            cs_c: cv.col_stride(),
                        };
                        // SAFETY: the views describe the m×k, k×n (unit row stride) and m×n
                        // matrices in their buffers; m ≤ MAX_DOT_ROWS and k ≤
                        // MAX_DOT_GATHER_K unless A's rows are contiguous; the context is
                        // supported on this CPU.
                        unsafe { dots(&args) };
                        let what = format!("{}: {m}×{n}×{k} A {st_a:?} C {st_c:?}", cntx.name());
                        let got = expected.compare(&c, k);
                        assert_eq!(got.residual, 0.0, "{what}: wrong values");
                        assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
                    }
                }
            }
        }
    }

    #[test]
    fn kernel_matches_on_every_row_count_f32() {
        kernel_matches_on_every_row_count::<f32>();
    }

    #[test]
    fn kernel_matches_on_every_row_count_f64() {
        kernel_matches_on_every_row_count::<f64>();
    }

    #[test]
    fn taken_where_meant_and_matching_f32() {
        taken_where_meant_and_matching::<f32>();
    }

    #[test]
    fn taken_where_meant_and_matching_f64() {
        taken_where_meant_and_matching::<f64>();
    }

    /// A tall C of a few columns whose op(A) has contiguous rows is taken as its transpose,
    /// up to MAX_DOT_ROWS columns even where they fill a 512-bit vector (dgemm n = 8).
    #[test]
    fn tall_c_is_taken_transposed() {
        let mut rng = Rng::new(32);
        let values = Values::SmallIntegers;
        for (cntx, n) in supported_contexts()
            .into_iter()
            .flat_map(|c| [(c, 3), (c, 8)])
        {
            let kernel = f64::kernel(cntx);
            if kernel.dots().is_none() {
                continue;
            }
            let (m, k) = (23, 40);
            let a = TestMatrix::<f64>::random(&mut rng, values, k, m, Storage::Col);
            let b = TestMatrix::<f64>::random(&mut rng, values, k, n, Storage::Col);
            let mut c = TestMatrix::<f64>::random(&mut rng, values, m, n, Storage::Col);
            let av = Op::T.apply(a.view());
            let expected = Expected::new(1.0, &av, &b.view(), 2.0, &mut c);
            let taken = gemm_dots(None, kernel, 1.0, &av, &b.view(), 2.0, &mut c.view_mut());
            let what = format!("{}: {m}×{n}×{k}", cntx.name());
            assert!(taken.is_some(), "{what}: declined");
            let got = expected.compare(&c, k);
            assert_eq!(got.residual, 0.0, "{what}: wrong values");
            assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
        }
    }
}
