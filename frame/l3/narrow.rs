//! Tall C of a few columns at short k: C (m×n, 2 ≤ n ≤ [`NARROW_MAX_N`], k ≤
//! [`NARROW_MAX_K`]) := alpha·A·B + beta·C through the context's columns kernel
//! (`GemvColumnsUkr`), whose one-pass form at such k reads each vector of A once for all n
//! columns and keeps 8 to 16 FMA chains going (`kernels/x86/columns_one_pass.rs`). One of
//! `gemm_front`'s shortcuts (`gemm_shortcuts`, after the dots path and before the short-k
//! kernel, which took these shapes until session 60). There, the short-k kernel ran each
//! column's FMAs as one chain k long per strip of A, and the sup tile (16×12 dgemm on skx)
//! held two to four columns' accumulators: too few chains to cover the FMAs' latency either
//! way (dgemm NN 80×2×8 at 0.49 of OpenBLAS, sgemm 0.55). With threads, each takes its own
//! block of C (`gemv.rs`, [`gemm_by_columns_if_worth_threads`]).

use crate::cntx::{Cntx, GemmKernel};
use crate::error::Result;
use crate::l3::gemv::{gemm_by_column_groups, gemm_by_columns_if_worth_threads};
use crate::l3::short_k::at_most_two_sup_tiles;
use crate::l3::sup::{copy_col_major, view_of_copy};
use crate::rntm::Rntm;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The widest C this path takes: one call of the columns kernel (`GEMV_COLUMNS_MAX`). Past
/// it, in calls of four and the rest (session 60, skx, against the paths such C take, m =
/// 80–2000, n = 5–8, k = 8–16), NN gained (dgemm 1.00–1.47×, sgemm 0.96–1.19×) but NT lost
/// (n = 5: dgemm 0.82–0.95, sgemm 0.85–0.96), a group of one column costing a pass over A of
/// its own.
const NARROW_MAX_N: usize = 4;

/// The deepest k this path takes. Past it the short-k kernel (to 16) and the sup kernel
/// read level or better: at k = 20–32, against those, sgemm NN 80×2×20–32 0.83–0.85, dgemm
/// NT 80×3×20–32 0.92 (session 60, skx).
const NARROW_MAX_K: usize = 16;

/// The shallowest k for which this path copies an op(A) = Aᵀ column-major first, where op(B) = B
/// (TN). The short-k kernel, which gathers each strip of op(A) instead, gave each column of C the
/// same short FMA chains as for NN; from k = 8 the copy paid (session 60, skx, against the build
/// before, 800d4ee, m = 80–2000, n = 2–4: dgemm TN k = 8–12 0.99–1.59×, sgemm TN k = 8–16
/// 1.20–2.53×), at k = 2–4 it did not (sgemm TN 80×2×2 0.78, 2000×2×4 0.92; dgemm 0.90–1.29). k =
/// 5–7 unmeasured. dgemm TN from k = 16 is the dots path's, taken first. TT stays with the sup
/// path, which solves it transposed: copied, sgemm TT gained (k = 8 1.30–1.77×, k = 16 1.35–1.67×)
/// but dgemm TT lost (k = 12 0.54–0.69 at m = 500–2000).
///
/// All of that is against skx's short-k kernel. Contexts without one (haswell) copy A at any
/// k, for TN and TT alike: there such C went to the loop nest, which packed op(A) = Aᵀ element
/// by element (dgemm TN 100×2×5 at 0.37 of OpenBLAS, TT 0.36). Session 61, haswell natively on
/// a Zen 3, m = 40–2000, n = 2–4, k = 1–16, 240 shapes, one run, this rule alone: 1.38× the
/// build before (geometric mean), the ratio to OpenBLAS 1.15 → 1.60 (1.64 with packing's
/// remainders by the kernel, `packm::KERNEL_MIN_REMAINDER`); TN from 0.35–0.47 to 1.0–1.9 at k = 2–6
/// for m ≥ 100. C of 40–100 rows at k = 3–6 is still behind (sgemm TN 40×2×3 0.73, 100×2×6
/// 0.75; dgemm TN 40×2×3 0.87), where the copy and its buffer weigh most.
const COPIED_A_MIN_K: usize = 8;

/// The shallowest k this path takes for C of [`NARROW_MAX_N`] columns. At k = 1–2, where
/// each step's few FMAs leave the four columns' stores to dominate, the short-k kernel (and
/// the gemv kernel's columns at k = 1) read level or better (session 60, skx, this path
/// against them: dgemm NT 200×4×1 0.86, 200×4×2 0.85, dgemm NN 500×4×2 0.91, sgemm NN
/// 200×4×1 0.90; 1.0–1.12 at m = 40–80). From k = 3 the path's least was 0.94 (sgemm NN
/// 2000×4×4).
const WIDEST_MIN_K: usize = 3;

/// C := alpha·A·B + beta·C through the columns kernel when the problem suits it (see
/// [`narrow_shape_suits`] and [`gemm_narrow_if_suited`]), on the threads the plan gives
/// (`threads`; `None`: the calling thread); `None`, having touched nothing, when not.
///
/// Inlined for its first tests, which decide on the views alone, and C of at most two sup
/// tiles (those stay with the sup kernel and the BLAS entry points' single-tile lanes,
/// `at_most_two_sup_tiles`): `gemm_shortcuts` runs them on every call, and a problem that
/// reached the out-of-line test only to be declined there paid for the call (dgemm TT 80×2×8
/// 302 against 280 ns, session 60).
#[inline(always)]
pub(crate) fn gemm_narrow<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let copies_a_at_any_k = kernel.short_k().is_none();
    if !narrow_shape_suits(copies_a_at_any_k, a, b, c)
        || at_most_two_sup_tiles(kernel, c.nrows(), c.ncols())
    {
        return None;
    }
    gemm_narrow_if_suited(threads, kernel, alpha, a, b, beta, c)
}

/// Whether the views suit this path: a real dtype; 2 to [`NARROW_MAX_N`] columns, k from 1 to
/// [`NARROW_MAX_K`] (from [`WIDEST_MIN_K`] for the widest); C column-stored; op(A) with
/// adjacent rows (NN, NT: the kernel reads A's columns in place) or, from
/// [`COPIED_A_MIN_K`], op(A) = Aᵀ with op(B) = B (TN: A copied column-major first), or
/// op(A) = Aᵀ at any k with any op(B) where the context has no short-k kernel
/// (`copies_a_at_any_k`, see [`COPIED_A_MIN_K`]); nothing conjugated.
#[inline(always)]
fn narrow_shape_suits<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    copies_a_at_any_k: bool,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &MatMut<A::Acc>,
) -> bool {
    let (n, k) = (c.ncols(), a.ncols());
    (2..=NARROW_MAX_N).contains(&n)
        && (1..=NARROW_MAX_K).contains(&k)
        && !(n == NARROW_MAX_N && k < WIDEST_MIN_K)
        && !A::Acc::IS_COMPLEX
        && c.row_stride() == 1
        && (a.row_stride() == 1
            || copies_a_at_any_k
            || (b.row_stride() == 1 && k >= COPIED_A_MIN_K))
        && !a.is_conj()
        && !b.is_conj()
}

/// [`gemm_narrow`] past its first tests: the context's columns kernel, and A within the sup
/// limits' largest (as on the sup path, which would read it in place too).
#[inline(never)]
fn gemm_narrow_if_suited<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    threads: Option<(&Cntx, &Rntm)>,
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Option<Result<()>> {
    let (columns, _) = kernel.gemv_columns()?;
    let (m, k) = (c.nrows(), a.ncols());
    let a_bytes = m.saturating_mul(k).saturating_mul(size_of::<A>());
    if a_bytes > kernel.sup()?.limits().max_a_bytes {
        return None;
    }
    // op(A) = Aᵀ: copied column-major once, for the kernel reads A's columns in place.
    let mut a_copy = None;
    let a = &if a.row_stride() != 1 {
        let transpose_a = kernel.pack_transposes().0;
        match copy_col_major(a, transpose_a, "A") {
            Ok(copy) => view_of_copy(a_copy.insert(copy), m, k),
            Err(error) => return Some(Err(error)),
        }
    } else {
        *a
    };
    let per_block = |a: &MatRef<A>, b: &MatRef<B>, c: &mut MatMut<A::Acc>| {
        gemm_by_column_groups(columns, alpha, a, b, beta, c)
    };
    let blocks = kernel.blocksizes();
    Some(gemm_by_columns_if_worth_threads(
        threads, blocks, per_block, a, b, c,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{self, Expected, Op, Rng, Storage, TestMatrix, Values};
    use crate::gks::supported_contexts;

    /// Straight through `gemm_narrow` on every configuration with a columns kernel and a sup
    /// kernel: the shapes the path exists for must be taken and match the reference (every
    /// op(B) and storage of C, alpha/beta classes with NaN in C under beta = 0, one thread and
    /// two), writing nothing outside C; the others must be declined with C untouched.
    fn taken_where_meant_and_matching<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(60);
        let values = Values::SmallIntegers;
        let two = Rntm::new().with_num_threads(2).unwrap();
        let mut contexts = 0;
        for cntx in supported_contexts() {
            let kernel = T::kernel(cntx);
            let (Some(sup), Some(_)) = (kernel.sup(), kernel.gemv_columns()) else {
                continue;
            };
            contexts += 1;
            let (mr, nr) = sup.tile();
            // The rule, restated: two to four columns, k up to 16 (from 3 for four), op(A) =
            // A (or Aᵀ, copied, with op(B) = B column-stored from k = 8, or at any k and with
            // any op(B) without a short-k kernel), C column-stored,
            // and more than two sup tiles, which for C no wider than the tile (NR ≥ 4 on
            // every configuration) means more than 2·MR rows.
            assert!(nr >= 4, "{}: NR {nr}", cntx.name());
            // Without a short-k kernel, op(A) = Aᵀ copied at any k with any op(B).
            let copies_a_at_any_k = kernel.short_k().is_none();
            let meant =
                |m: usize, n: usize, k: usize, op_a: Op, op_b: Op, st_b: Storage, st_c: Storage| {
                    (2..=4).contains(&n)
                        && (1..=16).contains(&k)
                        && !(n == 4 && k <= 2)
                        && (op_a == Op::N
                            || copies_a_at_any_k
                            || (op_b == Op::N && st_b == Storage::Col && k >= 8))
                        && st_c == Storage::Col
                        && m > 2 * mr
                };
            let mut case = 0;
            // Rows either side of two tiles and of the kernel's steps (one and four vectors
            // of 8 or 16 lanes), and past `gemm_by_column_groups`' blocks of 512.
            for m in [2 * mr, 2 * mr + 1, 63, 64, 65, 127, 129, 1100] {
                for n in 1..=5 {
                    for k in [1, 2, 3, 4, 7, 8, 9, 15, 16, 17] {
                        for (op_a, op_b, st_c) in [
                            (Op::N, Op::N, Storage::Col),
                            (Op::N, Op::T, Storage::Col),
                            (Op::N, Op::N, Storage::Gen),
                            (Op::N, Op::T, Storage::Row),
                            (Op::T, Op::N, Storage::Col),
                            (Op::T, Op::T, Storage::Col),
                            (Op::T, Op::N, Storage::Gen),
                        ] {
                            case += 1;
                            let (ar, ac) = op_a.stored_shape(m, k);
                            let (br, bc) = op_b.stored_shape(k, n);
                            // B general-strided in every fourth case (under every beta
                            // class): x's strides as they come.
                            let st_b = if case % 4 == 1 {
                                Storage::Gen
                            } else {
                                Storage::Col
                            };
                            let meant = meant(m, n, k, op_a, op_b, st_b, st_c);
                            let a = TestMatrix::<T>::random(&mut rng, values, ar, ac, Storage::Col);
                            let b = TestMatrix::<T>::random(&mut rng, values, br, bc, st_b);
                            let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                            let (av, bv) = (op_a.apply(a.view()), op_b.apply(b.view()));
                            let alpha = [T::one(), rng.value(values)][case % 2];
                            let beta = [T::zero(), T::one(), rng.value(values)][case % 3];
                            let expected = Expected::new(alpha, &av, &bv, beta, &mut c);
                            // Every other case on two threads (below the work that splits,
                            // the calling thread).
                            let threads = (case % 2 == 1).then_some((cntx, &two));
                            let taken = gemm_narrow(
                                threads,
                                kernel,
                                alpha,
                                &av,
                                &bv,
                                beta,
                                &mut c.view_mut(),
                            );
                            let what = format!(
                                "{}: {m}×{n}×{k} op(A) {op_a:?} op(B) {op_b:?} B {st_b:?} C {st_c:?}",
                                cntx.name()
                            );
                            assert_eq!(taken.is_some(), meant, "{what}: taken");
                            if meant {
                                assert!(matches!(taken, Some(Ok(()))), "{what}: failed");
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
            }
            // Work enough to split between two threads (m·n·k from `MAX_WORK`): each takes
            // its own block of C. Without a short-k kernel, a copied A at short k with B's
            // rows apart as well.
            let mut split = vec![
                (9001, 4, 16, Op::N, Storage::Row),
                (20000, 2, 13, Op::N, Storage::Col),
                (8193, 3, 15, Op::T, Storage::Col),
            ];
            if copies_a_at_any_k {
                split.push((40001, 2, 5, Op::T, Storage::Row));
            }
            for (m, n, k, op_a, st_b) in split {
                let (ar, ac) = op_a.stored_shape(m, k);
                let a = TestMatrix::<T>::random(&mut rng, values, ar, ac, Storage::Col);
                let b = TestMatrix::<T>::random(&mut rng, values, k, n, st_b);
                let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, Storage::Col);
                let alpha = rng.value(values);
                let av = op_a.apply(a.view());
                let expected = Expected::new(alpha, &av, &b.view(), T::zero(), &mut c);
                let taken = gemm_narrow(
                    Some((cntx, &two)),
                    kernel,
                    alpha,
                    &av,
                    &b.view(),
                    T::zero(),
                    &mut c.view_mut(),
                );
                let what = format!("{}: {m}×{n}×{k} op(A) {op_a:?} on two threads", cntx.name());
                assert!(matches!(taken, Some(Ok(()))), "{what}: not taken");
                let got = expected.compare(&c, k);
                assert_eq!(got.residual, 0.0, "{what}: wrong values");
                assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
            }
        }
        // Every x86-64 machine this runs on has AVX2 at least (haswell's columns kernels).
        if cfg!(target_arch = "x86_64") && crate::sandbox::ACTIVE.is_none() {
            assert!(contexts > 0, "no configuration has a columns kernel");
        }
    }

    #[test]
    fn taken_where_meant_and_matching_f32() {
        taken_where_meant_and_matching::<f32>();
    }

    #[test]
    fn taken_where_meant_and_matching_f64() {
        taken_where_meant_and_matching::<f64>();
    }
}
