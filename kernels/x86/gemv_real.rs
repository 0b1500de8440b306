//! The gemv body for real dtypes, written once over [`Simd`] and instantiated by the kernel
//! files (`kernels/skx/gemv_f32.rs`, …) inside their `#[target_feature]` shells. The contract
//! is `GemvUkr` in `kernels/mod.rs`.
//!
//! Memory-bound, so the point is reading A once, in the order its memory runs, with several
//! streams of A in flight (one stream at a time left a core at 60–70 % of the bandwidth BLIS
//! reached on the same shapes, docs/Performance.md, "Degenerate shapes"):
//!
//! * A's columns contiguous (unit row stride), y contiguous: axpy form. For each block of 8
//!   columns, y += A(:, p..p+8)·(alpha·x(p..p+8)) (the first block scales y by beta on the
//!   way, [`axpy_blocks`]), walking down the rows
//!   one vector at a time: 8 A loads, 1 y load and store, 8 FMAs per vector; y stays in L1
//!   for the m this path gets (it is a column, m·size bytes). 8 columns beat 4 by 10–20 % on
//!   4096×1×4096; 16 lost half. Streams a multiple of 4 KiB apart share an L1 set; for a
//!   cached A those are read 4 at a time ([`fewer_streams`]), in both forms. A y of one to
//!   eight vectors (two with 16 registers) is read and written once, its FMAs spread over
//!   four accumulators a vector, two past four vectors ([`axpy_few_vectors`]): few rows leave
//!   the blocks' one chain per vector exposed.
//! * A's rows contiguous (unit column stride), x contiguous: dot form,
//!   y(i) = alpha·(A(i, :)·x) + beta·y(i), 8 rows at a time sharing each load of x (two
//!   vectors a step with 32 registers, one with 16), each row's accumulators summed at the
//!   end by halving ([`Simd::sum_lanes`]); leftover rows one at a time with four
//!   accumulators, or as scalars where k is under half a vector ([`dot_row_scalar`]).
//! * Anything else: the reference kernel. When both forms apply, the dot form is used for
//!   fewer rows than a vector holds (a single row is a dot product).
//!
//! Whole vectors use plain loads, tails masked loads/stores (AVX2's masked loads are slow
//! enough to halve the axpy form's speed). beta == 0: y is not read.

use crate::kernels::GemvUkrArgs;
use crate::kernels::reference::gemv_ukr;
use crate::kernels::x86::columns_one_pass::{ONE_PASS_MAX_K, columns_one_pass};
use crate::kernels::x86::simd::Simd;
use crate::types::{Element, Scalar};

/// The body. See the module docs.
///
/// # Safety
/// The `GemvUkr` contract, called from a function compiled with `V`'s target features on a
/// CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemv_real<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    // SAFETY: passed on; each form touches only A(i, p), x(p), y(i) with i < m, p < k.
    unsafe {
        match form(args, V::LANES, true) {
            Form::Dot => dot_form::<V>(args),
            Form::Axpy => axpy_form::<V>(args),
            Form::Reference => gemv_ukr(args),
        }
    }
}

/// The columns body (the `GemvColumnsUkr` contract): with A's columns and the y_j
/// contiguous, each vector of A used for all n columns: over all of k at once for k up to
/// `ONE_PASS_MAX_K` (`columns_one_pass.rs`), past it the axpy form by blocks of W columns
/// ([`columns_block`] through [`axpy_blocks`]); otherwise one gemv per column.
///
/// # Safety
/// The `GemvColumnsUkr` contract, called from a function compiled with `V`'s target features
/// on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemv_columns_real<V: Simd>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    n: usize,
    cs_x: isize,
    cs_y: isize,
) where
    V::Elem: Scalar,
{
    debug_assert!((1..=crate::kernels::GEMV_COLUMNS_MAX).contains(&n));
    // SAFETY: passed on; each column's x and y as the contract describes them.
    unsafe {
        if args.rs_a == 1 && args.inc_y == 1 && (1..=ONE_PASS_MAX_K).contains(&args.k) {
            columns_one_pass::<V>(args, n, cs_x, cs_y)
        } else if args.rs_a == 1 && args.inc_y == 1 && args.k > 0 {
            // W columns of A per pass over the y_j: W·n broadcast scalars stay in registers
            // beside the n accumulators (at most half the register file).
            let wide = V::REGISTERS >= 32;
            let k = args.k;
            match n {
                1 if wide => axpy_blocks::<8>(k, &RealColumns::<V, 1>(args, cs_x, cs_y)),
                2 if wide => axpy_blocks::<8>(k, &RealColumns::<V, 2>(args, cs_x, cs_y)),
                3 if wide => axpy_blocks::<4>(k, &RealColumns::<V, 3>(args, cs_x, cs_y)),
                4 if wide => axpy_blocks::<4>(k, &RealColumns::<V, 4>(args, cs_x, cs_y)),
                1 => axpy_blocks::<8>(k, &RealColumns::<V, 1>(args, cs_x, cs_y)),
                2 => axpy_blocks::<4>(k, &RealColumns::<V, 2>(args, cs_x, cs_y)),
                3 => axpy_blocks::<2>(k, &RealColumns::<V, 3>(args, cs_x, cs_y)),
                _ => axpy_blocks::<2>(k, &RealColumns::<V, 4>(args, cs_x, cs_y)),
            }
        } else {
            for j in 0..n as isize {
                gemv_real::<V>(&GemvUkrArgs {
                    x: args.x.offset(j * cs_x),
                    y: args.y.offset(j * cs_y),
                    ..*args
                });
            }
        }
    }
}

/// One block of an axpy form over N columns (`RealColumns`, driven by [`axpy_blocks`]):
/// y_j += A(:, p..p+W)·(alpha·x_j(p..p+W)) for all j < N at once, walking down the rows one
/// vector at a time: W loads of A, N loads and stores of y, W·N FMAs. With FIRST, each y_j's
/// old value is scaled by beta first (not read when beta = 0). N = 1 is the gemv axpy form.
///
/// # Safety
/// As [`axpy_form`] or [`gemv_columns_real`] (A's columns and each y_j contiguous), with
/// `p + W <= k`.
#[inline(always)]
unsafe fn columns_block<V: Simd, const N: usize, const W: usize, const FIRST: bool>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    p: usize,
    cs_x: isize,
    cs_y: isize,
) where
    V::Elem: Scalar,
{
    // SAFETY: rows below m (masked at the tail) of A's columns p..p+W and of the N columns of
    // y; x_j(p..p+W) for j < N: all inside what the contract makes valid.
    unsafe {
        // Plain loops, no closures: a closure is compiled without the caller's target
        // features, and intrinsics inside it become calls.
        let mut cols = [args.a; W];
        for (c, col) in cols.iter_mut().enumerate() {
            *col = args.a.offset((p + c) as isize * args.cs_a);
        }
        let mut ys = [args.y; N];
        for (j, y) in ys.iter_mut().enumerate() {
            *y = args.y.offset(j as isize * cs_y);
        }
        let mut scaled_x = [[V::zero(); N]; W];
        for (c, row) in scaled_x.iter_mut().enumerate() {
            for (j, s) in row.iter_mut().enumerate() {
                let x = *args
                    .x
                    .offset((p + c) as isize * args.inc_x + j as isize * cs_x);
                *s = V::splat(args.alpha * x);
            }
        }
        let beta = V::splat(args.beta);
        let mut i = 0;
        while i + V::LANES <= args.m {
            let mut v = [V::zero(); N];
            for (acc, y) in v.iter_mut().zip(&ys) {
                *acc = if !FIRST {
                    V::load(y.add(i))
                } else if args.beta.is_zero() {
                    V::zero()
                } else {
                    V::mul(beta, V::load(y.add(i)))
                };
            }
            for (col, s) in cols.iter().zip(&scaled_x) {
                let a = V::load(col.add(i));
                for (acc, &s) in v.iter_mut().zip(s) {
                    *acc = V::fma(a, s, *acc);
                }
            }
            for (acc, y) in v.iter().zip(&ys) {
                V::store(y.add(i), *acc);
            }
            i += V::LANES;
        }
        if i < args.m {
            let mask = V::mask(args.m - i);
            let mut v = [V::zero(); N];
            for (acc, y) in v.iter_mut().zip(&ys) {
                *acc = if !FIRST {
                    V::load_masked(y.add(i), mask)
                } else if args.beta.is_zero() {
                    V::zero()
                } else {
                    V::mul(beta, V::load_masked(y.add(i), mask))
                };
            }
            for (col, s) in cols.iter().zip(&scaled_x) {
                let a = V::load_masked(col.add(i), mask);
                for (acc, &s) in v.iter_mut().zip(s) {
                    *acc = V::fma(a, s, *acc);
                }
            }
            for (acc, y) in v.iter().zip(&ys) {
                V::store_masked(y.add(i), mask, *acc);
            }
        }
    }
}

/// How a gemv walks A.
pub(crate) enum Form {
    /// Row by row, each row a dot product with x (A's rows and x contiguous).
    Dot,
    /// Column block by column block, y updated in place (A's columns and y contiguous).
    Axpy,
    /// Neither layout: the reference kernel.
    Reference,
}

/// The form for `args`, given how many rows one register holds and whether the axpy form
/// can serve this call (the complex body cannot conjugate A there). When both apply, fewer
/// rows than a register holds is a dot product (a single row is one).
pub(crate) fn form<A: Element, B: Element>(
    args: &GemvUkrArgs<A, B>,
    rows_per_vector: usize,
    axpy_allowed: bool,
) -> Form {
    let dot_ok = args.cs_a == 1 && args.inc_x == 1;
    let axpy_ok = axpy_allowed && args.rs_a == 1 && args.inc_y == 1;
    if dot_ok && (!axpy_ok || args.m < rows_per_vector) {
        Form::Dot
    } else if axpy_ok {
        Form::Axpy
    } else {
        Form::Reference
    }
}

/// y := beta·y + A·(alpha·x) by blocks of 8 columns, or 4 ([`fewer_streams`]), or for a y of
/// one to eight vectors in one pass ([`axpy_few_vectors`]) (A column-stored, y contiguous);
/// k = 0 only scales y.
#[inline(always)]
unsafe fn axpy_form<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    let (m, k) = (args.m, args.k);
    // SAFETY: rows below m (masked at the tail), columns below k, as the contract allows.
    unsafe {
        if k == 0 {
            // No column to fold the scaling into: y := beta·y alone.
            for i in (0..m).step_by(V::LANES) {
                let mask = V::mask(m - i);
                let y = args.y.add(i);
                let v = if args.beta.is_zero() {
                    V::zero()
                } else {
                    V::mul(V::splat(args.beta), V::load_masked(y, mask))
                };
                V::store_masked(y, mask, v);
            }
        } else if m <= 2 * V::LANES || (V::REGISTERS >= 32 && m <= 8 * V::LANES) {
            // One to eight vectors: y once, four accumulators a vector (two past four).
            match (m.div_ceil(V::LANES), m % V::LANES == 0) {
                (1, true) => axpy_few_vectors::<V, 1, 4, true>(args),
                (1, false) => axpy_few_vectors::<V, 1, 4, false>(args),
                (2, true) => axpy_few_vectors::<V, 2, 4, true>(args),
                (2, false) => axpy_few_vectors::<V, 2, 4, false>(args),
                (3, true) => axpy_few_vectors::<V, 3, 4, true>(args),
                (3, false) => axpy_few_vectors::<V, 3, 4, false>(args),
                (4, true) => axpy_few_vectors::<V, 4, 4, true>(args),
                (4, false) => axpy_few_vectors::<V, 4, 4, false>(args),
                (5, true) => axpy_few_vectors::<V, 5, 2, true>(args),
                (5, false) => axpy_few_vectors::<V, 5, 2, false>(args),
                (6, true) => axpy_few_vectors::<V, 6, 2, true>(args),
                (6, false) => axpy_few_vectors::<V, 6, 2, false>(args),
                (7, true) => axpy_few_vectors::<V, 7, 2, true>(args),
                (7, false) => axpy_few_vectors::<V, 7, 2, false>(args),
                (_, true) => axpy_few_vectors::<V, 8, 2, true>(args),
                (_, false) => axpy_few_vectors::<V, 8, 2, false>(args),
            }
        } else if fewer_streams(args.cs_a, size_of::<V::Elem>(), m, k) {
            axpy_blocks::<4>(k, &RealColumns::<V, 1>(args, 0, 0));
        } else {
            axpy_blocks::<8>(k, &RealColumns::<V, 1>(args, 0, 0));
        }
    }
}

/// The axpy form for a y of one to eight vectors (m ≤ VECS·LANES; FULL: the last vector has
/// no masked lanes; more than two only with 32 registers), k ≥ 1: y read and written once,
/// A's columns summed into ACC accumulators per vector in turn (four up to four vectors, two
/// past). The blocks pass over y once per block and once per column left over, each pass
/// reading back the store of the one before, and chain a block's FMAs on one accumulator per
/// vector, which so few vectors cannot hide. Measured (session
/// 56, skx, through `cblas_{s,d}gemm` NN, ratio of time, blocks → this; OpenBLAS after):
/// sgemm 7×1×1000 4.3× (1.68×), 12×1×300 4.1× (1.62×), 8×1×64 3.6× (2.13×), 16×1×4096 2.5×
/// (1.84×), 20×1×20 2.0× (1.51×), 2×1×3 1.28× (0.87×); dgemm 7×1×1000 4.3× (1.69×),
/// 12×1×300 2.3× (2.40×), 16×1×100 1.86× (1.36×), 5×1×16 1.73× (1.11×); 4×1×4 level (0.82–
/// 0.88×). Forced haswell (ymm) on the same machine: sgemm 7×1×1000 6.4×, 8×1×64 3.3×,
/// dgemm 7×1×1000 4.5×, 2×1×3 2.0×. Three and four vectors, against the blocks (skx): sgemm
/// 40×1×40 1.47× (2.25× OpenBLAS), 64×1×64 1.27× (0.99×), 60×1×1000 1.14×; dgemm 20×1×20
/// 1.91× (1.98×), 30×1×100 1.34×, 24×1×24 1.29×, 32×1×500 1.04×; the least 0.97. Five to
/// eight vectors with two accumulators each, against the blocks: sgemm 100×1×100 1.22×
/// (1.18× OpenBLAS), 120×1×50 1.22×; dgemm 40×1×40 1.19× (1.40×), 64×1×64 1.11×; the rest
/// level (0.98–1.05).
///
/// # Safety
/// As [`axpy_form`], with `(VECS − 1)·LANES < m <= VECS·LANES` (`==` if FULL), `k >= 1` and
/// `ACC >= 1`.
#[inline(always)]
unsafe fn axpy_few_vectors<V: Simd, const VECS: usize, const ACC: usize, const FULL: bool>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    // SAFETY: rows below m (the last vector masked unless FULL) of A's columns below k, x(p)
    // for p < k, and y's m elements, as the contract allows.
    unsafe {
        // Plain code, no closures: a closure is compiled without the caller's target
        // features, and intrinsics inside it become calls.
        let last = (VECS - 1) * V::LANES;
        let mask = V::mask(args.m - last);
        let mut acc = [[V::zero(); ACC]; VECS];
        let mut p = 0;
        while p + ACC <= args.k {
            for c in 0..ACC {
                column_step::<V, VECS, ACC, FULL>(args, p + c, mask, &mut acc, c);
            }
            p += ACC;
        }
        while p < args.k {
            column_step::<V, VECS, ACC, FULL>(args, p, mask, &mut acc, 0);
            p += 1;
        }
        for (v, acc_v) in acc.iter().enumerate() {
            let y = args.y.add(v * V::LANES);
            let last_vector = v == VECS - 1;
            let mut sum = acc_v[1..].iter().fold(acc_v[0], |s, &v| V::add(s, v));
            if !args.beta.is_zero() {
                let old = if FULL || !last_vector {
                    V::load(y)
                } else {
                    V::load_masked(y, mask)
                };
                sum = V::fma(V::splat(args.beta), old, sum);
            }
            if FULL || !last_vector {
                V::store(y, sum);
            } else {
                V::store_masked(y, mask, sum);
            }
        }
    }
}

/// Column p of [`axpy_few_vectors`] into accumulator `c` of each vector.
///
/// # Safety
/// As [`axpy_few_vectors`], with `p < k`.
#[inline(always)]
unsafe fn column_step<V: Simd, const VECS: usize, const ACC: usize, const FULL: bool>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    p: usize,
    mask: V::Mask,
    acc: &mut [[V; ACC]; VECS],
    c: usize,
) where
    V::Elem: Scalar,
{
    // SAFETY: the caller's: column p of A (m rows, the last vector masked unless FULL), x(p).
    unsafe {
        let last = (VECS - 1) * V::LANES;
        let col = args.a.offset(p as isize * args.cs_a);
        let x = V::splat(args.alpha * *args.x.offset(p as isize * args.inc_x));
        for (v, acc_v) in acc.iter_mut().enumerate().take(VECS - 1) {
            acc_v[c] = V::fma(V::load(col.add(v * V::LANES)), x, acc_v[c]);
        }
        let a = if FULL {
            V::load(col.add(last))
        } else {
            V::load_masked(col.add(last), mask)
        };
        acc[VECS - 1][c] = V::fma(a, x, acc[VECS - 1][c]);
    }
}

/// One column block of an axpy form (the real one below, the complex one in
/// `gemv_complex.rs`): y += A(:, p..p+C)·(alpha·op(x(p..p+C))), y's old value scaled by beta
/// first when FIRST (not read when beta = 0).
pub(crate) trait AxpyColumns {
    /// # Safety
    /// Columns p..p+C of A exist, and the form's own contract holds.
    unsafe fn columns<const C: usize, const FIRST: bool>(&self, p: usize);
}

/// An axpy form's columns 0..k (k ≥ 1), W at a time, then one by one. The first block also
/// applies beta, so y is written once per block: a short k passes over y once (the outer
/// products of `gemm_by_columns`: sgemm 1024×1024×1 32.7 against 14.6 GFLOPS with a pass of
/// its own for beta, 512×512×1 27.3 against 13.3, dgemm 1024×1024×1 16.6 against 7.5).
///
/// # Safety
/// As `form`'s [`AxpyColumns::columns`], for every block of columns below k.
#[inline(always)]
pub(crate) unsafe fn axpy_blocks<const W: usize>(k: usize, form: &impl AxpyColumns) {
    debug_assert!(k >= 1);
    // SAFETY: the caller's; every block is within columns 0..k.
    unsafe {
        let mut p = if k >= W {
            form.columns::<W, true>(0);
            W
        } else {
            form.columns::<1, true>(0);
            1
        };
        while p + W <= k {
            form.columns::<W, false>(p);
            p += W;
        }
        while p < k {
            form.columns::<1, false>(p);
            p += 1;
        }
    }
}

/// The real axpy forms' blocks ([`columns_block`]): N columns of y, the x_j and y_j `cs_x`
/// and `cs_y` apart (unused for N = 1, the gemv kernel's).
struct RealColumns<'a, V: Simd, const N: usize>(&'a GemvUkrArgs<V::Elem, V::Elem>, isize, isize)
where
    V::Elem: Scalar;

impl<V: Simd, const N: usize> AxpyColumns for RealColumns<'_, V, N>
where
    V::Elem: Scalar,
{
    #[inline(always)]
    unsafe fn columns<const C: usize, const FIRST: bool>(&self, p: usize) {
        // SAFETY: passed on.
        unsafe { columns_block::<V, N, C, FIRST>(self.0, p, self.1, self.2) }
    }
}

/// Whether the forms should read 4 streams of A at once instead of 8: when the streams,
/// `stride` elements of `size` bytes apart, fall in the same set of a 64-set, 64-byte-line L1
/// (4 KiB a way), 8 lines of A and one of x or y overfill an 8-way set, and while A is small
/// enough to come from L2 or L3 (at most 8 MiB) that costs more than the extra streams gain
/// (sgemm 1024×1×1024: 0.89× BLIS with 8 columns, 1.00× with 4; dgemm 512×1×512 0.93 →
/// 1.01). From memory the 8 streams win anyway (sgemm 1×4096×4096 1.0 against 0.88).
fn fewer_streams(stride: isize, size: usize, m: usize, k: usize) -> bool {
    const WAY: usize = 4096;
    const LINE: usize = 64;
    const CACHED_BYTES: usize = 8 << 20;
    let offset = stride.unsigned_abs().wrapping_mul(size) % WAY;
    let same_set = !(LINE..=WAY - LINE).contains(&offset);
    same_set && m.saturating_mul(k).saturating_mul(size) <= CACHED_BYTES
}

/// y(i) := alpha·(A(i, :)·x) + beta·y(i), eight rows at a time (A row-stored, x contiguous),
/// then the remaining rows one by one.
#[inline(always)]
unsafe fn dot_form<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    // SAFETY: rows below m, columns below k (masked at the tail), as the contract allows.
    unsafe {
        let mut i = 0;
        if fewer_streams(args.rs_a, size_of::<V::Elem>(), args.m, args.k) {
            while i + 4 <= args.m {
                dot_rows::<V, 4, 2>(args, i);
                i += 4;
            }
        } else if V::REGISTERS >= 32 {
            while i + 8 <= args.m {
                dot_rows::<V, 8, 2>(args, i);
                i += 8;
            }
        } else {
            while i + 8 <= args.m {
                dot_rows::<V, 8, 1>(args, i);
                i += 8;
            }
        }
        while i < args.m {
            dot_rows::<V, 1, 4>(args, i);
            i += 1;
        }
    }
}

/// Rows i..i+R of the dot form, U vectors per row and k step.
///
/// # Safety
/// As [`dot_form`], with `i + R <= m`.
#[inline(always)]
unsafe fn dot_rows<V: Simd, const R: usize, const U: usize>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    i: usize,
) where
    V::Elem: Scalar,
{
    let (k, lanes) = (args.k, V::LANES);
    // SAFETY: the caller's; loads stay below column k of rows i..i+R and of x.
    unsafe {
        if R == 1 && k < lanes / 2 {
            dot_row_scalar(args, i);
            return;
        }
        let rows: [*const V::Elem; R] =
            std::array::from_fn(|r| args.a.offset((i + r) as isize * args.rs_a));
        let mut acc = [[V::zero(); U]; R];
        let mut p = 0;
        while p + U * lanes <= k {
            for u in 0..U {
                let q = p + u * lanes;
                let x = V::load(args.x.add(q));
                for (row, acc_r) in rows.iter().zip(acc.iter_mut()) {
                    acc_r[u] = V::fma(V::load(row.add(q)), x, acc_r[u]);
                }
            }
            p += U * lanes;
        }
        while p < k {
            let mask = V::mask(k - p);
            let x = V::load_masked(args.x.add(p), mask);
            for (row, acc_r) in rows.iter().zip(acc.iter_mut()) {
                acc_r[0] = V::fma(V::load_masked(row.add(p), mask), x, acc_r[0]);
            }
            p += lanes;
        }
        // Below U vectors of k only the first accumulator holds anything: adding the others
        // (zeros) lengthened the chain ahead of the lane sum (with [`dot_row_scalar`], dgemm
        // 1×1×1 through `cblas_dgemm` went from 27.0 to 24.1 ns, session 56).
        let used = if k >= U * lanes { U } else { 1 };
        for (r, acc_r) in acc.iter().enumerate() {
            let sum = V::sum_lanes(acc_r[1..used].iter().fold(acc_r[0], |s, &v| V::add(s, v)));
            let y = args.y.offset((i + r) as isize * args.inc_y);
            let old = if args.beta.is_zero() {
                V::Elem::zero()
            } else {
                args.beta * *y
            };
            *y = args.alpha * sum + old;
        }
    }
}

/// Row i of the dot form as scalars, for a k shorter than half a vector: its chain of k adds
/// is shorter than a masked vector load, an FMA and a sum across the lanes. Measured (session
/// 56, skx, through `cblas_{s,d}gemm` NN, ns, vector → scalar; OpenBLAS): sgemm 1×1×1 21.6 →
/// 20.5 (16.5), 1×3×3 25.3 → 23.5 (21.6); dgemm 1×1×1 21.5 → 20.5 (16.8), 1×3×3 25.4 → 23.4
/// (21.8); level from k = lanes / 2 (dgemm 1×1×5 21.4 → 21.2).
///
/// # Safety
/// As [`dot_form`], with `i < m`.
#[inline(always)]
unsafe fn dot_row_scalar<T: Scalar>(args: &GemvUkrArgs<T, T>, i: usize) {
    // SAFETY: the caller's; columns below k of row i, and x's first k elements.
    unsafe {
        let row = args.a.offset(i as isize * args.rs_a);
        let mut sum = T::zero();
        for p in 0..args.k {
            // A product and a sum, not an FMA: only the sums are a chain.
            sum = sum + *row.add(p) * *args.x.add(p);
        }
        let y = args.y.offset(i as isize * args.inc_y);
        let old = if args.beta.is_zero() {
            T::zero()
        } else {
            args.beta * *y
        };
        *y = args.alpha * sum + old;
    }
}

#[cfg(test)]
mod tests {
    use super::fewer_streams;

    #[test]
    fn four_streams_only_for_cached_a_whose_streams_share_an_l1_set() {
        // 1024 f32 = 4 KiB apart, A 4 MiB: fewer; 16 MiB: from memory, all 8.
        assert!(fewer_streams(1024, 4, 1024, 1024));
        assert!(!fewer_streams(1024, 4, 2048, 2048));
        // 8 KiB apart, negative strides, and a line off either way of a way.
        assert!(fewer_streams(-1024, 8, 16, 100));
        assert!(fewer_streams(1030, 4, 16, 100));
        assert!(fewer_streams(1018, 4, 16, 100));
        // 2 KiB or 4 KiB + 64 B apart spread over sets.
        assert!(!fewer_streams(512, 4, 16, 100));
        assert!(!fewer_streams(1040, 4, 16, 100));
    }
}
