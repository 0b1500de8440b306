//! The tall-A kernel body for real dtypes (`TallUkr`, `kernels/mod.rs`), written once over
//! [`Simd`] and instantiated by `kernels/skx/tall_*.rs`.
//!
//! One call goes down m rows, a tile at a time (C's tiles `c_tile_stride` apart: in place,
//! or the from-memory driver's tile-major running sums, `frame/l3/tall.rs`).
//! One tile is one register of rows (MR = LANES) by W columns, W the packed width the driver
//! chose for C's n (2, 4, 8, 16 or 24): W accumulators, one per column of C. Per k step: one
//! vector load of A's column (in place, a full 64-byte line on AVX-512), W broadcasts of the
//! packed B row folded into the FMAs, and one software prefetch of the same column at
//! `a_prefetch`. Taller tiles (2–8 registers of rows, so W broadcasts serve several lines)
//! were measured and lost from memory: dgemm 4096×4×4096 14.0 GFLOPS with one register,
//! 9.6–11.4 with 2–4 (docs/Performance.md). That prefetch is the point of the kernel: A
//! is read from memory exactly once, column by column with a page or more between columns,
//! which the hardware prefetchers do not follow; the driver aims `a_prefetch` a few tiles
//! down, so the lines this kernel will need are in flight while it computes (without it,
//! 14 GFLOPS for dgemm 4096×16×4096; with it, memory and compute overlap:
//! docs/Performance.md). The last tile of a column (m < MR rows) loads under a mask and
//! never touches rows past m. C: vector (masked) loads and stores for unit row stride,
//! element by element otherwise; only the first n columns are stored. beta == 0: C is not
//! read.

use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

use crate::kernels::x86::simd::{Packed, Simd};
use crate::kernels::{TallUkrArgs, tall_packed_width};
use crate::types::{Element, Scalar};

/// The body for tiles of up to LANES×NT, computing W = [`tall_packed_width`]`(n, NT)` columns
/// (2, 4, 8, 16 below NT, else NT) to match the driver's packed B. NT is what one register
/// of rows leaves room for: 24 with AVX-512 (24 accumulators and A's vector in 32
/// registers; 32 columns would spill), 12 with AVX2 (16 registers, broadcasts need one).
///
/// # Safety
/// The `TallUkr` contract for LANES×NT tiles, called from a function compiled with `V`'s
/// target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn tall_real_up_to<V: Simd, const NT: usize>(args: &TallUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar + Element<Acc = V::Elem> + Packed<V>,
{
    // SAFETY: the same contract; B is packed at the width of the instance chosen.
    unsafe {
        match tall_packed_width(args.n, NT) {
            2 if NT > 2 => tall_real::<V, 2>(args),
            4 if NT > 4 => tall_real::<V, 4>(args),
            8 if NT > 8 => tall_real::<V, 8>(args),
            16 if NT > 16 => tall_real::<V, 16>(args),
            _ => tall_real::<V, NT>(args),
        }
    }
}

/// The body for one packed width NT (B packed k×NT). See the module docs; the contract is
/// `TallUkr` in `kernels/mod.rs`.
///
/// # Safety
/// The `TallUkr` contract for LANES×NT tiles, called from a function compiled with `V`'s
/// target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn tall_real<V: Simd, const NT: usize>(args: &TallUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar + Element<Acc = V::Elem> + Packed<V>,
{
    debug_assert!(args.m >= 1 && args.n >= 1 && args.n <= NT);
    // SAFETY: the contract makes rows below m of A's first k columns, k·NT elements of B and
    // each tile's rows and n columns of C valid; every tile below stays inside them (its
    // rows, A's rows and the prefetch address advance together by LANES, C's by the tile
    // stride), and the caller provides V's target features.
    unsafe {
        let mut tile = *args;
        let mut rows_left = args.m;
        loop {
            tile.m = rows_left.min(V::LANES);
            one_tile::<V, NT>(&tile);
            rows_left -= tile.m;
            if rows_left == 0 {
                break;
            }
            tile.a = tile.a.add(V::LANES);
            tile.a_prefetch = tile.a_prefetch.wrapping_add(V::LANES);
            tile.c = tile.c.offset(args.c_tile_stride);
        }
    }
}

/// One tile of at most LANES rows. Full tiles of a C with unit row stride and alpha = beta =
/// 1 (the from-memory driver's tile-major running sums) start from C's values and add each
/// k step to them, with the accumulators kept in registers throughout. Through the general
/// epilogue (`store_c`: alpha, beta and n checked per column) the from-memory path ran at
/// 0.31–0.73 of this on 4096×{4–16}×4096, its k blocks being 8 steps deep
/// (docs/Performance.md). Any caller with those arguments gets this rounding (C first),
/// the same on every call.
///
/// # Safety
/// As [`tall_real`], for one tile (`args.m ≤ LANES`).
#[inline(always)]
unsafe fn one_tile<V: Simd, const NT: usize>(args: &TallUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar + Element<Acc = V::Elem> + Packed<V>,
{
    // SAFETY: as in `tall_real`: rows below m (loads masked when m < LANES), columns below n.
    unsafe {
        let full = args.m == V::LANES;
        let one = V::Elem::one();
        if full && args.rs_c == 1 && args.n == NT && args.alpha == one && args.beta == one {
            let mut acc = [V::zero(); NT];
            for (j, acc_j) in acc.iter_mut().enumerate() {
                *acc_j = V::load(args.c.offset(j as isize * args.cs_c));
            }
            let acc = k_loop::<V, NT, false>(args, acc);
            for (j, &v) in acc.iter().enumerate() {
                V::store(args.c.offset(j as isize * args.cs_c), v);
            }
            return;
        }
        let acc = if full {
            k_loop::<V, NT, false>(args, [V::zero(); NT])
        } else {
            k_loop::<V, NT, true>(args, [V::zero(); NT])
        };
        store_c::<V, NT>(args, &acc);
    }
}

/// The k loop: `acc` plus the NT column sums of alpha-less products. `MASKED` loads only `args.m` rows
/// of each A column (the bottom edge tile); the full-tile loop avoids the mask.
///
/// # Safety
/// As [`tall_real`].
#[inline(always)]
unsafe fn k_loop<V: Simd, const NT: usize, const MASKED: bool>(
    args: &TallUkrArgs<V::Elem, V::Elem>,
    mut acc: [V; NT],
) -> [V; NT]
where
    V::Elem: Scalar + Element<Acc = V::Elem> + Packed<V>,
{
    // SAFETY: as in `tall_real`; column p of A at a + p·cs_a is read for p < k only, B's row
    // p for p < k, and the prefetch address is computed with wrapping arithmetic (it may lie
    // outside any allocation; prefetching does not fault).
    unsafe {
        let mask = V::mask(args.m);
        let (mut a, mut b, mut pf) = (args.a, args.b, args.a_prefetch);
        for _ in 0..args.k {
            _mm_prefetch::<_MM_HINT_T0>(pf.cast());
            let av = if MASKED {
                V::load_masked(a, mask)
            } else {
                V::load(a)
            };
            for (j, acc_j) in acc.iter_mut().enumerate() {
                *acc_j = V::fma(av, <V::Elem as Packed<V>>::splat_from(b.add(j)), *acc_j);
            }
            a = a.offset(args.cs_a);
            pf = pf.wrapping_offset(args.cs_a);
            b = b.add(NT);
        }
        acc
    }
}

/// C[0..m, 0..n] := alpha·acc + beta·C (C not read when beta = 0).
///
/// # Safety
/// As [`tall_real`].
#[inline(always)]
unsafe fn store_c<V: Simd, const NT: usize>(args: &TallUkrArgs<V::Elem, V::Elem>, acc: &[V; NT])
where
    V::Elem: Scalar + Element<Acc = V::Elem> + Packed<V>,
{
    // SAFETY: as in `tall_real`: rows below m, columns below n of C.
    unsafe {
        let alpha = V::splat(args.alpha);
        let beta = V::splat(args.beta);
        let beta_is_zero = args.beta.is_zero();
        let mask = V::mask(args.m);
        // One register's lanes, for C with a row stride (LANES ≤ 16 for every ISA here).
        debug_assert!(V::LANES <= 16);
        let mut lanes = [V::Elem::zero(); 16];
        for (j, &v) in acc.iter().enumerate().take(args.n) {
            let col = args.c.offset(j as isize * args.cs_c);
            let ab = V::mul(alpha, v);
            if args.rs_c == 1 {
                let out = if beta_is_zero {
                    ab
                } else {
                    V::fma(beta, V::load_masked(col, mask), ab)
                };
                V::store_masked(col, mask, out);
            } else {
                V::store(lanes.as_mut_ptr(), ab);
                for (i, &x) in lanes.iter().enumerate().take(args.m) {
                    let p = col.offset(i as isize * args.rs_c);
                    *p = if beta_is_zero { x } else { x + args.beta * *p };
                }
            }
        }
    }
}
