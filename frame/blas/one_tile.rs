//! The BLAS entry points' shortcut for a problem of a few sup tiles (up to `MAX_TILES`, at
//! most `ROW_TILES` side by side, `frame/l3/one_tile.rs`): straight from the reference checks
//! to the kernel calls there.
//!
//! At such sizes the layers between the C ABI and the kernel are most of a call's time: a
//! 2×2×2 `cblas_dgemm` took 34 ns through [`crate::gemm_ex`]'s checks and dispatch and 14 ns
//! as a bare kernel call, against OpenBLAS's 17 (docs/Performance.md, session 24). The
//! reference checks have already established most of what `check_gemm` tests (the shapes
//! compose, C's elements are distinct since LDC ≥ M), so what is left here is whether C's
//! bytes lie apart from A's and B's, tested on the column-major arrays directly.
//!
//! The dispatch is `gemm_front`'s own, so the same problems reach the same kernel calls with
//! the same arguments (`lanes_compute_what_gemm_front_computes` checks it bit for bit):
//! * lanes that make the one kernel call from the caller's arrays as they are, without views
//!   (session 56): a single tile solved as it is ([`single_tile`]) or transposed
//!   ([`single_tile_transposed`]), and a C of one column or one row to the gemv kernel
//!   ([`single_gemv`], `gemm_front`'s first choice for those);
//! * then, on views, `gemm_shortcuts`: a short, wide C with op(B)'s columns contiguous as dot
//!   products, a tall C of a few columns at short k through the columns kernel, a product a
//!   few k steps deep through the short-k kernel, then the rows of tiles.
//!
//! Anything else (alpha = 0, k = 0, more tiles, arrays whose spans meet) takes the usual path,
//! which tells an overlap from arrays that merely interleave.

use crate::blas::gemm::{GemmArgs, Op, op};
use crate::cntx::{Cntx, GemmKernel, SupKernel};
use crate::kernels::{GemvUkrArgs, SupUkrArgs};
use crate::l3::gemm::{gemm_shortcuts, sup_solves_transposed};
use crate::l3::one_tile::{ONE_TILE_MAX_K, few_tiles};
use crate::l3::sup::run_sup_tile;
use crate::types::{GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// Computes the call through one of the lanes or `gemm_front`'s shortcuts (see the module
/// docs) when it is a problem of a few tiles of `cntx`'s kernel (`few_tiles`) that one of them
/// takes and C's bytes lie apart from A's and B's, and returns true; returns false, having
/// touched nothing, otherwise.
///
/// # Safety
/// The BLAS contract of `args`, whose reference checks passed and which is no quick return
/// (M, N ≥ 1).
#[inline(always)]
pub(crate) unsafe fn blas_one_tile<T>(cntx: &Cntx, args: &GemmArgs<T>) -> bool
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    // A sandbox sees every call first (sandbox/mod.rs).
    if crate::sandbox::ACTIVE.is_some() || args.k == 0 || args.alpha.is_zero() {
        return false;
    }
    let kernel = T::kernel(cntx);
    let Some(sup) = kernel.sup() else {
        return false;
    };
    if let Some(tile) = single_tile(sup, args, false) {
        // SAFETY: the BLAS contract of `args`: the tile is the whole of C, A's rows are
        // contiguous and unconjugated, B unconjugated, C apart from both (`single_tile`);
        // the context's kernel runs on this CPU.
        unsafe { run_sup_tile(sup, &tile) };
        return true;
    }
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    // In either orientation (`gemm_rows_of_tiles` may solve Cᵀ = op(B)ᵀ·op(A)ᵀ).
    let tile = sup.tile();
    if !(few_tiles(m, n, k, tile) || few_tiles(n, m, k, tile)) {
        return false;
    }
    // gemm_front sends one column or one row to the gemv kernel first.
    if (m == 1 || n == 1)
        && let Some(gemv) = kernel.gemv()
    {
        let Some(column) = single_gemv(args) else {
            return false;
        };
        // SAFETY: the BLAS contract of `args`: A, x (a column of op(B), or a row of op(A))
        // and y (C's one column or row) as `single_gemv` describes them, y apart from both;
        // the context's kernel runs on this CPU.
        unsafe { gemv(&column) };
        return true;
    }
    // SAFETY: the caller's (for both).
    if args.transb != Op::Plain && unsafe { single_tile_transposed(kernel, args) } {
        return true;
    }
    // SAFETY: the caller's, with the sizes within a few tiles.
    unsafe { rows_of_tiles(kernel, args) }
}

/// [`blas_one_tile`] for a problem of a few tiles, not one, and no gemv shape: the views,
/// and `gemm_front`'s shortcuts on them. Out of line, so that the calls taken before do not
/// carry its frame.
///
/// # Safety
/// As [`blas_one_tile`], with the sizes within `few_tiles` of the kernel's tile in either
/// orientation.
#[inline(never)]
unsafe fn rows_of_tiles<T>(kernel: &GemmKernel<T, T>, args: &GemmArgs<T>) -> bool
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let Some(sup) = kernel.sup() else {
        return false;
    };
    let tile = sup.tile();
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    // Past one row of tiles the kernel must read A in place (`gemm_rows_of_tiles`): op(A) =
    // A, or op(B) = Bᵀ (or Bᴴ) in a problem solved transposed (`sup_solves_transposed`). Other
    // calls would be declined there, after the views and the shortcuts' tests: dgemm TN 24³
    // was 2 % slower than before the shortcut took a few rows, without this test.
    let transposed_may_read_a = !matches!(args.transb, Op::Plain);
    if m > tile.0 && !matches!(args.transa, Op::Plain) && !transposed_may_read_a {
        return false;
    }
    let (a_rows, a_cols) = args.transa.shape_of_operand(m, k);
    let (b_rows, b_cols) = args.transb.shape_of_operand(k, n);
    let (lda, ldb, ldc) = (args.lda as usize, args.ldb as usize, args.ldc as usize);
    let c_bytes = array_bytes(args.c.cast_const(), m, n, ldc);
    if !apart(c_bytes, array_bytes(args.a, a_rows, a_cols, lda))
        || !apart(c_bytes, array_bytes(args.b, b_rows, b_cols, ldb))
    {
        return false;
    }
    // SAFETY: the BLAS contract: these are the arrays the caller passed, with the extents
    // BLAS defines; bounded to a row of tiles (`array_bytes`), they fit in isize.
    let (a, b, mut c) = unsafe {
        (
            MatRef::from_blas_array(args.a, a_rows, a_cols, lda),
            MatRef::from_blas_array(args.b, b_rows, b_cols, ldb),
            MatMut::from_blas_array(args.c, m, n, ldc),
        )
    };
    let (a, b) = (op(a, args.transa), op(b, args.transb));
    // gemm_front's own shortcuts, on this thread (a row of tiles is below any thread
    // threshold).
    gemm_shortcuts(None, kernel, args.alpha, &a, &b, args.beta, &mut c)
        .is_some_and(|result| result.is_ok())
}

/// The kernel call for a problem that is a single tile of `sup`'s that `gemm_front` solves as
/// it is, made as the rows of tiles would make it (`gemm_rows_of_tiles`) but from the
/// caller's arrays as they are; `None` for any other problem (those solved transposed:
/// [`single_tile_transposed`]). Measured (session 56, skx, `cblas_dgemm` NN, ns, through the
/// rows of tiles → the kernel called directly; OpenBLAS): 2³ 28.8 → 18.5 (18.4), 4³ 30.6 →
/// 21.5 (21.1), 8³ 44.6 → 35.5 (41).
///
/// The problems are those for which `gemm_front`'s earlier choices decline and the rows of
/// tiles make one kernel call on the operands in place, so that both reach the same call
/// with the same arguments:
/// * 2 rows and columns or more (one of either is a gemv shape, `gemm_by_columns`), within
///   one tile;
/// * op(A) = A, read in place; op(B) = B, or Bᵀ with C no wider than it is tall (a wider one
///   may be the short, wide rule's, `sup_solves_transposed`, unless the caller has asked it:
///   `not_transposed`), unconjugated;
/// * k up to [`ONE_TILE_MAX_K`], the rows of tiles' bound. The dots path, `gemm_front`'s
///   first shortcut, takes no such C at any k: with op(A) = A it would gather op(A)'s rows,
///   which it does only for C wider than a tile (`dots::suits`; until session 59, when it
///   took narrower C too, this lane took only k too short for it: under 16 for dgemm, 32
///   for sgemm);
/// * A within the kernel's limits (`SupKernel::suits`, for a column-stored C);
/// * C's bytes apart from A's and B's.
#[inline(always)]
fn single_tile<T>(
    sup: &SupKernel<T, T>,
    args: &GemmArgs<T>,
    not_transposed: bool,
) -> Option<SupUkrArgs<T, T>>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let (mr, nr) = sup.tile();
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    let (lda, ldb, ldc) = (args.lda as usize, args.ldb as usize, args.ldc as usize);
    let b_transposed = match args.transb {
        Op::Plain => false,
        Op::ConjTranspose if T::IS_COMPLEX => return None,
        Op::Transpose | Op::ConjTranspose => true,
    };
    if args.transa != Op::Plain
        || !(2..=mr).contains(&m)
        || !(2..=nr).contains(&n)
        || (b_transposed && n > m && !not_transposed)
        || k > ONE_TILE_MAX_K
        || !sup.suits(m, n, k, Some(lda))
    {
        return None;
    }
    let (b_rows, b_cols) = args.transb.shape_of_operand(k, n);
    let c_bytes = array_bytes(args.c.cast_const(), m, n, ldc);
    if !apart(c_bytes, array_bytes(args.a, m, k, lda))
        || !apart(c_bytes, array_bytes(args.b, b_rows, b_cols, ldb))
    {
        return None;
    }
    let (rs_b, cs_b) = args.transb.strides(ldb);
    Some(SupUkrArgs {
        m,
        n,
        k,
        alpha: args.alpha,
        a: args.a,
        cs_a: lda as isize,
        b: args.b,
        rs_b,
        cs_b,
        beta: args.beta,
        c: args.c,
        rs_c: 1,
        cs_c: ldc as isize,
    })
}

/// [`single_tile`] for a problem `gemm_front` solves transposed, Cᵀ = op(B)ᵀ·op(A)ᵀ
/// (`sup_solves_transposed`: some TT problems, and a short, wide C with op(B)'s rows
/// contiguous): the kernel reads B as its A and op(A)ᵀ as its B, in place, and writes C by
/// rows. Computes it and returns true; or, where `gemm_front` would solve the problem as it
/// is and it is one tile of `single_tile`'s, computes that tile and returns true; or returns
/// false, having touched nothing. Out of line,
/// so that the calls [`single_tile`] takes do not carry its views (inlined, they cost dgemm
/// NN 2³ 42 instructions and 6–13 % of its time). Measured (session 56, skx, through
/// `cblas_{s,d}gemm` TT, ns, the rows of tiles → here; OpenBLAS): sgemm 2³ 32.3 → 28.0
/// (55.2), 8³ 44.1 → 38.8 (54.1); dgemm 2³ 32.4 → 29.0 (27.1), 4³ 34.2 → 30.5 (27.3), 8³
/// 52.7 → 46.3 (48.8).
///
/// The same conditions as [`single_tile`]'s, in the transposed orientation: 2 rows and
/// columns or more, k up to [`ONE_TILE_MAX_K`] (the dots path would gather B's rows for a
/// C of at most a tile's columns, which it declines), op(B)ᵀ (B) read in place, nothing
/// conjugated, Cᵀ one tile, B within the kernel's limits for a row-stored C
/// (`SupKernel::suits_row_stored_c`), C's bytes apart from A's and B's.
///
/// # Safety
/// As [`blas_one_tile`].
#[inline(never)]
unsafe fn single_tile_transposed<T>(kernel: &GemmKernel<T, T>, args: &GemmArgs<T>) -> bool
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let Some(sup) = kernel.sup() else {
        return false;
    };
    let (mr, nr) = sup.tile();
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    let (lda, ldb, ldc) = (args.lda as usize, args.ldb as usize, args.ldc as usize);
    let conjugated =
        T::IS_COMPLEX && (args.transa == Op::ConjTranspose || args.transb == Op::ConjTranspose);
    if args.transb == Op::Plain
        || conjugated
        || !(2..=nr).contains(&m)
        || !(2..=mr).contains(&n)
        || k > ONE_TILE_MAX_K
        || !sup.suits_row_stored_c(n, m, k, Some(ldb))
    {
        return false;
    }
    let (a_rows, a_cols) = args.transa.shape_of_operand(m, k);
    let c_bytes = array_bytes(args.c.cast_const(), m, n, ldc);
    if !apart(c_bytes, array_bytes(args.a, a_rows, a_cols, lda))
        || !apart(c_bytes, array_bytes(args.b, n, k, ldb))
    {
        return false;
    }
    // SAFETY: the BLAS contract: the caller's arrays with the extents BLAS defines, each at
    // most a tile's side by ONE_TILE_MAX_K with leading dimensions under 2^31, so they fit
    // in isize.
    let (a, b, c) = unsafe {
        (
            MatRef::from_blas_array(args.a, a_rows, a_cols, lda),
            MatRef::from_blas_array(args.b, n, k, ldb),
            MatMut::from_blas_array(args.c, m, n, ldc),
        )
    };
    let (a, b) = (op(a, args.transa), op(b, args.transb));
    if !sup_solves_transposed(kernel, &c, &a, &b) {
        // Solved as it is: a C wider than it is tall with op(B) = Bᵀ, which `single_tile`
        // leaves to this test, is one tile as it is where it fits one (before, it went
        // through the rows of tiles: dgemm NT 9×11×5 76 ns against 41 for 11×9×5).
        // SAFETY: the caller's.
        return unsafe { wide_tile_as_is(sup, args) };
    }
    // op(A)ᵀ's strides: op(A)'s, swapped (A itself for TT, Aᵀ for NT).
    let (cs_at, rs_at) = args.transa.strides(lda);
    let tile = SupUkrArgs {
        m: n,
        n: m,
        k,
        alpha: args.alpha,
        a: args.b,
        cs_a: ldb as isize,
        b: args.a,
        rs_b: rs_at,
        cs_b: cs_at,
        beta: args.beta,
        c: args.c,
        rs_c: ldc as isize,
        cs_c: 1,
    };
    // SAFETY: the BLAS contract of `args`: Cᵀ is one tile, the kernel's A (B) has contiguous
    // rows, nothing is conjugated, C apart from A and B; the context's kernel runs on this
    // CPU.
    unsafe { run_sup_tile(sup, &tile) };
    true
}

/// [`single_tile`] for a C wider than it is tall with op(B) = Bᵀ that `gemm_front` solves as
/// it is (its caller has asked `sup_solves_transposed`): computes the tile and returns true,
/// or returns false, having touched nothing. Out of line, so that the transposed tiles'
/// calls do not carry its frame (inlined, they ran 3–5 % slower: sgemm NT 4×7×3).
///
/// # Safety
/// As [`blas_one_tile`].
#[inline(never)]
unsafe fn wide_tile_as_is<T>(sup: &SupKernel<T, T>, args: &GemmArgs<T>) -> bool
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    let Some(tile) = single_tile(sup, args, true) else {
        return false;
    };
    // SAFETY: the BLAS contract of `args`: the tile is the whole of C, A's rows are
    // contiguous and unconjugated, B unconjugated, C apart from both (`single_tile`); the
    // context's kernel runs on this CPU.
    unsafe { run_sup_tile(sup, &tile) };
    true
}

/// The gemv kernel call for a C of one column (m×1) or, failing that, one row (1×n, solved as
/// Cᵀ = op(B)ᵀ·op(A)ᵀ), made as `gemm_front` makes it (`gemm_by_columns`, from the views'
/// strides and conjugation) but from the caller's arrays as they are; `None` for any other C,
/// or where C's bytes are not apart from A's and B's. The caller bounds the sizes to a few
/// tiles (`few_tiles`, either orientation), which `array_bytes` needs.
#[inline(always)]
fn single_gemv<T>(args: &GemmArgs<T>) -> Option<GemvUkrArgs<T, T>>
where
    T: GemmPair<T, Acc = T> + Scalar,
{
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    let (lda, ldb, ldc) = (args.lda as usize, args.ldb as usize, args.ldc as usize);
    if m != 1 && n != 1 {
        return None;
    }
    let (a_rows, a_cols) = args.transa.shape_of_operand(m, k);
    let (b_rows, b_cols) = args.transb.shape_of_operand(k, n);
    let c_bytes = array_bytes(args.c.cast_const(), m, n, ldc);
    if !apart(c_bytes, array_bytes(args.a, a_rows, a_cols, lda))
        || !apart(c_bytes, array_bytes(args.b, b_rows, b_cols, ldb))
    {
        return None;
    }
    // op(X)'s strides and pending conjugation, as `op` gives its view.
    let (rs_a, cs_a) = args.transa.strides(lda);
    let (rs_b, cs_b) = args.transb.strides(ldb);
    let conj_a = T::IS_COMPLEX && args.transa == Op::ConjTranspose;
    let conj_b = T::IS_COMPLEX && args.transb == Op::ConjTranspose;
    Some(if n == 1 {
        // y = C's column, x = op(B)'s.
        GemvUkrArgs {
            m,
            k,
            alpha: args.alpha,
            a: args.a,
            rs_a,
            cs_a,
            conj_a,
            x: args.b,
            inc_x: rs_b,
            conj_x: conj_b,
            beta: args.beta,
            y: args.c,
            inc_y: 1,
        }
    } else {
        // Cᵀ's column (C's row, ldc apart) := op(B)ᵀ · op(A)ᵀ's column (op(A)'s row).
        GemvUkrArgs {
            m: n,
            k,
            alpha: args.alpha,
            a: args.b,
            rs_a: cs_b,
            cs_a: rs_b,
            conj_a: conj_b,
            x: args.a,
            inc_x: cs_a,
            conj_x: conj_a,
            beta: args.beta,
            y: args.c,
            inc_y: ldc as isize,
        }
    })
}

/// The bytes `[start, end)` of a column-major `rows`×`cols` array (both at least 1) with
/// leading dimension `ld`. The callers bound the sizes to a few sup tiles (`few_tiles`: k ≤
/// 256, neither side past 24·MR), so the product fits (`cols` ≤ 768 and `ld` < 2^31).
fn array_bytes<T>(p: *const T, rows: usize, cols: usize, ld: usize) -> (usize, usize) {
    let start = p as usize;
    let elements = (cols - 1) * ld + rows;
    (start, start.wrapping_add(elements * size_of::<T>()))
}

/// Whether two byte ranges `[start, end)` share no byte.
fn apart(x: (usize, usize), y: (usize, usize)) -> bool {
    x.1 <= y.0 || y.1 <= x.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_int;

    use crate::blas::gemm::Op;
    use crate::check::{self, Expected, Rng, Storage, TestMatrix, Values};
    use crate::gks::supported_contexts;
    use crate::l3::gemm::sup_solves_transposed;
    use crate::l3::one_tile::{MAX_TILES, MAX_WORK, ONE_TILE_MAX_K, ROW_TILES};
    use crate::types::{c32, c64};

    const OPS: [(Op, check::Op); 3] = [
        (Op::Plain, check::Op::N),
        (Op::Transpose, check::Op::T),
        (Op::ConjTranspose, check::Op::C),
    ];

    /// Every op() pair, every row count up to one past the tile, then around two and
    /// `MAX_TILES` rows of tiles, column counts around the tile's and the row's (a partial
    /// last tile, a row of `ROW_TILES`, one column past it), depths around `ONE_TILE_MAX_K`
    /// (short ones past one tile) and, past one row of tiles, either side of `MAX_WORK`;
    /// (alpha, beta) cycling through 0, 1 and random with NaN in C under beta = 0, on every
    /// configuration. Taken calls must match the reference and write nothing outside C;
    /// declined ones must leave C alone; and the calls the shortcut exists for (a few tiles,
    /// alpha ≠ 0, short k, no gemv shape, operands read in place) must be taken (the gemv
    /// shapes: `lanes_compute_what_gemm_front_computes`).
    fn rows_of_tiles_match_the_reference<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(24);
        let mut case = 0usize;
        for cntx in supported_contexts() {
            let Some(sup) = T::kernel(cntx).sup() else {
                continue;
            };
            let (mr, nr) = sup.tile();
            let mut taken = 0;
            for (transa, op_a) in OPS {
                for (transb, op_b) in OPS {
                    let rows = [2 * mr - 1, 2 * mr, 2 * mr + 1, 4 * mr, 4 * mr + 1];
                    for m in (1..=mr + 1)
                        .chain(rows)
                        .chain([MAX_TILES * mr, MAX_TILES * mr + 1])
                    {
                        let row = ROW_TILES * nr;
                        for n in [1, 2, nr - 1, nr, nr + 1, 2 * nr + 1, row, row + 1] {
                            let mut ks = vec![1, 3, 16];
                            if n <= nr {
                                ks.extend([ONE_TILE_MAX_K, ONE_TILE_MAX_K + 1]);
                            } else {
                                ks.push(33);
                            }
                            // The first k whose work reaches MAX_WORK, and the one before.
                            let k_at_limit = MAX_WORK.div_ceil(m * n);
                            if m > mr && k_at_limit <= ONE_TILE_MAX_K {
                                ks.extend([k_at_limit - 1, k_at_limit]);
                            }
                            for k in ks {
                                case += 1;
                                taken += one_case::<T>(
                                    &mut rng,
                                    cntx,
                                    case,
                                    (transa, op_a),
                                    (transb, op_b),
                                    m,
                                    n,
                                    k,
                                ) as usize;
                            }
                        }
                    }
                }
            }
            if crate::sandbox::ACTIVE.is_none() {
                assert!(taken > 0, "{}: no call took the shortcut", cntx.name());
            } else {
                // A sandbox sees every call first, so the shortcut takes none.
                assert_eq!(
                    taken,
                    0,
                    "{}: the shortcut bypassed the sandbox",
                    cntx.name()
                );
            }
        }
    }

    /// A random m×n×k problem for op()s `ops`, its arrays column-stored, with alpha 0 every
    /// third `case`, 1 the next, random the third; beta 0, 1, random, random by fours.
    struct Problem<T> {
        a: TestMatrix<T>,
        b: TestMatrix<T>,
        c: TestMatrix<T>,
        alpha: T,
        beta: T,
    }

    impl<T: Scalar> Problem<T> {
        fn random(
            rng: &mut Rng,
            values: Values,
            (op_a, op_b): (check::Op, check::Op),
            m: usize,
            n: usize,
            k: usize,
            case: usize,
        ) -> Self {
            let (ar, ac) = op_a.stored_shape(m, k);
            let (br, bc) = op_b.stored_shape(k, n);
            let a = TestMatrix::random(rng, values, ar, ac, Storage::Col);
            let b = TestMatrix::random(rng, values, br, bc, Storage::Col);
            let c = TestMatrix::random(rng, values, m, n, Storage::Col);
            let alpha = match case % 3 {
                0 => T::zero(),
                1 => T::one(),
                _ => rng.value(values),
            };
            let beta = match case % 4 {
                0 => T::zero(),
                1 => T::one(),
                _ => rng.value(values),
            };
            Problem {
                a,
                b,
                c,
                alpha,
                beta,
            }
        }
    }

    /// The BLAS arguments of a problem on test matrices (column-major with their columns as
    /// leading dimensions, so they pass the reference checks).
    fn blas_args<T: Scalar>(
        (transa, transb): (Op, Op),
        (m, n, k): (usize, usize, usize),
        alpha: T,
        a: &TestMatrix<T>,
        b: &TestMatrix<T>,
        beta: T,
        c: &mut TestMatrix<T>,
    ) -> GemmArgs<T> {
        let ld = |x: &TestMatrix<T>| x.cs as c_int;
        GemmArgs {
            transa,
            transb,
            m: m as c_int,
            n: n as c_int,
            k: k as c_int,
            alpha,
            a: a.buf.as_ptr(),
            lda: ld(a),
            b: b.buf.as_ptr(),
            ldb: ld(b),
            beta,
            c: c.buf.as_mut_ptr(),
            ldc: ld(c),
        }
    }

    /// One call; returns whether the shortcut took it.
    #[allow(clippy::too_many_arguments)]
    fn one_case<T>(
        rng: &mut Rng,
        cntx: &Cntx,
        case: usize,
        (transa, op_a): (Op, check::Op),
        (transb, op_b): (Op, check::Op),
        m: usize,
        n: usize,
        k: usize,
    ) -> bool
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let problem = Problem::<T>::random(rng, Values::SmallIntegers, (op_a, op_b), m, n, k, case);
        let Problem {
            a,
            b,
            mut c,
            alpha,
            beta,
        } = problem;
        // A short, wide C with op(B)'s rows contiguous is taken transposed, by gemm_front's
        // own rule: then op(B)ᵀ is the kernel's A and n its rows.
        let transposed = sup_solves_transposed(
            T::kernel(cntx),
            &c.view_mut(),
            &op_a.apply(a.view()),
            &op_b.apply(b.view()),
        );
        let expected = Expected::new(
            alpha,
            &op_a.apply(a.view()),
            &op_b.apply(b.view()),
            beta,
            &mut c,
        );
        let args = blas_args((transa, transb), (m, n, k), alpha, &a, &b, beta, &mut c);
        // SAFETY: the arrays are the test matrices' buffers, with their shapes and leading
        // dimensions (column-major, so they pass the reference checks); m, n ≥ 1.
        let took = unsafe { blas_one_tile(cntx, &args) };
        let what = format!(
            "{}: {m}×{n}×{k} {:?}{:?} alpha {alpha:?} beta {beta:?}",
            cntx.name(),
            transa,
            transb
        );
        if took {
            let got = expected.compare(&c, k);
            assert_eq!(got.residual, 0.0, "{what}: wrong values");
            assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
        } else {
            assert!(
                check::unchanged(&c.buf, &expected.original),
                "{what}: declined but changed C"
            );
        }
        let Some(sup) = T::kernel(cntx).sup() else {
            return took;
        };
        let (mr, nr) = sup.tile();
        // Read in place (a copy of A or of a conjugated B is taken only if it fits the
        // stack buffer, in a problem of one row of tiles), within the kernel's limits (the
        // kernel's A is column-major with its rows as leading dimension, here and in place).
        let meant = if transposed {
            let in_place =
                !T::IS_COMPLEX || (transa != Op::ConjTranspose && transb != Op::ConjTranspose);
            let tiles = n.div_ceil(mr) * m.div_ceil(nr);
            tiles <= MAX_TILES
                && m <= ROW_TILES * nr
                && k <= ONE_TILE_MAX_K
                && in_place
                && sup.suits_row_stored_c(n, m, k, Some(n))
        } else {
            let in_place = transa == Op::Plain && (!T::IS_COMPLEX || transb != Op::ConjTranspose);
            let tiles = m.div_ceil(mr) * n.div_ceil(nr);
            tiles <= MAX_TILES
                && (2..=ROW_TILES * nr).contains(&n)
                && k <= 16
                && in_place
                && sup.suits(m, n, k, Some(m))
        };
        // One row or one column is a gemv shape, whose lane
        // `lanes_compute_what_gemm_front_computes` checks.
        let meant = meant && m >= 2 && n >= 2 && m * n * k < MAX_WORK;
        if meant && !alpha.is_zero() && crate::sandbox::ACTIVE.is_none() {
            assert!(took, "{what}: declined a row of tiles");
        }
        took
    }

    #[test]
    fn rows_of_tiles_match_the_reference_f32() {
        rows_of_tiles_match_the_reference::<f32>();
    }

    #[test]
    fn rows_of_tiles_match_the_reference_f64() {
        rows_of_tiles_match_the_reference::<f64>();
    }

    #[test]
    fn rows_of_tiles_match_the_reference_c32() {
        rows_of_tiles_match_the_reference::<c32>();
    }

    #[test]
    fn rows_of_tiles_match_the_reference_c64() {
        rows_of_tiles_match_the_reference::<c64>();
    }

    /// A dgemm of `m`×`n`×`k` with op()s `ops`, A, B and C all ones but C's old values, whose
    /// C (leading dimension m) starts `c_at` elements into the buffer A starts.
    fn c_inside_a_buffer(
        buf: &mut [f64],
        b: &[f64],
        (m, n, k): (usize, usize, usize),
        (transa, transb): (Op, Op),
        c_at: usize,
    ) -> GemmArgs<f64> {
        let base = buf.as_mut_ptr();
        let lda = transa.shape_of_operand(m, k).0;
        let ldb = transb.shape_of_operand(k, n).0;
        GemmArgs {
            transa,
            transb,
            m: m as c_int,
            n: n as c_int,
            k: k as c_int,
            alpha: 1.0,
            a: base,
            lda: lda as c_int,
            b: b.as_ptr(),
            ldb: ldb as c_int,
            beta: 0.0,
            c: base.wrapping_add(c_at),
            ldc: m as c_int,
        }
    }

    /// Through each way the shortcut takes calls (a single tile as it is and transposed, a
    /// gemv shape either way round, a few tiles): a C right after A is taken, and one whose
    /// first element is A's last is declined and then refused by the usual path, untouched.
    #[test]
    fn a_c_overlapping_a_is_declined_and_refused_and_an_adjacent_one_taken() {
        let cntx = crate::gks::context().unwrap();
        let (n_, t_) = (Op::Plain, Op::Transpose);
        for (shape, ops) in [
            ((4, 4, 4), (n_, n_)),
            ((4, 4, 4), (n_, t_)),
            ((4, 4, 4), (t_, t_)),
            ((2, 9, 4), (n_, t_)),
            ((4, 1, 4), (n_, n_)),
            ((1, 4, 4), (t_, n_)),
            ((20, 20, 4), (n_, n_)),
        ] {
            let (m, n, k) = shape;
            let (a_len, c_len) = (m * k, m * n);
            let b = vec![1.0; k * n];
            let what = format!("{m}×{n}×{k} {ops:?}");
            // C right after A: no shared byte, so the shortcut takes it (the usual path does,
            // with a sandbox enabled).
            let mut buf = vec![1.0; a_len + c_len + 8];
            let args = c_inside_a_buffer(&mut buf, &b, shape, ops, a_len);
            if crate::sandbox::ACTIVE.is_none() {
                // SAFETY: A and C lie inside `buf`, B is `b`, with the shapes and leading
                // dimensions `args` gives.
                assert!(unsafe { blas_one_tile(cntx, &args) }, "{what}: declined");
            } else {
                // SAFETY: as above; the arguments pass the reference checks.
                assert!(unsafe { crate::blas::gemm::gemm_col_major(args) }.is_ok());
            }
            let c = &buf[a_len..a_len + c_len];
            assert!(c.iter().all(|&x| x == k as f64), "{what}: {buf:?}");
            let others = buf[..a_len].iter().chain(&buf[a_len + c_len..]);
            assert!(others.into_iter().all(|&x| x == 1.0), "{what}: {buf:?}");
            // C's first element is A's last: declined by the shortcut, refused by the usual
            // path.
            let mut buf = vec![1.0; a_len + c_len + 8];
            let args = c_inside_a_buffer(&mut buf, &b, shape, ops, a_len - 1);
            // SAFETY: as above.
            assert!(!unsafe { blas_one_tile(cntx, &args) }, "{what}: taken");
            // SAFETY: as above; the arguments pass the reference checks.
            match unsafe { crate::blas::gemm::gemm_col_major(args) } {
                Err(crate::blas::gemm::Refusal::Failed(e)) => {
                    assert_eq!(e.kind(), crate::error::ErrorKind::Alias, "{what}: {e}")
                }
                other => panic!("{what}: an overlapping C was not refused: {other:?}"),
            }
            assert!(buf.iter().all(|&x| x == 1.0), "{what}: C changed: {buf:?}");
        }
    }

    /// The single-tile and gemv lanes make the kernel calls `gemm_front` makes for the same
    /// problem: with random values, whose rounding differs from one path's order of operations
    /// to another's, every call the shortcut takes matches `gemm_unguarded`'s result on the same
    /// context exactly, and the calls the lanes exist for are taken. Every configuration, dtype
    /// and op() pair; m and n of 1, 2, 3 and either side of the tile's sides; k from 1 to the
    /// first the dots path may take; alpha and beta 0, 1 and random (NaN in C under beta = 0).
    fn lanes_compute_what_gemm_front_computes<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(56);
        let mut case = 0usize;
        // Either side of the shortest k the dots path takes, which takes none of the lanes'.
        let k_dots = (1..)
            .find(|&k| !crate::l3::dots::k_too_short_for_dots::<T, T>(k))
            .unwrap();
        for cntx in supported_contexts() {
            let kernel = T::kernel(cntx);
            let Some(sup) = kernel.sup() else {
                continue;
            };
            let (mr, nr) = sup.tile();
            let mut sides: Vec<usize> = [1, 2, 3, mr - 1, mr, mr + 1, nr - 1, nr, nr + 1]
                .into_iter()
                .filter(|&x| x >= 1)
                .collect();
            sides.sort_unstable();
            sides.dedup();
            let mut taken = 0;
            for (transa, op_a) in OPS {
                for (transb, op_b) in OPS {
                    for &m in &sides {
                        for &n in &sides {
                            for k in [1, 2, 5, k_dots - 1, k_dots, 40, ONE_TILE_MAX_K] {
                                case += 1;
                                let ops = ((transa, op_a), (transb, op_b));
                                let took =
                                    same_as_gemm_front::<T>(&mut rng, cntx, case, ops, m, n, k);
                                taken += usize::from(took);
                                let conj_b = T::IS_COMPLEX && transb == Op::ConjTranspose;
                                let gemv_lane = (m == 1 || n == 1) && kernel.gemv().is_some();
                                let tile_lane = transa == Op::Plain
                                    && !conj_b
                                    && (2..=mr).contains(&m)
                                    && (2..=nr).contains(&n)
                                    && (transb == Op::Plain || n <= m);
                                // `same_as_gemm_front` chose alpha = 0 for this case.
                                let alpha_zero = case.is_multiple_of(3);
                                if (gemv_lane || tile_lane)
                                    && !alpha_zero
                                    && crate::sandbox::ACTIVE.is_none()
                                {
                                    assert!(
                                        took,
                                        "{}: {m}×{n}×{k} {transa:?}{transb:?} declined",
                                        cntx.name()
                                    );
                                }
                            }
                        }
                    }
                }
            }
            if crate::sandbox::ACTIVE.is_none() {
                assert!(taken > 0, "{}: no call took the shortcut", cntx.name());
            }
        }
    }

    /// One call through the shortcut and through `gemm_unguarded`; returns whether the
    /// shortcut took it.
    fn same_as_gemm_front<T>(
        rng: &mut Rng,
        cntx: &Cntx,
        case: usize,
        ((transa, op_a), (transb, op_b)): ((Op, check::Op), (Op, check::Op)),
        m: usize,
        n: usize,
        k: usize,
    ) -> bool
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let problem = Problem::<T>::random(rng, Values::Uniform, (op_a, op_b), m, n, k, case);
        let Problem {
            a,
            b,
            mut c,
            alpha,
            beta,
        } = problem;
        if beta.is_zero() {
            c.buf.fill(T::from_parts(f64::NAN, f64::NAN));
        }
        let original = c.buf.clone();
        let mut want = c.clone();
        crate::api::gemm_unguarded(
            &op_a.apply(a.view()).scaled(alpha),
            &op_b.apply(b.view()),
            &mut want.view_mut().with_beta(beta),
            cntx,
            &crate::rntm::Rntm::default(),
        )
        .unwrap();
        let args = blas_args((transa, transb), (m, n, k), alpha, &a, &b, beta, &mut c);
        // SAFETY: the arrays are the test matrices' buffers, with their shapes and leading
        // dimensions (column-major, so they pass the reference checks); m, n ≥ 1.
        let took = unsafe { blas_one_tile(cntx, &args) };
        let what = format!(
            "{}: {m}×{n}×{k} {transa:?}{transb:?} alpha {alpha:?} beta {beta:?}",
            cntx.name()
        );
        if took {
            let inside = c.inside_mask();
            for (i, (got, wanted)) in c.buf.iter().zip(&want.buf).enumerate() {
                if inside[i] {
                    assert!(!wanted.has_nan(), "{what}: NaN in gemm_front's C");
                    assert!(got == wanted, "{what}: {got:?}, gemm_front {wanted:?}");
                } else {
                    let kept = check::unchanged(&[*got], &[original[i]]);
                    assert!(kept, "{what}: wrote outside C");
                }
            }
        } else {
            assert!(
                check::unchanged(&c.buf, &original),
                "{what}: declined but changed C"
            );
        }
        took
    }

    #[test]
    fn lanes_compute_what_gemm_front_computes_f32() {
        lanes_compute_what_gemm_front_computes::<f32>();
    }

    #[test]
    fn lanes_compute_what_gemm_front_computes_f64() {
        lanes_compute_what_gemm_front_computes::<f64>();
    }

    #[test]
    fn lanes_compute_what_gemm_front_computes_c32() {
        lanes_compute_what_gemm_front_computes::<c32>();
    }

    #[test]
    fn lanes_compute_what_gemm_front_computes_c64() {
        lanes_compute_what_gemm_front_computes::<c64>();
    }
}
