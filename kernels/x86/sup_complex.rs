//! The sup microkernel body for complex dtypes, written once over [`Simd`] (its element type
//! is the real part's) and instantiated inside `#[target_feature]` shells:
//! `kernels/skx/sup_c32_16x6.rs`, `sup_c64_8x6.rs` (AVX-512) and
//! `kernels/haswell/sup_c32_8x3.rs`, `sup_c64_4x3.rs` (AVX2). The contract is `SupUkr` in
//! `kernels/mod.rs`: A and B read in place, edges handled here.
//!
//! The arithmetic is the packed complex kernel's (`gemm_complex.rs`): a register holds
//! LANES/2 interleaved (re, im) pairs; for each B element its real and imaginary parts are
//! broadcast and A·b_re, A·b_im accumulated apart, combined once per tile. The edges are the
//! real sup kernel's (`sup_real.rs`): one instance per shape of the row vectors and per
//! column count (1..=NR), the last vector's rows masked (masked-off lanes are neither read
//! nor written), and the last rows in the kernel's narrower vector type H where they fit
//! (on skx a ymm: half a zmm's FMA cost on Zen 4, see `sup_real.rs`). Tiles up to (LANES)×NR
//! complex: two vectors of LANES/2 rows. No conjugation here: the sup path copies a
//! conjugated A, and a conjugated B (or sends a large one to packing). The epilogue has a
//! path for column-stored C (vector loads and stores, masked on the last vector) and one for
//! general strides (a stack tile, then element by element), apart, so that the accumulators
//! stay in registers.

use num_complex::Complex;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::gemm_complex::{MAX_TILE_REALS, mul_scalar, scaled_product};
use crate::kernels::x86::simd::Simd;
use crate::types::{Element, Scalar};

/// The widest tile any complex sup kernel uses, in columns (the match below covers 1..=6;
/// a kernel with a narrower NR instantiates only the arms up to it).
const MAX_NR: usize = 6;

/// The body, dispatching on the tile's shape. See the module docs.
///
/// # Safety
/// The `SupUkr` contract for tiles up to (V::LANES)×NR complex, with `H::LANES <=
/// V::LANES`, called from a function compiled with `V`'s and `H`'s target features on a CPU
/// that has them.
#[inline(always)]
pub(crate) unsafe fn sup_complex<V: Simd, H: Simd<Elem = V::Elem>, const NR: usize>(
    args: &SupUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    let (v_rows, h_rows) = (V::LANES / 2, H::LANES / 2);
    debug_assert!(NR <= MAX_NR && args.n >= 1 && args.n <= NR && args.m <= 2 * v_rows);
    debug_assert!(h_rows <= v_rows);
    let m = args.m;
    // SAFETY: passed on; each instance covers at least the tile's rows and exactly its n
    // columns, and its first vector (of two) is full (m > v_rows).
    unsafe {
        if m > v_rows + h_rows {
            by_columns::<V, V, 2, NR>(args)
        } else if m > v_rows {
            by_columns::<V, H, 2, NR>(args)
        } else if m > h_rows {
            by_columns::<V, V, 1, NR>(args)
        } else {
            by_columns::<H, H, 1, NR>(args)
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
    unsafe { body::<V, V, 2, NR, true>(args) }
}

/// Dispatches on the column count, at most NR (the guards are constant per kernel, so the
/// compiler drops the arms a narrow kernel can never take; the last arm is n = NR).
///
/// # Safety
/// As [`body`], with `args.n <= NR`.
#[inline(always)]
unsafe fn by_columns<V0: Simd, V1: Simd<Elem = V0::Elem>, const VECS: usize, const NR: usize>(
    args: &SupUkrArgs<Complex<V0::Elem>, Complex<V0::Elem>>,
) where
    V0::Elem: Scalar,
    Complex<V0::Elem>: Scalar,
{
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            1 if NR > 1 => body::<V0, V1, VECS, 1, false>(args),
            2 if NR > 2 => body::<V0, V1, VECS, 2, false>(args),
            3 if NR > 3 => body::<V0, V1, VECS, 3, false>(args),
            4 if NR > 4 => body::<V0, V1, VECS, 4, false>(args),
            5 if NR > 5 => body::<V0, V1, VECS, 5, false>(args),
            _ => body::<V0, V1, VECS, NR, false>(args),
        }
    }
}

/// The kernel for a tile of exactly N columns whose rows are covered by VECS vectors: with
/// VECS = 2, a full V0 (its rows all in the tile) and then a V1 for the rest; with VECS = 1,
/// one V1 (V0 unused). The last vector's rows are masked unless FULL (exactly
/// `(VECS − 1)·V0::LANES/2 + V1::LANES/2` rows).
///
/// # Safety
/// As [`sup_complex`], with `args.n == N`, `(VECS − 1)·V0::LANES/2 < args.m <= (VECS −
/// 1)·V0::LANES/2 + V1::LANES/2` (`==` when FULL), and the CPU features of both vector
/// types.
// Its own function when unoptimized (build.rs: the dispatchers' frames stay small).
#[cfg_attr(not(oxblis_unoptimized), inline(always))]
#[cfg_attr(oxblis_unoptimized, inline(never))]
unsafe fn body<
    V0: Simd,
    V1: Simd<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
    const FULL: bool,
>(
    args: &SupUkrArgs<Complex<V0::Elem>, Complex<V0::Elem>>,
) where
    V0::Elem: Scalar,
    Complex<V0::Elem>: Scalar,
{
    // Where the last vector starts, in complex rows, and (a constant for full tiles, so that
    // its mask folds away: plain loads and stores) how many rows the tile has.
    let last = (VECS - 1) * V0::LANES / 2;
    let m = if FULL { last + V1::LANES / 2 } else { args.m };
    // SAFETY: the first vector's loads and stores stay in rows below `last` < m, the last
    // vector's masked ones in rows `last..m` (two reals per complex), of A's columns p < k
    // and C's columns j < n; B reads stay in columns below N = n and rows below k. That is
    // all memory the contract makes valid; the caller provides the vectors' target features.
    unsafe {
        let mask = V1::mask(2 * (m - last));
        // B's columns, in reals (a complex is two).
        let mut b_offsets = [0isize; N];
        for (j, off) in b_offsets.iter_mut().enumerate() {
            *off = 2 * j as isize * args.cs_b;
        }
        let (mut re0, mut im0) = ([V0::zero(); N], [V0::zero(); N]);
        let (mut re1, mut im1) = ([V1::zero(); N], [V1::zero(); N]);
        let (mut a, mut b) = (args.a.cast::<V0::Elem>(), args.b.cast::<V0::Elem>());
        for _ in 0..args.k {
            // Two row vectors at most, written out (see `gemm_real.rs` for why).
            let a0 = if VECS == 2 { V0::load(a) } else { V0::zero() };
            let a1 = if FULL {
                V1::load(a.add(2 * last))
            } else {
                V1::load_masked(a.add(2 * last), mask)
            };
            for j in 0..N {
                let bj = b.offset(b_offsets[j]);
                let (b_re, b_im) = (*bj, *bj.add(1));
                if VECS == 2 {
                    re0[j] = V0::fma(a0, V0::splat(b_re), re0[j]);
                    im0[j] = V0::fma(a0, V0::splat(b_im), im0[j]);
                }
                re1[j] = V1::fma(a1, V1::splat(b_re), re1[j]);
                im1[j] = V1::fma(a1, V1::splat(b_im), im1[j]);
            }
            a = a.offset(2 * args.cs_a);
            b = b.offset(2 * args.rs_b);
        }

        if args.rs_c == 1 {
            for j in 0..N {
                if VECS == 2 {
                    finish_rows::<V0>(args, j, 0, re0[j], im0[j], None);
                }
                let last_mask = if FULL { None } else { Some(mask) };
                finish_rows::<V1>(args, j, last, re1[j], im1[j], last_mask);
            }
        } else {
            // General strides: alpha·A·B through a stack tile (a column every 2·V0::LANES
            // reals, each register stored whole), then element by element. Apart from the
            // column path, for the reason in `gemm_complex.rs`'s epilogue: otherwise the
            // accumulators live in memory.
            let pitch = 2 * V0::LANES;
            // The vector stores below are unchecked: this bound keeps them in the tile (all
            // constants, so the check compiles away).
            assert!(N * pitch <= MAX_TILE_REALS && 2 * last + V1::LANES <= pitch);
            let mut tile = [V0::Elem::zero(); MAX_TILE_REALS];
            for j in 0..N {
                let column = tile.as_mut_ptr().add(j * pitch);
                if VECS == 2 {
                    V0::store(column, alpha_times::<V0>(args, re0[j], im0[j]));
                }
                V1::store(
                    column.add(2 * last),
                    alpha_times::<V1>(args, re1[j], im1[j]),
                );
            }
            for j in 0..N {
                for i in 0..m {
                    let z = Complex::new(tile[j * pitch + 2 * i], tile[j * pitch + 2 * i + 1]);
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    *p = if args.beta.is_zero() {
                        z
                    } else {
                        z + args.beta * *p
                    };
                }
            }
        }
    }
}

/// alpha·(A·B) for one register of the tile from its accumulators (`scaled_product`).
///
/// # Safety
/// The caller provides W's target features.
#[inline(always)]
unsafe fn alpha_times<W: Simd>(
    args: &SupUkrArgs<Complex<W::Elem>, Complex<W::Elem>>,
    re: W,
    im: W,
) -> W
where
    W::Elem: Scalar,
    Complex<W::Elem>: Scalar,
{
    // SAFETY: the caller's.
    unsafe {
        let (alpha_re, alpha_im) = (W::splat(args.alpha.re), W::splat(args.alpha.im));
        scaled_product(re, im, W::splat(W::Elem::one()), alpha_re, alpha_im)
    }
}

/// Writes the rows of column j of a column-stored C tile (`rs_c == 1`) that one register
/// holds, from `first`: alpha times the product in its accumulators `re`, `im`, plus beta
/// times C unless beta is zero; through `mask` where given (the register's rows past the
/// tile are not touched), whole otherwise.
///
/// # Safety
/// As [`body`]: the rows are in the tile, `mask` (or the whole register) covers exactly
/// them, C's row stride is 1, and the caller provides W's target features.
#[inline(always)]
unsafe fn finish_rows<W: Simd>(
    args: &SupUkrArgs<Complex<W::Elem>, Complex<W::Elem>>,
    j: usize,
    first: usize,
    re: W,
    im: W,
    mask: Option<W::Mask>,
) where
    W::Elem: Scalar,
    Complex<W::Elem>: Scalar,
{
    // SAFETY: the caller's: C's rows from `first` of column j are in the tile.
    unsafe {
        let mut out = alpha_times::<W>(args, re, im);
        let p = args
            .c
            .offset(j as isize * args.cs_c)
            .add(first)
            .cast::<W::Elem>();
        if !args.beta.is_zero() {
            let (beta_re, beta_im) = (W::splat(args.beta.re), W::splat(args.beta.im));
            let old = match mask {
                Some(mask) => W::load_masked(p, mask),
                None => W::load(p),
            };
            out = W::add(out, mul_scalar(old, beta_re, beta_im));
        }
        match mask {
            Some(mask) => W::store_masked(p, mask, out),
            None => W::store(p, out),
        }
    }
}
