//! The packed microkernel body for real dtypes, written once over [`Simd`] and instantiated
//! by the kernel files (`kernels/skx/gemm_f32_32x12.rs`, …) inside their `#[target_feature]`
//! shells.
//!
//! An MR×NR tile with MR = MV·LANES (MV is 1 or 2): MV·NR accumulator registers, `acc[j][h]` holding rows
//! `h·LANES..(h+1)·LANES` of column j. Per k step: MV vector loads of the A column, NR
//! broadcasts of B elements (which AVX-512 folds into the FMAs), MV·NR FMAs. The C tile is
//! prefetched (every line of each column) before the k loop; A and B stream in
//! order and are left to the hardware prefetcher. C: columns are vector loads/stores when
//! C's row stride is 1, a stack tile then elements one by one otherwise. beta == 0: C is
//! not read.
//!
//! `K_UNROLL` k steps make one trip of the k loop (the rest of k after them one by one). A
//! one-step loop of the AVX2 8×6 dgemm tile ran at 76–79 % of the FMA peak on a Zen 3 core,
//! four steps at 86–93 % (a C microbenchmark of the loop alone, A and B in L1); the kernel
//! sets say which they use in their files.
//!
//! The packed element type `E` may be narrower than the register's ([`Packed`]): bf16 panels
//! are widened to f32 as they are loaded (`kernels/skx/gemm_b16_32x12.rs`).

use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

use crate::kernels::x86::simd::{Packed, Simd};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::types::{Element, Scalar};

/// The body. See the module docs; the contract is `GemmUkr` in `kernels/mod.rs`.
///
/// # Safety
/// The `GemmUkr` contract for (MV·LANES)×NR tiles, called from a function compiled with
/// `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemm_real<
    V: Simd,
    E,
    const MV: usize,
    const NR: usize,
    const K_UNROLL: usize,
>(
    args: &GemmUkrArgs<E, E>,
) where
    V::Elem: Scalar,
    E: Packed<V> + Element<Acc = V::Elem>,
{
    const { assert!(K_UNROLL >= 1, "K_UNROLL ≥ 1") };
    let mr = MV * V::LANES;
    // SAFETY: the contract gives MR·k readable elements at `a`, k·NR at `b`, and a writable
    // MR×NR tile at `c` with strides rs_c, cs_c; every access below stays inside those, and
    // the caller provides V's target features.
    unsafe {
        if args.rs_c == 1 {
            // Every line of each column: C is often only element-aligned (a large Vec from
            // malloc sits 16 bytes past a page), and then an MR-tall column spans one line
            // more than MR·size/64; the first and last element alone miss the middle ones.
            let per_line = 64 / size_of::<V::Elem>();
            for j in 0..NR {
                let col = args.c.offset(j as isize * args.cs_c);
                for i in (0..mr).step_by(per_line) {
                    _mm_prefetch::<_MM_HINT_T0>(col.add(i).cast());
                }
                _mm_prefetch::<_MM_HINT_T0>(col.add(mr - 1).cast());
            }
        }
        // At most two row vectors, written out rather than looped over: a nested loop of
        // 12×2 exceeded the compiler's full-unroll budget, which left the accumulators in
        // memory (measured: skx sgemm 1024³ at 45 instead of 105 GFLOPS).
        debug_assert!(MV == 1 || MV == 2);
        let mut acc = [[V::zero(); MV]; NR];
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k / K_UNROLL {
            for _ in 0..K_UNROLL {
                k_step::<V, E, MV, NR>(&mut acc, a, b);
                a = a.add(mr);
                b = b.add(NR);
            }
        }
        for _ in 0..args.k % K_UNROLL {
            k_step::<V, E, MV, NR>(&mut acc, a, b);
            a = a.add(mr);
            b = b.add(NR);
        }

        let alpha = V::splat(args.alpha);
        let beta = V::splat(args.beta);
        let beta_is_zero = args.beta.is_zero();
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(h * V::LANES);
                    let ab = V::mul(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        V::fma(beta, V::load(p), ab)
                    };
                    V::store(p, out);
                }
            }
        } else {
            // General strides: through a column-major stack tile, then element by element.
            let mut tile = [V::Elem::zero(); MAX_TILE_ELEMS];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    V::store(
                        tile.as_mut_ptr().add(j * mr + h * V::LANES),
                        V::mul(alpha, v),
                    );
                }
            }
            for j in 0..NR {
                for i in 0..mr {
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    let ab = tile[j * mr + i];
                    *p = if beta_is_zero {
                        ab
                    } else {
                        ab + args.beta * *p
                    };
                }
            }
        }
    }
}

/// One k step of the tile: MV vector loads of the A column at `a`, NR broadcasts from `b`,
/// MV·NR FMAs into `acc`.
///
/// # Safety
/// `a` holds MV·LANES readable elements and `b` NR; called with `V`'s target features.
#[inline(always)]
unsafe fn k_step<V: Simd, E, const MV: usize, const NR: usize>(
    acc: &mut [[V; MV]; NR],
    a: *const E,
    b: *const E,
) where
    V::Elem: Scalar,
    E: Packed<V> + Element<Acc = V::Elem>,
{
    // SAFETY: the caller's contract covers these reads.
    unsafe {
        let a0 = E::load_vec(a);
        let a1 = if MV == 2 {
            E::load_vec(a.add(V::LANES))
        } else {
            a0
        };
        for (j, acc_j) in acc.iter_mut().enumerate() {
            let bj = E::splat_from(b.add(j));
            acc_j[0] = V::fma(a0, bj, acc_j[0]);
            if MV == 2 {
                acc_j[MV - 1] = V::fma(a1, bj, acc_j[MV - 1]);
            }
        }
    }
}
