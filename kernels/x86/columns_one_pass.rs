//! The columns kernel's one-pass form (the `GemvColumnsUkr` contract, real dtypes, A's
//! columns and the y_j contiguous), for k up to [`ONE_PASS_MAX_K`]: N ≤ 4 columns of y over
//! all of k at once. alpha·x_j(p) is gathered into a small stack buffer (any strides of x),
//! and the rows go R vectors at a time: per k step R loads of A, N broadcasts from the
//! buffer, R·N FMAs into R·N accumulators, and each y_j written once at the end.
//!
//! At short k, a tall C of two to four columns is this shape's worst case elsewhere: the sup
//! tile (16×12 dgemm on skx) holds two to four columns' accumulators, too few FMA chains to
//! cover their latency, and the short-k kernel (`short_k_real.rs`) runs each column's chain
//! k long per strip. The blocks form of `gemv_real.rs` (W columns of A a pass) reads and
//! writes y once per block. Here the R·N chains (8 to 16 for two to four columns) keep the
//! FMA units busy and y is touched once.

use std::mem::MaybeUninit;

use crate::kernels::x86::simd::Simd;
use crate::kernels::{GEMV_COLUMNS_MAX, GemvUkrArgs};
use crate::types::Scalar;

/// The deepest k the one-pass form takes: its buffer of alpha·x holds k·N elements. Its
/// other callers gained at such k too: a C of a few columns whose A's columns lie too far
/// apart for the sup kernels (`gemm_unsuited_to_sup`), dgemm NN 2048×8–32×17–32 2.0–2.3× the
/// blocks form (A's columns 16 KiB apart, which the blocks form reads four at a time), sgemm
/// 2.0–2.5×; level at 512 rows but for 512×32×17–32 (1.3–2.2×). The short, wide C whose
/// op(B) is streamed (`short_and_wide_streaming_b`) lost a little: dgemm NT 2×300×16–32
/// 0.84–0.92 in a sweep, 0.94 in a longer run (session 60, skx).
pub(crate) const ONE_PASS_MAX_K: usize = 32;

/// The form, for 1 ≤ k ≤ [`ONE_PASS_MAX_K`] and 1 ≤ n ≤ [`GEMV_COLUMNS_MAX`].
///
/// # Safety
/// The `GemvColumnsUkr` contract with `rs_a == 1` and `inc_y == 1`, called from a function
/// compiled with `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn columns_one_pass<V: Simd>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    n: usize,
    cs_x: isize,
    cs_y: isize,
) where
    V::Elem: Scalar,
{
    debug_assert!((1..=ONE_PASS_MAX_K).contains(&args.k));
    debug_assert!((1..=GEMV_COLUMNS_MAX).contains(&n));
    // SAFETY: passed on.
    unsafe {
        match n {
            1 => columns::<V, 1>(args, cs_x, cs_y),
            2 => columns::<V, 2>(args, cs_x, cs_y),
            3 => columns::<V, 3>(args, cs_x, cs_y),
            _ => columns::<V, 4>(args, cs_x, cs_y),
        }
    }
}

/// [`columns_one_pass`] for n = N.
///
/// # Safety
/// As [`columns_one_pass`], with `n == N`.
#[inline(always)]
unsafe fn columns<V: Simd, const N: usize>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    cs_x: isize,
    cs_y: isize,
) where
    V::Elem: Scalar,
{
    // SAFETY: x_j(p) for p < k and j < N, and rows below m (the last vector masked) of A's k
    // columns and of the N columns of y: what the contract makes valid.
    unsafe {
        // alpha·x_j(p) at `scaled_x[p·N + j]`: a k step's N values side by side.
        let mut scaled_x = [MaybeUninit::<V::Elem>::uninit(); ONE_PASS_MAX_K * GEMV_COLUMNS_MAX];
        for p in 0..args.k {
            for j in 0..N {
                let x = *args.x.offset(p as isize * args.inc_x + j as isize * cs_x);
                scaled_x[p * N + j].write(args.alpha * x);
            }
        }
        let scaled_x = scaled_x.as_ptr().cast::<V::Elem>();
        // R vectors of rows a step: R·N accumulators, R vectors of A and a broadcast must
        // fit the registers. Four with 32 (8 to 16 chains of FMAs); with 16 (AVX2), four for
        // one or two columns, three for three (13 registers), two for four (11).
        if V::REGISTERS >= 32 || N <= 2 {
            all_rows::<V, N, 4>(args, scaled_x, cs_y)
        } else if N == 3 {
            all_rows::<V, N, 3>(args, scaled_x, cs_y)
        } else {
            all_rows::<V, N, 2>(args, scaled_x, cs_y)
        }
    }
}

/// All m rows of the N columns of y: R vectors a step, then one vector a step, then the
/// last, partial vector masked.
///
/// # Safety
/// As [`columns`]; `scaled_x` holds k·N values.
#[inline(always)]
unsafe fn all_rows<V: Simd, const N: usize, const R: usize>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    scaled_x: *const V::Elem,
    cs_y: isize,
) where
    V::Elem: Scalar,
{
    // SAFETY: every step's rows are below m (the last masked to them).
    unsafe {
        let every_lane = V::mask(V::LANES);
        let mut i = 0;
        while i + R * V::LANES <= args.m {
            rows::<V, N, R, false>(args, scaled_x, cs_y, i, every_lane);
            i += R * V::LANES;
        }
        while i + V::LANES <= args.m {
            rows::<V, N, 1, false>(args, scaled_x, cs_y, i, every_lane);
            i += V::LANES;
        }
        if i < args.m {
            rows::<V, N, 1, true>(args, scaled_x, cs_y, i, V::mask(args.m - i));
        }
    }
}

/// Rows `i..i + R·LANES` of the N columns of y (with MASKED, R = 1 and the rows `mask`
/// holds).
///
/// # Safety
/// As [`columns`]; `scaled_x` holds k·N values; the rows exist (those `mask` selects, with
/// MASKED).
#[inline(always)]
unsafe fn rows<V: Simd, const N: usize, const R: usize, const MASKED: bool>(
    args: &GemvUkrArgs<V::Elem, V::Elem>,
    scaled_x: *const V::Elem,
    cs_y: isize,
    i: usize,
    mask: V::Mask,
) where
    V::Elem: Scalar,
{
    debug_assert!(!MASKED || R == 1);
    // SAFETY: rows i..i + R·LANES (masked) of A's columns below k and of the y_j; k·N
    // values of `scaled_x`.
    unsafe {
        // Plain loops, no closures: a closure is compiled without the caller's target
        // features, and intrinsics inside it become calls.
        let mut acc = [[V::zero(); N]; R];
        let mut column = args.a.add(i);
        let mut x = scaled_x;
        for _ in 0..args.k {
            let mut a = [V::zero(); R];
            for (r, a_r) in a.iter_mut().enumerate() {
                *a_r = if MASKED {
                    V::load_masked(column, mask)
                } else {
                    V::load(column.add(r * V::LANES))
                };
            }
            for j in 0..N {
                let x_j = V::splat(*x.add(j));
                for (acc_r, &a_r) in acc.iter_mut().zip(&a) {
                    acc_r[j] = V::fma(a_r, x_j, acc_r[j]);
                }
            }
            column = column.offset(args.cs_a);
            x = x.add(N);
        }
        let beta = V::splat(args.beta);
        for j in 0..N {
            let y = args.y.offset(j as isize * cs_y).add(i);
            for (r, acc_r) in acc.iter().enumerate() {
                let at = y.add(r * V::LANES);
                if MASKED {
                    let sum = if args.beta.is_zero() {
                        acc_r[j]
                    } else {
                        V::fma(beta, V::load_masked(at, mask), acc_r[j])
                    };
                    V::store_masked(at, mask, sum);
                } else {
                    let sum = if args.beta.is_zero() {
                        acc_r[j]
                    } else {
                        V::fma(beta, V::load(at), acc_r[j])
                    };
                    V::store(at, sum);
                }
            }
        }
    }
}
