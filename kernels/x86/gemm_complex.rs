//! The packed microkernel body for complex dtypes, written once over [`Simd`] (its element
//! type is the real part's) and instantiated by the kernel files (`kernels/skx/gemm_c32_16x6.rs`,
//! …) inside their `#[target_feature]` shells.
//!
//! Complex numbers are interleaved (re, im) pairs, so a register holds LANES/2 of them and
//! an MR×NR tile (MR = MV·LANES/2) uses MV registers per column. For each B element the
//! kernel broadcasts its real part and its imaginary part and accumulates A·b_re and A·b_im
//! apart (every lane of every FMA is useful work); once per tile it combines them:
//! re = Σ a_re·b_re − Σ a_im·b_im, im = Σ a_im·b_re + Σ a_re·b_im, by swapping the pairs of
//! the second sum and one `fmaddsub`. Per k step: MV loads, 2·NR broadcasts, 2·MV·NR FMAs.
//! Packing has already applied any conjugation. beta == 0: C is not read. As in the real
//! kernel, the C tile is prefetched (every line of each column) before the k loop, and the
//! epilogue has a path of its own for column-stored C (vector loads and stores) and one for
//! general strides (a stack tile, then element by element).
//!
//! `K_UNROLL` k steps make one trip of the k loop, as in `gemm_real.rs` (haswell 4, skx 1).
//! Each broadcast's FMAs follow it before the next broadcast, so one broadcast register
//! serves a tile: AVX2's 3-column tiles (12 accumulators, 2 A vectors) then fit in 16
//! registers, where loading a column's two broadcasts together spilled two accumulators.

use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

use num_complex::Complex;

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::simd::Simd;
use crate::types::{Element, Scalar};

/// The most reals a complex tile holds, 2·MR·NR: skx's c32 kernel, 16×6 complex. The
/// general-stride epilogue's stack tile is this long (768 bytes of f32, 1.5 KiB of f64;
/// a 1024-element tile, as the real kernels use, put 8 KiB in the frame).
pub(crate) const MAX_TILE_REALS: usize = 192;

/// z·s for packed complex z and a complex scalar s given as broadcast (re, im).
///
/// # Safety
/// As [`Simd`]'s methods.
#[inline(always)]
pub(crate) unsafe fn mul_scalar<V: Simd>(z: V, s_re: V, s_im: V) -> V {
    // SAFETY: the caller's.
    unsafe { V::fmaddsub(z, s_re, V::mul(V::swap_pairs(z), s_im)) }
}

/// alpha·(A·b) from the two accumulators of one register of a tile: `re` = Σ A·b_re,
/// `im` = Σ A·b_im (pairwise: re parts of the first minus im parts of the second, and so
/// on); `one` is 1 in every lane, alpha given as broadcast (re, im).
///
/// # Safety
/// As [`Simd`]'s methods.
#[inline(always)]
pub(crate) unsafe fn scaled_product<V: Simd>(re: V, im: V, one: V, alpha_re: V, alpha_im: V) -> V {
    // SAFETY: the caller's.
    unsafe { mul_scalar(V::fmaddsub(re, one, V::swap_pairs(im)), alpha_re, alpha_im) }
}

/// The body. See the module docs; the contract is `GemmUkr` in `kernels/mod.rs`.
///
/// # Safety
/// The `GemmUkr` contract for (MV·LANES/2)×NR complex tiles, called from a function compiled
/// with `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemm_complex<
    V: Simd,
    const MV: usize,
    const NR: usize,
    const K_UNROLL: usize,
>(
    args: &GemmUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    const { assert!(K_UNROLL >= 1, "K_UNROLL ≥ 1") };
    let mr = MV * V::LANES / 2;
    // SAFETY: the contract gives MR·k readable complex at `a`, k·NR at `b`, and a writable
    // MR×NR tile at `c` (strides in complex elements); a complex is two reals, so the real
    // views below stay inside those. The caller provides V's target features.
    unsafe {
        if args.rs_c == 1 {
            // Every line of each column, as the real kernel does (`gemm_real.rs`): the tile
            // is written once the k loop ends, and with a short k its lines would otherwise
            // arrive only then.
            let column_bytes = mr * size_of::<Complex<V::Elem>>();
            for j in 0..NR {
                let col = args.c.offset(j as isize * args.cs_c).cast::<u8>();
                for offset in (0..column_bytes).step_by(64) {
                    _mm_prefetch::<_MM_HINT_T0>(col.add(offset).cast());
                }
                _mm_prefetch::<_MM_HINT_T0>(col.add(column_bytes - 1).cast());
            }
        }
        let mut re = [[V::zero(); MV]; NR];
        let mut im = [[V::zero(); MV]; NR];
        let (mut a, mut b) = (args.a.cast::<V::Elem>(), args.b.cast::<V::Elem>());
        debug_assert!(MV == 1 || MV == 2);
        for _ in 0..args.k / K_UNROLL {
            for _ in 0..K_UNROLL {
                k_step::<V, MV, NR>(&mut re, &mut im, a, b);
                a = a.add(2 * mr);
                b = b.add(2 * NR);
            }
        }
        for _ in 0..args.k % K_UNROLL {
            k_step::<V, MV, NR>(&mut re, &mut im, a, b);
            a = a.add(2 * mr);
            b = b.add(2 * NR);
        }

        let (alpha_re, alpha_im) = (V::splat(args.alpha.re), V::splat(args.alpha.im));
        let one = V::splat(V::Elem::one());
        let per_vector = V::LANES / 2;
        if args.rs_c == 1 {
            let (beta_re, beta_im) = (V::splat(args.beta.re), V::splat(args.beta.im));
            let beta_is_zero = args.beta.is_zero();
            for j in 0..NR {
                let col = args.c.offset(j as isize * args.cs_c);
                for h in 0..MV {
                    let mut out = scaled_product(re[j][h], im[j][h], one, alpha_re, alpha_im);
                    let p = col.add(h * per_vector).cast::<V::Elem>();
                    if !beta_is_zero {
                        out = V::add(out, mul_scalar(V::load(p), beta_re, beta_im));
                    }
                    V::store(p, out);
                }
            }
        } else {
            // General strides: alpha·A·B through a column-major stack tile, then element by
            // element. Kept apart from the column path, and the tile written with whole
            // vector stores: with a strided store per register (or with the two paths in
            // one loop over the registers) the accumulators lived in memory, and the loop
            // nest's zgemm 2000×2000×8 on skx spent a fifth of its kernel time zeroing them
            // on the stack (26 → 35–39 GFLOPS once apart).
            // The vector stores below are unchecked: this bound keeps them in the tile (all
            // constants, so the check compiles away).
            assert!(2 * mr * NR <= MAX_TILE_REALS);
            let mut tile = [V::Elem::zero(); MAX_TILE_REALS];
            for j in 0..NR {
                for h in 0..MV {
                    let out = scaled_product(re[j][h], im[j][h], one, alpha_re, alpha_im);
                    V::store(tile.as_mut_ptr().add(2 * (j * mr + h * per_vector)), out);
                }
            }
            for j in 0..NR {
                for i in 0..mr {
                    let z = Complex::new(tile[2 * (j * mr + i)], tile[2 * (j * mr + i) + 1]);
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

/// One k step of the tile: MV vector loads of the A column at `a` (reals), the real and
/// imaginary part of NR elements broadcast from `b`, 2·MV·NR FMAs into `re` and `im`.
///
/// # Safety
/// `a` holds MV·LANES readable reals and `b` 2·NR; called with `V`'s target features.
#[inline(always)]
unsafe fn k_step<V: Simd, const MV: usize, const NR: usize>(
    re: &mut [[V; MV]; NR],
    im: &mut [[V; MV]; NR],
    a: *const V::Elem,
    b: *const V::Elem,
) {
    // SAFETY: the caller's contract covers these reads.
    unsafe {
        // Two row vectors at most, written out (see `gemm_real.rs` for why).
        let a0 = V::load(a);
        let a1 = if MV == 2 {
            V::load(a.add(V::LANES))
        } else {
            a0
        };
        // Each broadcast's FMAs before the next broadcast (the module docs say why).
        for j in 0..NR {
            let b_re = V::splat(*b.add(2 * j));
            re[j][0] = V::fma(a0, b_re, re[j][0]);
            if MV == 2 {
                re[j][MV - 1] = V::fma(a1, b_re, re[j][MV - 1]);
            }
            let b_im = V::splat(*b.add(2 * j + 1));
            im[j][0] = V::fma(a0, b_im, im[j][0]);
            if MV == 2 {
                im[j][MV - 1] = V::fma(a1, b_im, im[j][MV - 1]);
            }
        }
    }
}
