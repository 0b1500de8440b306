//! The sup microkernel body for real dtypes, written once over [`Simd`] and instantiated by
//! the kernel files (`kernels/skx/sup_f32_32x12.rs`, …) inside their `#[target_feature]`
//! shells. The contract is `SupUkr` in `kernels/mod.rs`: A and B read in place, edges
//! handled here.
//!
//! Tiles up to MR×NR with MR = 2·LANES. Edges cost nothing extra: there is one instance of
//! the body per number of row vectors (1 or 2) and per column count (1..=NR), chosen per
//! call, so an edge tile computes only its own columns and vectors; the last vector's rows
//! are masked (masked-off lanes are neither read nor written, and do not fault). Per k step:
//! V vector loads of A's column, N broadcasts of B elements, V·N FMAs.

use std::mem::MaybeUninit;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::Simd;
use crate::types::Scalar;

/// The widest tile any sup kernel uses, in columns (the match below covers 1..=12).
const MAX_NR: usize = 12;

/// The body, dispatching on the tile's shape. See the module docs.
///
/// # Safety
/// The `SupUkr` contract for tiles up to (2·LANES)×NR, called from a function compiled with
/// `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn sup_real<V: Simd, const NR: usize>(args: &SupUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    debug_assert!(NR <= MAX_NR && args.n >= 1 && args.n <= NR && args.m <= 2 * V::LANES);
    // SAFETY: passed on; each instance computes exactly the tile's n columns and at most its
    // vectors of rows.
    unsafe {
        if args.m > V::LANES {
            by_columns::<V, 2, NR, false>(args)
        } else {
            by_columns::<V, 1, NR, false>(args)
        }
    }
}

/// The body for a tile of full rows: exactly 2·LANES rows, up to NR columns, with C's rows
/// adjacent (`rs_c == 1`; a kernel shell sends tiles of any other C to [`sup_real`]). A
/// kernel shell calls it from a function of its own (`#[inline(never)]`); each of these
/// choices was measured on 32³…96³ (dgemm, skx, docs/Performance.md, session 17):
/// * the second row vector of A is loaded without a mask, which `sup_real` cannot know is
///   all ones (the first one's it can): a few percent per k step;
/// * alone in its function it gets its own register allocation. Inlined next to the 24 edge
///   instances in `sup_real`, the f64 instance spilled accumulators inside the k loop
///   (dgemm 96³ at 40 instead of 56 GFLOPS);
/// * no general-stride epilogue: its stack tile gave the function a 3 KiB frame, and that
///   alone cost 2–3 % on tiles with k = 32…96;
/// * B with unit row stride (column-stored B, the common case) has a loop of its own: with
///   a runtime row stride the compiler chained all NR broadcast addresses through one
///   register carried across k steps, 6 % slower at k = 32;
/// * the tile is computed GROUP (NR/2) columns at a time, then one instance for the rest
///   (fewer than GROUP), all without masks or a stack frame: half the accumulators, so the
///   tiles' epilogues and loop starts overlap better (16×6 against 16×12: 1–2.5 % faster at
///   k = 32…96, level at 128…1200), and B is read GROUP columns at a time, so columns a
///   multiple of 4 KiB apart no longer overfill one L1 set (`SupKernel::b_group`): the
///   packed-A path then beats the loop nest there too (dgemm 512³…2048³ +1.4…3.1 %).
///
/// # Safety
/// As [`sup_real`], with `args.m == 2·LANES`, `args.rs_c == 1` and `1 <= GROUP <= NR`.
#[inline(always)]
pub(crate) unsafe fn sup_real_full<V: Simd, const NR: usize, const GROUP: usize>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    debug_assert!(NR <= MAX_NR && args.n <= NR && args.m == 2 * V::LANES && args.rs_c == 1);
    debug_assert!(GROUP >= 1 && GROUP <= NR);
    // SAFETY: passed on; each call covers two vectors of rows by its own columns of the tile.
    unsafe {
        // GROUP columns at a time, then the rest (fewer than GROUP) by its column count.
        let mut part = *args;
        while part.n >= GROUP {
            body::<V, 2, GROUP, true>(&SupUkrArgs { n: GROUP, ..part });
            part.n -= GROUP;
            part.b = part.b.offset(GROUP as isize * part.cs_b);
            part.c = part.c.offset(GROUP as isize * part.cs_c);
        }
        if part.n > 0 {
            by_columns::<V, 2, GROUP, true>(&part);
        }
    }
}

/// Dispatches on the column count, at most NR (the guards are constant per kernel, so the
/// compiler drops the arms a narrow kernel can never take; the last arm is n = NR), to
/// [`body`] with FULL as given.
///
/// # Safety
/// As [`sup_real`], with `args.m <= VECS·LANES` and `args.n <= NR` (and [`body`]'s FULL
/// conditions when FULL).
#[inline(always)]
unsafe fn by_columns<V: Simd, const VECS: usize, const NR: usize, const FULL: bool>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            1 if NR > 1 => body::<V, VECS, 1, FULL>(args),
            2 if NR > 2 => body::<V, VECS, 2, FULL>(args),
            3 if NR > 3 => body::<V, VECS, 3, FULL>(args),
            4 if NR > 4 => body::<V, VECS, 4, FULL>(args),
            5 if NR > 5 => body::<V, VECS, 5, FULL>(args),
            6 if NR > 6 => body::<V, VECS, 6, FULL>(args),
            7 if NR > 7 => body::<V, VECS, 7, FULL>(args),
            8 if NR > 8 => body::<V, VECS, 8, FULL>(args),
            9 if NR > 9 => body::<V, VECS, 9, FULL>(args),
            10 if NR > 10 => body::<V, VECS, 10, FULL>(args),
            11 if NR > 11 => body::<V, VECS, 11, FULL>(args),
            _ => body::<V, VECS, NR, FULL>(args),
        }
    }
}

/// The kernel for a tile of exactly N columns and at most VECS vectors of rows (FULL: exactly
/// VECS vectors, so no row mask is needed on A, and C's rows adjacent).
///
/// # Safety
/// As [`sup_real`], with `args.n == N` and `args.m <= VECS·LANES` (`==` and `args.rs_c == 1`
/// when FULL).
#[inline(always)]
unsafe fn body<V: Simd, const VECS: usize, const N: usize, const FULL: bool>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    // A constant for full tiles, so that their masks fold away (plain loads and stores).
    let m = if FULL { VECS * V::LANES } else { args.m };
    // SAFETY: masked loads touch only rows below m of A's columns p < k; B reads stay in
    // columns below N = n and rows below k; C is touched only at rows below m and columns
    // below n. That is all memory the contract makes valid; the caller provides V's target
    // features.
    unsafe {
        let mut masks = [V::mask(0); VECS];
        for (h, mask) in masks.iter_mut().enumerate() {
            *mask = V::mask(m.saturating_sub(h * V::LANES));
        }
        let mut b_offsets = [0isize; N];
        for (j, off) in b_offsets.iter_mut().enumerate() {
            *off = j as isize * args.cs_b;
        }
        // Which epilogue. Taken here, apart from the match below: written in the match, the
        // two tests became one vector compare of (alpha, beta) through a 64-byte stack store
        // and reload, and a hot 32×12 tile took about 10 ns longer (25 instead of 16 ns over
        // its FMA time, measured); here they stay two scalar compares.
        let scalars = (args.alpha.is_one(), args.beta.is_zero());
        let acc = if FULL && args.rs_b == 1 {
            // The same loop with the row stride a constant (why: `sup_real_full`).
            k_loop::<V, VECS, N>(args, 1, &masks, &b_offsets)
        } else {
            k_loop::<V, VECS, N>(args, args.rs_b, &masks, &b_offsets)
        };

        if FULL || args.rs_c == 1 {
            // Columns of C: straight from the accumulators, one masked store per vector. The
            // four (alpha = 1?, beta = 0?) cases are separate loops with no branch inside, so
            // the compiler unrolls each fully and `acc` stays in registers (with the branches
            // inside, the loops stayed rolled and `acc` lived in memory: 48 instead of 83
            // GFLOPS on 32³, measured with perf). alpha = 1, the usual case, saves one
            // multiply per vector, which competes with FMAs for the same pipes.
            let col = |j: usize, h: usize| args.c.offset(j as isize * args.cs_c).add(h * V::LANES);
            match scalars {
                (true, true) => {
                    for (j, acc_j) in acc.iter().enumerate() {
                        for (h, &mask) in masks.iter().enumerate() {
                            V::store_masked(col(j, h), mask, acc_j[h]);
                        }
                    }
                }
                (false, true) => {
                    let alpha = V::splat(args.alpha);
                    for (j, acc_j) in acc.iter().enumerate() {
                        for (h, &mask) in masks.iter().enumerate() {
                            V::store_masked(col(j, h), mask, V::mul(alpha, acc_j[h]));
                        }
                    }
                }
                (true, false) => {
                    let beta = V::splat(args.beta);
                    for (j, acc_j) in acc.iter().enumerate() {
                        for (h, &mask) in masks.iter().enumerate() {
                            let p = col(j, h);
                            V::store_masked(
                                p,
                                mask,
                                V::fma(beta, V::load_masked(p, mask), acc_j[h]),
                            );
                        }
                    }
                }
                (false, false) => {
                    let (alpha, beta) = (V::splat(args.alpha), V::splat(args.beta));
                    for (j, acc_j) in acc.iter().enumerate() {
                        for (h, &mask) in masks.iter().enumerate() {
                            let p = col(j, h);
                            let ab = V::mul(alpha, acc_j[h]);
                            V::store_masked(p, mask, V::fma(beta, V::load_masked(p, mask), ab));
                        }
                    }
                }
            }
        } else {
            // General strides: element by element, through a stack tile (rows < m ≤
            // VECS·LANES of columns < N, each written here before it is read).
            let mut tile = MaybeUninit::<[V::Elem; 2 * 16 * MAX_NR]>::uninit();
            let tile = tile.as_mut_ptr().cast::<V::Elem>();
            let ld = VECS * V::LANES;
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    V::store(tile.add(j * ld + h * V::LANES), v);
                }
            }
            for j in 0..N {
                for i in 0..m {
                    let x = args.alpha * *tile.add(j * ld + i);
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    *p = if args.beta.is_zero() {
                        x
                    } else {
                        x + args.beta * *p
                    };
                }
            }
        }
    }
}

/// The k loop of [`body`]: the accumulators of A·B over the tile's N columns, B stepping
/// `rs_b` per k (a constant where the caller passes one).
///
/// # Safety
/// As [`body`]; `masks` cover the tile's rows, `b_offsets[j] = j·cs_b`.
#[inline(always)]
unsafe fn k_loop<V: Simd, const VECS: usize, const N: usize>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
    rs_b: isize,
    masks: &[V::Mask; VECS],
    b_offsets: &[isize; N],
) -> [[V; VECS]; N]
where
    V::Elem: Scalar,
{
    // SAFETY: the caller's: masked loads stay in A's m rows, broadcasts in B's N columns; the
    // caller provides V's target features.
    unsafe {
        let mut acc = [[V::zero(); VECS]; N];
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            // Two row vectors at most, written out (see `gemm_real.rs` for why).
            let a0 = V::load_masked(a, masks[0]);
            let a1 = if VECS == 2 {
                V::load_masked(a.add(V::LANES), masks[VECS - 1])
            } else {
                a0
            };
            for (acc_j, &off) in acc.iter_mut().zip(b_offsets) {
                let bj = V::splat(*b.offset(off));
                acc_j[0] = V::fma(a0, bj, acc_j[0]);
                if VECS == 2 {
                    acc_j[VECS - 1] = V::fma(a1, bj, acc_j[VECS - 1]);
                }
            }
            a = a.offset(args.cs_a);
            b = b.offset(rs_b);
        }
        acc
    }
}
