//! Products a few k steps deep: C := alpha·A·B + beta·C with k ≤ `MAX_SHORT_K`, through the
//! context's short-k kernel (contract: `ShortKUkr` in `kernels/mod.rs`), which holds a strip
//! of A in registers and streams B's columns past it. A sup tile at such a k spends most of
//! its time setting up and writing C (a 6×12 dgemm tile at k = 2 took about 74 cycles for 24
//! FMAs, session 57). One of `gemm_front`'s shortcuts (`gemm_shortcuts`, after the dots path
//! and the narrow path, `narrow.rs`, which takes a tall C of two to four columns first, and
//! before the rows of sup tiles), so the BLAS entry points' few-tile calls reach it too;
//! a row-stored C is solved transposed. With threads, each takes its own block of columns
//! (`gemv.rs`, [`gemm_by_columns_if_worth_threads`]).

use crate::cntx::{Cntx, GemmKernel};
use crate::error::Result;
use crate::kernels::{MAX_SHORT_K, ShortKUkr, ShortKUkrArgs};
use crate::l3::gemm::OUTER_PRODUCT_MIN_M;
use crate::l3::gemv::gemm_by_columns_if_worth_threads;
use crate::l3::sup::{copy_col_major, view_of_copy};
use crate::rntm::Rntm;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// C := alpha·A·B + beta·C through the short-k kernel when the problem suits it (see
/// [`short_k_suits`]), on the threads the plan gives (`threads`; `None`: the calling thread),
/// each with its own columns of C; `None`, having touched nothing, when not.
///
/// Inlined for its first tests, which turn away every problem deeper than the kernel's reach
/// (for any op(B), and for op(B) with rows far apart) or of two sup tiles or fewer in a few
/// compares: `gemm_shortcuts` runs them on every call, and the BLAS few-tile lane runs them
/// before `gemm_front` runs them again. Session 60, op(B)'s far-apart rows past k = 8
/// turned away here rather than in [`short_k_suits`], two runs in both orders: dgemm TT
/// 80×7×10 364–367 → 357–361 ns, 40×5×16 234–235 → 229–230, sgemm NT 80×5×12 121 → 118,
/// 100×7×9 162–187 → 157–180.
#[inline(always)]
pub(crate) fn gemm_short_k<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let k = a.ncols();
    if k > MAX_SHORT_K
        || (k > ANY_B_MAX_K && b.row_stride() != 1)
        || at_most_two_sup_tiles(kernel, c.nrows(), c.ncols())
    {
        return None;
    }
    gemm_short_k_if_suited(threads, kernel, alpha, a, b, beta, c)
}

/// Whether C (m×n) is at most two sup tiles in either orientation: such problems stay with
/// the sup kernel. Its one-tile calls are the BLAS entry points' one-tile lanes
/// (`frame/blas/one_tile.rs`, which may solve them transposed), which must compute what
/// `gemm_front` computes; and at two tiles the short-k kernel's strips and calls cost more
/// than they save (GFLOPS short-k / sup, alternated: dgemm 20×12×4 0.85, 16×16×4 0.93,
/// 12×20×6 0.87, sgemm 40×12×4 0.84, 24×20×6 0.86; at three or four tiles 1.11 over 18
/// shapes, session 57). True without a sup kernel, whose contexts have no short-k kernel
/// either.
#[inline(always)]
pub(crate) fn at_most_two_sup_tiles<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    m: usize,
    n: usize,
) -> bool {
    kernel.sup().is_none_or(|sup| {
        let (mr, nr) = sup.tile();
        let two_or_fewer = |m, n| (m <= mr && n <= 2 * nr) || (m <= 2 * mr && n <= nr);
        two_or_fewer(m, n) || two_or_fewer(n, m)
    })
}

/// [`gemm_short_k`] past its first test. The kernel writes columns of C: a row-stored C is
/// solved as Cᵀ = op(B)ᵀ·op(A)ᵀ.
#[inline(never)]
fn gemm_short_k_if_suited<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let short_k = kernel.short_k()?;
    if c.row_stride() == 1 {
        if !short_k_suits(kernel, a, b, c) {
            return None;
        }
        return Some(on_threads(threads, kernel, short_k, alpha, a, b, beta, c));
    }
    if c.col_stride() != 1 {
        return None;
    }
    let (bt, at) = A::swapped(a, b)?;
    let mut ct = c.rb().t();
    if !short_k_suits(kernel, &bt, &at, &ct) {
        return None;
    }
    Some(on_threads(
        threads, kernel, short_k, alpha, &bt, &at, beta, &mut ct,
    ))
}

/// The longest k the short-k kernel takes with any op(B). Past it (one-vector strips, k up to
/// 16) only op(B) with adjacent rows (NN, TN): there it read 1.01–1.89× the sup path (27
/// shapes, session 57), but op(B) = Bᵀ lost on sgemm C of few rows (TT 17×64×12
/// 0.69, 4×500×12 0.75, NT 4×500×12 0.76, 9×300×13 0.85), where k broadcasts a column come
/// from k rows far apart and other paths serve such C well.
const ANY_B_MAX_K: usize = 8;

/// [`ANY_B_MAX_K`] for a C no wider than one sup tile (n ≤ NR) whose op(B) has rows far
/// apart (NT, TT). At k = 8 such C ran faster through the sup path (session 59, a Zen 4, one
/// thread, two alternated runs, sup path against short-k): dgemm TT 68×7×8 1.77×, 40×3×8
/// 1.75×, 400×7×8 1.56×, 150×12×8 1.19×; sgemm TT 68×5×8 1.63×, 400×11×8 1.28×; dgemm NT
/// 40×3×8 1.34×, 68×7×8 1.14×; sgemm NT 150×3×8 1.28×, 68×7×8 1.12×; the least dgemm TT
/// 40×12×8 0.83, sgemm TT 68×12×8 0.86. Wider C kept ahead on short-k (dgemm NT 68×64×8
/// 0.76, sgemm TT 68×24×8 0.86), and so did shorter k on most shapes (sgemm TT 68×7×4 0.69).
/// Over that grid (m = 20–400, n = 3–64, k = 2–8), against the better path per shape, the
/// geometric mean went from 0.876 to 0.929 (dgemm TT), 0.966 to 0.990 (sgemm TT), 0.978 to
/// 0.997 (dgemm NT) and 0.982 to 0.993 (sgemm NT). dgemm TT of up to 7 columns gained at
/// k = 4–6 too (68×5×6 1.59×, 40×3×4 1.29×), but sgemm lost there (68×7×6 0.74), and that
/// stays as it is.
const NARROW_ANY_B_MAX_K: usize = 7;

/// Whether the short-k kernel takes this problem, C column-stored: k within its reach (past
/// [`ANY_B_MAX_K`], or [`NARROW_ANY_B_MAX_K`] for C of at most NR columns, only with op(B)'s
/// rows adjacent), A
/// within the sup limits' largest (it is read in place, as on the sup path: a context whose
/// limits keep problems off the sup path, a test's, keeps them off this one too), nothing
/// conjugated (more than two sup tiles, [`at_most_two_sup_tiles`], was [`gemm_short_k`]'s
/// first test, the same in either orientation), and not an outer
/// product of long columns, which the gemv kernel writes column by column
/// ([`OUTER_PRODUCT_MIN_M`]).
fn short_k_suits<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    kernel: &GemmKernel<A, B>,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &MatMut<A::Acc>,
) -> bool {
    let (m, k) = (c.nrows(), a.ncols());
    let Some(sup) = kernel.sup() else {
        return false;
    };
    let outer_product_of_long_columns = k == 1 && m >= OUTER_PRODUCT_MIN_M;
    let max_k = if b.row_stride() == 1 {
        MAX_SHORT_K
    } else if c.ncols() > sup.tile().1 {
        ANY_B_MAX_K
    } else {
        NARROW_ANY_B_MAX_K
    };
    (1..=max_k).contains(&k)
        && m.saturating_mul(k).saturating_mul(size_of::<A>()) <= sup.limits().max_a_bytes
        && !a.is_conj()
        && !b.is_conj()
        && !outer_product_of_long_columns
}

/// [`gemm_short_k`] once the problem suits the kernel, C column-stored.
#[allow(clippy::too_many_arguments)]
fn on_threads<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    short_k: ShortKUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    // Where A's rows are not adjacent (op(A) = Aᵀ), the kernel gathers each strip of A onto
    // the stack, once per strip and call; a C that takes more than one call has A copied
    // column-major once instead (gathered per call, dgemm TN 1098×1537×5 ran at 0.95 of the
    // sup path).
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let stride_bytes = c.col_stride().unsigned_abs() * size_of::<A::Acc>();
    let mut a_copy = None;
    let a = &if a.row_stride() != 1 && columns_per_call::<A::Acc>(m, n, stride_bytes) < n {
        let transpose_a = kernel.pack_transposes().0;
        view_of_copy(a_copy.insert(copy_col_major(a, transpose_a, "A")?), m, k)
    } else {
        *a
    };
    let per_block = |a: &MatRef<A>, b: &MatRef<B>, c: &mut MatMut<A::Acc>| {
        run(short_k, alpha, a, b, beta, c);
        Ok(())
    };
    gemm_by_columns_if_worth_threads(threads, kernel.blocksizes(), per_block, a, b, c)
}

/// Columns of C (m×n, its columns `stride_bytes` apart) per kernel call. The kernel passes
/// down C strip by strip, and each strip sweeps the call's columns, so those columns are
/// kept few enough to stay in the L2 between strips (whole, C of 2000×2000 f64 at k = 4 ran
/// at half the speed of the sup tiles), and where C's columns are a multiple of 1 KiB apart,
/// few enough not to crowd the L1's sets they fall in (sgemm 512×4096×2, columns 2 KiB apart:
/// 64 columns a call ran at 0.6 of 16).
fn columns_per_call<T>(m: usize, n: usize, stride_bytes: usize) -> usize {
    let by_l1_sets = L1_WAYS * l1_sets_columns_cycle_through(stride_bytes);
    if n <= MIN_BLOCK_COLUMNS
        || (n <= by_l1_sets && m.saturating_mul(n * size_of::<T>()) <= C_BLOCK_BYTES)
    {
        return n;
    }
    (C_BLOCK_BYTES / (m * size_of::<T>()))
        .min(by_l1_sets)
        .max(MIN_BLOCK_COLUMNS)
}

/// The most bytes of C one kernel call covers (see [`columns_per_call`]).
const C_BLOCK_BYTES: usize = 128 << 10;

/// The fewest columns of C one kernel call covers, however tall C is.
const MIN_BLOCK_COLUMNS: usize = 8;

/// The ways of the smallest L1 data cache the x86 configurations meet (32 KiB, 8 ways, 64
/// sets of 64-byte lines).
const L1_WAYS: usize = 8;

/// How many sets of the L1 (64 sets of 64-byte lines) the first lines of consecutive
/// columns `stride_bytes` apart cycle through: 1 for a multiple of 4 KiB, 2 for 2 KiB, and
/// all 64 where the stride is not a whole number of lines (columns then start at every
/// offset within a line, and their lines spread).
fn l1_sets_columns_cycle_through(stride_bytes: usize) -> usize {
    if !stride_bytes.is_multiple_of(64) {
        return 64;
    }
    64 >> (stride_bytes / 64).trailing_zeros().min(6)
}

/// C (m, n ≥ 1; k within the kernel's reach), column-stored, by kernel calls on blocks of its
/// columns.
fn run<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    short_k: ShortKUkr<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    if c.nrows() == 0 || c.ncols() == 0 {
        return;
    }
    let (m, n) = (c.nrows(), c.ncols());
    let block =
        columns_per_call::<A::Acc>(m, n, c.col_stride().unsigned_abs() * size_of::<A::Acc>());
    let mut args = ShortKUkrArgs {
        m,
        n: 0,
        k: a.ncols(),
        alpha,
        a: a.as_ptr(),
        rs_a: a.row_stride(),
        cs_a: a.col_stride(),
        b: b.as_ptr(),
        rs_b: b.row_stride(),
        cs_b: b.col_stride(),
        beta,
        c: c.ptr_at(0, 0),
        cs_c: c.col_stride(),
    };
    let mut first = 0;
    while first < n {
        args.n = block.min(n - first);
        args.b = b.as_ptr().wrapping_offset(first as isize * b.col_stride());
        args.c = c.ptr_at(0, first);
        // SAFETY: A (m×k), B's columns first..first + n (k×n) and C's (m×n, rows adjacent)
        // are in checked views, C exclusively borrowed and so apart from A and B; k is within
        // the kernel's reach (`short_k_suits`); the context's kernel runs on this CPU.
        unsafe { short_k(&args) };
        first += args.n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Op, Rng, Storage, TestMatrix, Values};
    use crate::gks::supported_contexts;

    /// `short_k_suits` against the rule restated, on every context with a short-k kernel:
    /// k up to 16 with op(B)'s rows adjacent, else up to 8, or 7 for C of at most NR
    /// columns; C wider than two sup tiles, either side of NR columns.
    fn k_reach_as_stated<T: GemmPair<T, Acc = T> + crate::types::Scalar>() {
        let mut rng = Rng::new(59);
        let mut contexts = 0;
        for cntx in supported_contexts() {
            let kernel = T::kernel(cntx);
            let (Some(sup), Some(_)) = (kernel.sup(), kernel.short_k()) else {
                continue;
            };
            contexts += 1;
            let (mr, nr) = sup.tile();
            let m = 3 * mr;
            for n in [nr - 1, nr, nr + 1, 40] {
                for k in 1..=MAX_SHORT_K + 1 {
                    for op_b in [Op::N, Op::T] {
                        // Only the shapes and strides count here.
                        let mut matrix = |rows, cols| {
                            TestMatrix::<T>::random(
                                &mut rng,
                                Values::SmallIntegers,
                                rows,
                                cols,
                                Storage::Col,
                            )
                        };
                        let (br, bc) = op_b.stored_shape(k, n);
                        let (a, b, mut c) = (matrix(m, k), matrix(br, bc), matrix(m, n));
                        let (av, bv) = (a.view(), op_b.apply(b.view()));
                        let max_k = match (op_b, n > nr) {
                            (Op::N, _) => 16,
                            (_, true) => 8,
                            (_, false) => 7,
                        };
                        assert_eq!(
                            short_k_suits(kernel, &av, &bv, &c.view_mut()),
                            k <= max_k,
                            "{}: {m}×{n}×{k} op(B) {op_b:?}",
                            cntx.name()
                        );
                    }
                }
            }
        }
        // skx registers short-k kernels: where it runs, they must have been checked.
        let skx = supported_contexts().iter().any(|cntx| cntx.name() == "skx");
        if skx && crate::sandbox::ACTIVE.is_none() {
            assert!(contexts > 0, "skx is supported but has no short-k kernel");
        }
    }

    #[test]
    fn k_reach_as_stated_f32() {
        k_reach_as_stated::<f32>();
    }

    #[test]
    fn k_reach_as_stated_f64() {
        k_reach_as_stated::<f64>();
    }
}
