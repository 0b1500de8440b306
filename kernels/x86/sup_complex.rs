//! The sup microkernel body for complex dtypes, written once over [`Simd`] (its element type
//! is the real part's) and instantiated inside `#[target_feature]` shells:
//! `kernels/skx/sup_c32_16x6.rs`, `sup_c64_8x6.rs` (AVX-512) and
//! `kernels/haswell/sup_c32_8x2.rs`, `sup_c64_4x2.rs` (AVX2). The contract is `SupUkr` in
//! `kernels/mod.rs`: A and B read in place, edges handled here.
//!
//! The arithmetic is the packed complex kernel's (`gemm_complex.rs`): a register holds
//! LANES/2 interleaved (re, im) pairs; for each B element its real and imaginary parts are
//! broadcast and A·b_re, A·b_im accumulated apart, combined once per tile. The edges are the
//! real sup kernel's (`sup_real.rs`): one instance per number of row vectors (1 or 2) and per
//! column count (1..=NR), the last vector's rows masked (masked-off lanes are neither read
//! nor written). Tiles up to (LANES)×NR complex: two vectors of LANES/2 rows. No conjugation
//! here: the sup path copies a conjugated A and sends a conjugated B to packing.

use num_complex::Complex;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::gemm_complex::{mul_scalar, scaled_product, store_strided};
use crate::kernels::x86::simd::Simd;
use crate::types::Scalar;

/// The widest tile any complex sup kernel uses, in columns (the match below covers 1..=6;
/// a kernel with a narrower NR instantiates only the arms up to it).
const MAX_NR: usize = 6;

/// The body, dispatching on the tile's shape. See the module docs.
///
/// # Safety
/// The `SupUkr` contract for tiles up to (LANES)×NR complex, called from a function compiled
/// with `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn sup_complex<V: Simd, const NR: usize>(
    args: &SupUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    let per_vector = V::LANES / 2;
    debug_assert!(NR <= MAX_NR && args.n >= 1 && args.n <= NR && args.m <= 2 * per_vector);
    // SAFETY: passed on; each instance computes exactly the tile's n columns and at most its
    // vectors of rows.
    unsafe {
        if args.m > per_vector {
            by_columns::<V, 2, NR>(args)
        } else {
            by_columns::<V, 1, NR>(args)
        }
    }
}

/// The body for a full tile: exactly (LANES)×NR complex, without row masks, for a shell to
/// call from a function of its own (as `sup_real_full`, and for the same reasons).
///
/// # Safety
/// As [`sup_complex`], with `args.m == LANES` and `args.n == NR`.
#[inline(always)]
pub(crate) unsafe fn sup_complex_full<V: Simd, const NR: usize>(
    args: &SupUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    debug_assert!(NR <= MAX_NR && args.n == NR && args.m == V::LANES);
    // SAFETY: passed on; the tile is exactly two vectors of rows by NR columns.
    unsafe { body::<V, 2, NR, true>(args) }
}

/// Dispatches on the column count, at most NR (the guards are constant per kernel, so the
/// compiler drops the arms a narrow kernel can never take; the last arm is n = NR).
///
/// # Safety
/// As [`sup_complex`], with `args.m <= VECS·LANES/2` and `args.n <= NR`.
#[inline(always)]
unsafe fn by_columns<V: Simd, const VECS: usize, const NR: usize>(
    args: &SupUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            1 if NR > 1 => body::<V, VECS, 1, false>(args),
            2 if NR > 2 => body::<V, VECS, 2, false>(args),
            3 if NR > 3 => body::<V, VECS, 3, false>(args),
            4 if NR > 4 => body::<V, VECS, 4, false>(args),
            5 if NR > 5 => body::<V, VECS, 5, false>(args),
            _ => body::<V, VECS, NR, false>(args),
        }
    }
}

/// The kernel for a tile of exactly N columns and at most VECS vectors of rows (FULL: exactly
/// VECS vectors, so no row mask is needed).
///
/// # Safety
/// As [`sup_complex`], with `args.n == N` and `args.m <= VECS·LANES/2` (`==` when FULL).
#[inline(always)]
unsafe fn body<V: Simd, const VECS: usize, const N: usize, const FULL: bool>(
    args: &SupUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    let per_vector = V::LANES / 2;
    // A constant for full tiles, so that their masks fold away (plain loads and stores).
    let m = if FULL { VECS * per_vector } else { args.m };
    // SAFETY: masked loads touch only rows below m of A's columns p < k (two reals per
    // complex); B reads stay in columns below N = n and rows below k; C is touched only at
    // rows below m and columns below n. That is all memory the contract makes valid; the
    // caller provides V's target features.
    unsafe {
        let mut masks = [V::mask(0); VECS];
        for (h, mask) in masks.iter_mut().enumerate() {
            *mask = V::mask((2 * m).saturating_sub(h * V::LANES));
        }
        // B's columns, in reals (a complex is two).
        let mut b_offsets = [0isize; N];
        for (j, off) in b_offsets.iter_mut().enumerate() {
            *off = 2 * j as isize * args.cs_b;
        }
        let mut re = [[V::zero(); VECS]; N];
        let mut im = [[V::zero(); VECS]; N];
        let (mut a, mut b) = (args.a.cast::<V::Elem>(), args.b.cast::<V::Elem>());
        for _ in 0..args.k {
            // Two row vectors at most, written out (see `gemm_real.rs` for why).
            let a0 = V::load_masked(a, masks[0]);
            let a1 = if VECS == 2 {
                V::load_masked(a.add(V::LANES), masks[VECS - 1])
            } else {
                a0
            };
            for j in 0..N {
                let bj = b.offset(b_offsets[j]);
                let (b_re, b_im) = (V::splat(*bj), V::splat(*bj.add(1)));
                re[j][0] = V::fma(a0, b_re, re[j][0]);
                im[j][0] = V::fma(a0, b_im, im[j][0]);
                if VECS == 2 {
                    re[j][VECS - 1] = V::fma(a1, b_re, re[j][VECS - 1]);
                    im[j][VECS - 1] = V::fma(a1, b_im, im[j][VECS - 1]);
                }
            }
            a = a.offset(2 * args.cs_a);
            b = b.offset(2 * args.rs_b);
        }

        let (alpha_re, alpha_im) = (V::splat(args.alpha.re), V::splat(args.alpha.im));
        let (beta_re, beta_im) = (V::splat(args.beta.re), V::splat(args.beta.im));
        let beta_is_zero = args.beta.is_zero();
        let one = V::splat(V::Elem::one());
        for j in 0..N {
            for h in 0..VECS {
                let mut out = scaled_product(re[j][h], im[j][h], one, alpha_re, alpha_im);
                let first = h * per_vector;
                if args.rs_c == 1 {
                    let p = args
                        .c
                        .offset(j as isize * args.cs_c)
                        .add(first)
                        .cast::<V::Elem>();
                    if !beta_is_zero {
                        let old = V::load_masked(p, masks[h]);
                        out = V::add(out, mul_scalar(old, beta_re, beta_im));
                    }
                    V::store_masked(p, masks[h], out);
                } else {
                    let rows = per_vector.min(m.saturating_sub(first));
                    let c = args
                        .c
                        .offset(first as isize * args.rs_c + j as isize * args.cs_c);
                    store_strided(out, rows, c, args.rs_c, args.beta);
                }
            }
        }
    }
}
