//! The short-k kernel body for real dtypes, written over [`Simd`] and instantiated by the
//! kernel files (`kernels/skx/short_k_f32.rs`, `kernels/skx/short_k_f64.rs`) inside their
//! `#[target_feature]` shells. The contract is `ShortKUkr` in `kernels/mod.rs`: C (m×n,
//! column-stored) := alpha·A·B + beta·C with k ≤ `MAX_SHORT_K`.
//!
//! With k this short, a sup tile does almost nothing between setting up and writing C: a
//! 6×12 dgemm tile at k = 2 is 24 FMAs and 12 stores, and took about 74 cycles (a 6×500×2
//! call's time over its 42 tiles, 70 % of it in the tile kernel by `perf`; session 57), most
//! of it the call, the accumulators' set-up and the epilogue's dispatch. Here a
//! strip of A (one or two vectors of rows, all k columns) is loaded into registers once, and
//! B's columns stream past it: each column of C is k broadcasts of B, k FMAs per vector, and
//! one store per vector. [`COLUMNS_PER_STEP`] columns go together, so that their FMA chains
//! overlap and the loop's overhead is shared. A C taller than one strip is swept strip by
//! strip, B (k×n) read again for each from L1 or L2.
//!
//! A strip of two vectors needs 2·k registers for A, one of one vector k: two vectors are
//! used where 2·k fits `A_REGS` (16 of AVX-512's 32 registers: k up to 8), one past it (k =
//! 9–16), leaving the rest for the accumulators and B's broadcasts. The last vector of a strip is masked, and
//! alpha is folded into A's strip as it is loaded.
//!
//! Only the skx set has short-k kernels. With AVX2's 16 registers this body lost to the
//! haswell sup kernels on most shapes it was tried on (forced haswell on Zen 4, sgemm NT
//! 3–8×500×k 0.42–0.64, 8×500×3 0.55; it won 1.4–2.1× on NN and TN C shorter than a vector):
//! a haswell form needs its own design (fewer columns a step, B's contiguous rows as the
//! sup path's transposed solution reads them), and is not registered.
//!
//! A's strip is read in place where its rows are adjacent (`rs_a == 1`), and gathered into
//! a stack buffer first where not (op(A) = Aᵀ): at most k·2·LANES elements, once per strip.

use std::mem::MaybeUninit;

use crate::kernels::x86::simd::Simd;
use crate::kernels::{MAX_SHORT_K, ShortKUkrArgs};
use crate::types::Scalar;

/// Columns of C computed together: their FMA chains (k long) interleave.
const COLUMNS_PER_STEP: usize = 4;

/// The most lanes of a register (512-bit f32), for the gather buffer's size.
const MAX_LANES: usize = 16;

/// The body, dispatching on k (a constant in each instance, so that A's strip lives in
/// registers). See the module docs.
///
/// # Safety
/// The `ShortKUkr` contract, called from a function compiled with `V`'s target features on a
/// CPU that has them; `V::LANES <= 16`.
#[inline(always)]
pub(crate) unsafe fn short_k_real<V: Simd, const A_REGS: usize>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    debug_assert!(args.k >= 1 && args.k <= MAX_SHORT_K && V::LANES <= MAX_LANES);
    // SAFETY: passed on, with K = args.k.
    unsafe {
        match args.k {
            1 => strips::<V, 1, A_REGS>(args),
            2 => strips::<V, 2, A_REGS>(args),
            3 => strips::<V, 3, A_REGS>(args),
            4 => strips::<V, 4, A_REGS>(args),
            5 => strips::<V, 5, A_REGS>(args),
            6 => strips::<V, 6, A_REGS>(args),
            7 => strips::<V, 7, A_REGS>(args),
            8 => strips::<V, 8, A_REGS>(args),
            9 => strips::<V, 9, A_REGS>(args),
            10 => strips::<V, 10, A_REGS>(args),
            11 => strips::<V, 11, A_REGS>(args),
            12 => strips::<V, 12, A_REGS>(args),
            13 => strips::<V, 13, A_REGS>(args),
            14 => strips::<V, 14, A_REGS>(args),
            15 => strips::<V, 15, A_REGS>(args),
            _ => strips::<V, 16, A_REGS>(args),
        }
    }
}

/// C's rows strip by strip, for k = K.
///
/// # Safety
/// As [`short_k_real`], with `args.k == K`.
#[inline(always)]
unsafe fn strips<V: Simd, const K: usize, const A_REGS: usize>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    let two_vectors = 2 * K <= A_REGS;
    let height = if two_vectors { 2 * V::LANES } else { V::LANES };
    let mut first = 0;
    while first < args.m {
        let rows = (args.m - first).min(height);
        // SAFETY: rows `first..first + rows` are below m; a strip of two vectors has more
        // rows than one holds.
        unsafe {
            if two_vectors && rows > V::LANES {
                strip::<V, K, 2>(args, first, rows)
            } else {
                strip::<V, K, 1>(args, first, rows)
            }
        }
        first += rows;
    }
}

/// Rows `first..first + rows` of C, all n columns, with that strip of A in `K·VECS`
/// registers.
///
/// # Safety
/// As [`strips`], with `first + rows <= args.m` and `(VECS − 1)·LANES < rows <=
/// VECS·LANES`.
#[inline(always)]
unsafe fn strip<V: Simd, const K: usize, const VECS: usize>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
    first: usize,
    rows: usize,
) where
    V::Elem: Scalar,
{
    let last = (VECS - 1) * V::LANES;
    // SAFETY: A's reads stay in rows first..first + rows (the last vector masked to them) and
    // columns below K = k; B's in rows below k and columns below n; C's writes (and reads
    // unless beta = 0) in rows first..first + rows of columns below n. All valid by the
    // contract; the caller provides V's features.
    unsafe {
        let mask = V::mask(rows - last);
        let mut gathered = [MaybeUninit::<V::Elem>::uninit(); MAX_SHORT_K * 2 * MAX_LANES];
        let (a, cs_a) = if args.rs_a == 1 {
            (args.a.add(first), args.cs_a)
        } else {
            // Column p of the strip at `gathered[p·VECS·LANES..]`, its rows contiguous.
            let a = args.a.offset(first as isize * args.rs_a);
            let ld = VECS * V::LANES;
            for p in 0..K {
                for i in 0..rows {
                    gathered[p * ld + i]
                        .write(*a.offset(i as isize * args.rs_a + p as isize * args.cs_a));
                }
            }
            (gathered.as_ptr().cast::<V::Elem>(), ld as isize)
        };
        // alpha·A, once per strip, so that a column's epilogue is its store (and beta·C).
        let alpha = V::splat(args.alpha);
        let mut a_strip = [[V::zero(); VECS]; K];
        for (p, column) in a_strip.iter_mut().enumerate() {
            let a_p = a.offset(p as isize * cs_a);
            for (v, reg) in column.iter_mut().enumerate() {
                let loaded = if v + 1 < VECS {
                    V::load(a_p.add(v * V::LANES))
                } else {
                    V::load_masked(a_p.add(last), mask)
                };
                *reg = V::mul(alpha, loaded);
            }
        }
        let c = args.c.add(first);
        // B's unit stride as a constant: with both strides unknown, the K·U offsets of a
        // step's broadcasts did not fit the general registers and were reloaded from the
        // stack (dgemm TT 4×500×8, `perf`).
        if args.beta.is_zero() {
            sweep_b::<V, K, VECS, true>(args, &a_strip, mask, c)
        } else {
            sweep_b::<V, K, VECS, false>(args, &a_strip, mask, c)
        }
    }
}

/// [`sweep`] with B's unit stride as a constant where it has one. `BETA_ZERO`: whether
/// beta = 0 (C write-only), a constant so that no column tests it (as a flag on the stack,
/// the test was a seventh of a 158×2×1 call, `perf`).
///
/// # Safety
/// As [`sweep`], with `BETA_ZERO == args.beta.is_zero()`.
#[inline(always)]
unsafe fn sweep_b<V: Simd, const K: usize, const VECS: usize, const BETA_ZERO: bool>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
    a_strip: &[[V; VECS]; K],
    mask: V::Mask,
    c: *mut V::Elem,
) where
    V::Elem: Scalar,
{
    // SAFETY: passed on, with the strides B has.
    unsafe {
        if args.rs_b == 1 {
            // op(B) = B: a column's k values at fixed offsets from its start.
            sweep::<V, K, VECS, BETA_ZERO>(args, a_strip, mask, (1, args.cs_b), c)
        } else if args.cs_b == 1 {
            // op(B) = Bᵀ: the step's columns at fixed offsets along each row.
            sweep::<V, K, VECS, BETA_ZERO>(args, a_strip, mask, (args.rs_b, 1), c)
        } else {
            sweep::<V, K, VECS, BETA_ZERO>(args, a_strip, mask, (args.rs_b, args.cs_b), c)
        }
    }
}

/// All n columns of C's strip at `c`, [`COLUMNS_PER_STEP`] at a time and then one by one.
///
/// # Safety
/// As [`strip`]; `a_strip` holds the strip's K columns times alpha, `mask` the last vector's
/// rows, `b_strides` is `(args.rs_b, args.cs_b)` and `BETA_ZERO` whether beta = 0.
#[inline(always)]
unsafe fn sweep<V: Simd, const K: usize, const VECS: usize, const BETA_ZERO: bool>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
    a_strip: &[[V; VECS]; K],
    mask: V::Mask,
    b_strides: (isize, isize),
    c: *mut V::Elem,
) where
    V::Elem: Scalar,
{
    let mut j = 0;
    // SAFETY: columns j..j + COLUMNS_PER_STEP (or j alone) are below n.
    unsafe {
        while j + COLUMNS_PER_STEP <= args.n {
            columns::<V, K, VECS, COLUMNS_PER_STEP, BETA_ZERO>(
                args, a_strip, mask, b_strides, j, c,
            );
            j += COLUMNS_PER_STEP;
        }
        while j < args.n {
            columns::<V, K, VECS, 1, BETA_ZERO>(args, a_strip, mask, b_strides, j, c);
            j += 1;
        }
    }
}

/// Columns `j..j + U` of C's strip at `c`.
///
/// # Safety
/// As [`sweep`], with `j + U <= args.n`.
#[inline(always)]
unsafe fn columns<
    V: Simd,
    const K: usize,
    const VECS: usize,
    const U: usize,
    const BETA_ZERO: bool,
>(
    args: &ShortKUkrArgs<V::Elem, V::Elem>,
    a_strip: &[[V; VECS]; K],
    mask: V::Mask,
    (rs_b, cs_b): (isize, isize),
    j: usize,
    c: *mut V::Elem,
) where
    V::Elem: Scalar,
{
    // SAFETY: B's reads in rows below K = k of columns j..j + U < n; C's in the strip's rows
    // of those columns (the last vector masked to them).
    unsafe {
        let b = args.b.offset(j as isize * cs_b);
        let mut acc = [[V::zero(); VECS]; U];
        for (p, a_p) in a_strip.iter().enumerate() {
            for (u, acc_u) in acc.iter_mut().enumerate() {
                let b_pu = V::splat(*b.offset(p as isize * rs_b + u as isize * cs_b));
                for (v, reg) in acc_u.iter_mut().enumerate() {
                    *reg = if p == 0 {
                        V::mul(a_p[v], b_pu)
                    } else {
                        V::fma(a_p[v], b_pu, *reg)
                    };
                }
            }
        }
        let beta = V::splat(args.beta);
        for (u, acc_u) in acc.iter().enumerate() {
            let c_u = c.offset((j + u) as isize * args.cs_c);
            for (v, &sum) in acc_u.iter().enumerate() {
                let at = c_u.add(v * V::LANES);
                if v + 1 < VECS {
                    let value = if BETA_ZERO {
                        sum
                    } else {
                        V::fma(beta, V::load(at), sum)
                    };
                    V::store(at, value);
                } else {
                    let value = if BETA_ZERO {
                        sum
                    } else {
                        V::fma(beta, V::load_masked(at, mask), sum)
                    };
                    V::store_masked(at, mask, value);
                }
            }
        }
    }
}
