//! The BLAS entry points' shortcut for a problem of a few sup tiles (up to `MAX_TILES`, at
//! most `ROW_TILES` side by side, `frame/l3/one_tile.rs`): straight from the reference checks to the
//! kernel calls there.
//!
//! At such sizes the layers between the C ABI and the kernel are most of a call's time: a
//! 2×2×2 `cblas_dgemm` took 34 ns through [`crate::gemm_ex`]'s checks and dispatch and 14 ns
//! as a bare kernel call, against OpenBLAS's 17 (docs/Performance.md, session 24). The
//! reference checks have already established most of what `check_gemm` tests (the shapes
//! compose, C's elements are distinct since LDC ≥ M), so what is left here is whether C's
//! bytes lie apart from A's and B's, tested on the column-major arrays directly.
//!
//! The dispatch is `gemm_front`'s own (`gemm_shortcuts`: a short, wide C with op(B)'s
//! columns contiguous as dot products, then the rows of tiles), so the same problems reach
//! the same kernel calls, and anything else (alpha = 0, k = 0, a gemv shape, more tiles,
//! arrays whose spans meet) takes the usual path, which tells an overlap from arrays that
//! merely interleave.

use crate::blas::gemm::{GemmArgs, Op, op};
use crate::cntx::Cntx;
use crate::l3::gemm::gemm_shortcuts;
use crate::l3::one_tile::few_tiles;
use crate::types::{GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// Computes the call through `gemm_front`'s shortcuts (dot products, or sup kernel calls)
/// when it is a problem of a few tiles of `cntx`'s kernel (`few_tiles`) that one of them
/// takes and C's bytes lie apart from A's and B's, and returns true;
/// returns false, having touched nothing, otherwise.
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
    // All non-negative (checked by the caller).
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    // gemm_front sends one column or one row to the gemv kernel first.
    let gemv_shape = kernel.gemv().is_some() && (m == 1 || n == 1);
    // In either orientation (`gemm_rows_of_tiles` may solve Cᵀ = op(B)ᵀ·op(A)ᵀ).
    let tile = sup.tile();
    if !(few_tiles(m, n, k, tile) || few_tiles(n, m, k, tile)) || gemv_shape {
        return false;
    }
    // Past one row of tiles the kernel must read A in place (`gemm_rows_of_tiles`): op(A) =
    // A, or op(B) = Bᵀ (or Bᴴ) in a problem solved transposed (`sup_solves_transposed`). Other
    // calls would be declined there, after the views and the shortcuts' tests: dgemm TN 24³
    // was 2 % slower than before the shortcut took a few rows, without this test.
    let transposed_may_read_a = !matches!(args.transb, Op::Plain);
    if m > sup.tile().0 && !matches!(args.transa, Op::Plain) && !transposed_may_read_a {
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

/// The bytes `[start, end)` of a column-major `rows`×`cols` array (both at least 1) with
/// leading dimension `ld`. The caller bounds the sizes to a row of sup tiles, so the product
/// fits (`cols` ≤ 256 and `ld` < 2^31).
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
    /// alpha ≠ 0, short k, no gemv shape, operands read in place) must be taken.
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
        let values = Values::SmallIntegers;
        let (ar, ac) = op_a.stored_shape(m, k);
        let (br, bc) = op_b.stored_shape(k, n);
        let a = TestMatrix::<T>::random(rng, values, ar, ac, Storage::Col);
        let b = TestMatrix::<T>::random(rng, values, br, bc, Storage::Col);
        let mut c = TestMatrix::<T>::random(rng, values, m, n, Storage::Col);
        // A short, wide C with op(B)'s rows contiguous is taken transposed, by gemm_front's
        // own rule: then op(B)ᵀ is the kernel's A and n its rows.
        let transposed = sup_solves_transposed(
            T::kernel(cntx),
            &c.view_mut(),
            &op_a.apply(a.view()),
            &op_b.apply(b.view()),
        );
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
        let expected = Expected::new(
            alpha,
            &op_a.apply(a.view()),
            &op_b.apply(b.view()),
            beta,
            &mut c,
        );
        let ld = |x: &TestMatrix<T>| x.cs as c_int;
        let args = GemmArgs {
            transa,
            transb,
            m: m as c_int,
            n: n as c_int,
            k: k as c_int,
            alpha,
            a: a.buf.as_ptr(),
            lda: ld(&a),
            b: b.buf.as_ptr(),
            ldb: ld(&b),
            beta,
            c: c.buf.as_mut_ptr(),
            ldc: ld(&c),
        };
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
        // One row or one column is a gemv shape, which the shortcut leaves to gemm_front.
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

    /// A 4×4 dgemm whose C starts `c_at` elements into A's buffer (A is its first 16).
    fn c_inside_a_buffer(buf: &mut [f64], b: &[f64], c_at: usize) -> GemmArgs<f64> {
        let base = buf.as_mut_ptr();
        GemmArgs {
            transa: Op::Plain,
            transb: Op::Plain,
            m: 4,
            n: 4,
            k: 4,
            alpha: 1.0,
            a: base,
            lda: 4,
            b: b.as_ptr(),
            ldb: 4,
            beta: 0.0,
            c: base.wrapping_add(c_at),
            ldc: 4,
        }
    }

    #[test]
    fn a_c_overlapping_a_is_declined_and_refused_and_an_adjacent_one_taken() {
        let cntx = crate::gks::context().unwrap();
        let b = [1.0; 16];
        let mut buf = [1.0; 40];
        // C right after A: no shared byte, so the shortcut takes it (the usual path does,
        // with a sandbox enabled).
        let args = c_inside_a_buffer(&mut buf, &b, 16);
        if crate::sandbox::ACTIVE.is_none() {
            // SAFETY: A and C lie inside `buf`, B is `b`; 4×4 with ld 4 each.
            assert!(unsafe { blas_one_tile(cntx, &args) });
        } else {
            // SAFETY: as above; the arguments pass the reference checks.
            assert!(unsafe { crate::blas::gemm::gemm_col_major(args) }.is_ok());
        }
        assert!(buf[16..32].iter().all(|&x| x == 4.0), "{buf:?}");
        assert!(buf[..16].iter().chain(&buf[32..]).all(|&x| x == 1.0));
        // C's first column is A's last: declined by the shortcut, refused by the usual path.
        let mut buf = [1.0; 40];
        let args = c_inside_a_buffer(&mut buf, &b, 12);
        // SAFETY: as above.
        assert!(!unsafe { blas_one_tile(cntx, &args) });
        // SAFETY: as above; the arguments pass the reference checks.
        match unsafe { crate::blas::gemm::gemm_col_major(args) } {
            Err(crate::blas::gemm::Refusal::Failed(e)) => {
                assert_eq!(e.kind(), crate::error::ErrorKind::Alias, "{e}")
            }
            other => panic!("an overlapping C was not refused: {other:?}"),
        }
        assert!(buf.iter().all(|&x| x == 1.0), "C changed: {buf:?}");
    }
}
