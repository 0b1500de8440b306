//! The sup microkernel body for real dtypes, written once over [`Simd`] and instantiated by
//! the kernel files (`kernels/skx/sup_f32_32x12.rs`, …) inside their `#[target_feature]`
//! shells. The contract is `SupUkr` in `kernels/mod.rs`: A and B read in place, edges
//! handled here.
//!
//! Tiles up to MR×NR with MR = 2·LANES. Edges cost nothing extra: there is one instance of
//! the body per shape of its row vectors and per column count (1..=NR), chosen per call, so
//! an edge tile computes only its own columns and vectors; the last vector's rows are masked
//! (masked-off lanes are neither read nor written, and do not fault). Per k step: one or two
//! vector loads of A's column, N broadcasts of B elements, one or two FMAs per column.
//!
//! **Half-width vectors for short last rows.** A kernel names two vector types: V, its own,
//! and H, at most as wide. A tile's last rows go in an H where they fit (m ≤ LANES/2, or
//! LANES < m ≤ LANES + LANES/2 after one full V). The AVX-512 kernels pass the 256-bit
//! vectors of the same element: a Zen 4 core runs two 256-bit FMAs per cycle but one
//! 512-bit one, so a ymm costs half a zmm per k step (measured in session 23: sgemm tiles
//! 8×12×8 46 → 28 ns, 8×12×64 229 → 213 ns; on Intel's AVX-512 cores both widths issue at
//! the same rate, and the half vector costs nothing). The 256-bit masks are AVX's
//! `vmaskmov`, not AVX-512VL's: on this Zen 4, 256-bit stores under an AVX-512 mask take
//! five times as long (measured). The AVX2 kernels pass H = V, which compiles to exactly
//! the instances they had before.
//!
//! **k steps per trip.** `K_UNROLL` k steps make one trip of the k loop of a tile of four or
//! more accumulators, where B's rows are adjacent (unit row stride, the stride a constant);
//! elsewhere one. The AVX2 kernels use 4: on a Zen 3 that took sgemm NN 16³–128³ +9–22 %
//! and dgemm 16³–64³ +5–15 % (TN alike). With B's rows far apart (NT) dgemm read 0.72–0.96 on
//! 8–16 rows of 1024 columns, so those tiles keep one step (`docs/Performance.md`, "Four k
//! steps per trip"). The AVX-512 kernels use 1, except for full tiles from k = 256
//! ([`sup_real_full`], measured in session 41); their other tiles are unmeasured with 4.
//!
//! **One row, B's columns contiguous: dot products.** A tile of a single row with B's unit
//! row stride (op(B) = N) and k of two vectors or more is computed along k instead
//! ([`dot_row`]): every lane of its FMAs is useful, where a row vector would use one.

use std::mem::MaybeUninit;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::{ColumnsToRows, Simd};
use crate::types::{Element, Scalar};

/// The widest tile any sup kernel uses, in columns (the match below covers 1..=12).
const MAX_NR: usize = 12;

/// The body, dispatching on the tile's shape. See the module docs.
///
/// # Safety
/// The `SupUkr` contract for tiles up to (2·V::LANES)×NR, with `H::LANES <= V::LANES`,
/// called from a function compiled with `V`'s and `H`'s target features on a CPU that has
/// them.
#[inline(always)]
pub(crate) unsafe fn sup_real<
    V: ColumnsToRows,
    H: ColumnsToRows<Elem = V::Elem>,
    const NR: usize,
    const K_UNROLL: usize,
>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    debug_assert!(NR <= MAX_NR && args.n >= 1 && args.n <= NR && args.m <= 2 * V::LANES);
    debug_assert!(H::LANES <= V::LANES);
    let m = args.m;
    // SAFETY: passed on; each instance covers at least the tile's rows (its vectors' lanes
    // add up to m or more), its first vector (of two) is full (m > V::LANES), and FULL
    // instances get exactly their rows with column-stored C; `dot_row` gets one row and B's
    // contiguous columns.
    unsafe {
        if m == 1 && args.rs_b == 1 && args.k >= DOT_MIN_K * V::LANES {
            dot_row::<V, NR>(args)
        } else if m == 2
            && size_of::<V::Elem>() == 4
            && args.rs_b == 1
            && args.k >= DOT_TWO_ROWS_MIN_K * V::LANES
            && args.n >= DOT_TWO_ROWS_MIN_N
        {
            dot_row::<V, NR>(&SupUkrArgs { m: 1, ..*args });
            dot_row::<V, NR>(&SupUkrArgs {
                m: 1,
                a: args.a.add(1),
                c: args.c.offset(args.rs_c),
                ..*args
            })
        } else if m > V::LANES + H::LANES {
            by_columns::<V, V, 2, NR, false, K_UNROLL>(args)
        } else if m == V::LANES + H::LANES && args.rs_c == 1 {
            // Both vectors full, no masks: the AVX2 kernels' whole tiles (their shells have
            // no `sup_real_full`) and 24-row sgemm / 12-row dgemm tiles on skx.
            by_columns::<V, H, 2, NR, true, K_UNROLL>(args)
        } else if m > V::LANES {
            by_columns::<V, H, 2, NR, false, K_UNROLL>(args)
        } else if m == V::LANES && args.rs_c == 1 {
            // A whole vector: no masks (a few percent on 16-row sgemm tiles, session 23).
            by_columns::<V, V, 1, NR, true, K_UNROLL>(args)
        } else if m > H::LANES {
            by_columns::<V, V, 1, NR, false, K_UNROLL>(args)
        } else if m == H::LANES && args.rs_c == 1 {
            by_columns::<H, H, 1, NR, true, K_UNROLL>(args)
        } else {
            by_columns::<H, H, 1, NR, false, K_UNROLL>(args)
        }
    }
}

/// One k step of [`k_loop`] into one set of accumulators: A's column at `a`, B's row at `b`.
/// A function, not a closure: a closure is compiled without its caller's target features,
/// and its vector intrinsics became calls (a whole tile took 50 times as long).
///
/// # Safety
/// As [`k_loop`], for the k step at `a` and `b`.
#[inline(always)]
unsafe fn k_step<
    V0: Simd,
    V1: Simd<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
    const FULL: bool,
>(
    a: *const V0::Elem,
    b: *const V0::Elem,
    mask: V1::Mask,
    b_offsets: &[isize; N],
    acc0: &mut [V0; N],
    acc1: &mut [V1; N],
) where
    V0::Elem: Scalar,
{
    // SAFETY: the caller's.
    unsafe {
        let last = (VECS - 1) * V0::LANES;
        // Two row vectors at most, written out (see `gemm_real.rs` for why).
        let a0 = if VECS == 2 { V0::load(a) } else { V0::zero() };
        let a1 = if FULL {
            V1::load(a.add(last))
        } else {
            V1::load_masked(a.add(last), mask)
        };
        for j in 0..N {
            let bj = *b.offset(b_offsets[j]);
            if VECS == 2 {
                acc0[j] = V0::fma(a0, V0::splat(bj), acc0[j]);
            }
            acc1[j] = V1::fma(a1, V1::splat(bj), acc1[j]);
        }
    }
}

/// The independent FMA chains a k loop keeps going (FMA latency over issue interval, 4 on
/// Zen 4 for 512-bit FMAs); see [`k_loop`].
const CHAINS: usize = 4;

/// The shortest k, in vectors, for which a tile of one row is computed as dot products
/// ([`dot_row`]).
const DOT_MIN_K: usize = 2;

/// The shortest k, in vectors, and the fewest columns for which an f32 tile of two rows is
/// computed as two rows of dot products. Measured on skx (ns per call, vector tile → two dot
/// rows, three or four alternated runs of two binaries):
/// * 12 columns: k = 32 70 → 77, 48 102 → 95, 64 135 → 103, 96 200 → 145, 128 261 → 208;
/// * k = 64: 8 columns 96–98 → 81–84, 6 columns 78–85 → 71–73, 4 columns 62–89 → 65–66;
///   k = 96: 6 columns 114–151 → 103–105, 2 columns 78–82 → 86–89.
///
/// Not for f64: a vector holds half as many k values while the two-row vector tile costs the
/// same, and two dot rows lost (12 columns, k = 32 72 → 86, 48 103 → 111, 96 185 → 244).
const DOT_TWO_ROWS_MIN_K: usize = 4;
const DOT_TWO_ROWS_MIN_N: usize = 6;

/// The elements of A's row [`dot_row`] copies at a time.
const DOT_CHUNK: usize = 64;

/// A tile of one row whose B has unit row stride (B's columns contiguous along k), as dot
/// products along k (two such rows for an f32 tile of two rows,
/// [`DOT_TWO_ROWS_MIN_K`]): each of the row's n elements is one accumulator, a vector of partial
/// sums over k, summed across its lanes at the end.
///
/// As a row vector, such a tile spends a whole vector (one lane of it used) per column per
/// k step. Here a vector step covers LANES values of k for every column at once, and all
/// its lanes are useful (except in the last, masked step). A's row is strided (by its
/// column stride), so DOT_CHUNK elements of it are copied to the stack first, to be loaded
/// as vectors. Measured on skx (12 columns, ns per call): sgemm k = 96 200 → 71–77, k = 32
/// 71 → 42, k = 256 514 → 254; dgemm k = 32 68 → 42–63, k = 96 184 → 115–120. Two rows
/// with 24 accumulators took longer than the vector tile (sgemm k = 32 71 → 111–120, k = 96
/// 199 → 217–274); as two separate dot rows they pay for f32 ([`DOT_TWO_ROWS_MIN_K`]).
///
/// Columns are up to NR with a runtime count: the accumulators are indexed by constants
/// (the column loops unroll), and the columns past n are skipped by a branch that is the
/// same every step.
///
/// # Safety
/// As [`sup_real`], with `args.m == 1`, `args.rs_b == 1` and `args.k >= 1`.
#[inline(always)]
unsafe fn dot_row<V: Simd, const NR: usize>(args: &SupUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    // SAFETY: A's reads stay in its row's k elements, B's in its n columns (j < n) and k
    // rows (masked past k), C's in the tile's row; the stack copy is written before it is
    // read (elements below `kc` only); the caller provides V's target features.
    unsafe {
        let (n, k) = (args.n, args.k);
        let mut acc = [V::zero(); NR];
        let mut row = MaybeUninit::<[V::Elem; DOT_CHUNK]>::uninit();
        let row = row.as_mut_ptr().cast::<V::Elem>();
        let mut p0 = 0;
        while p0 < k {
            let kc = DOT_CHUNK.min(k - p0);
            for p in 0..kc {
                *row.add(p) = *args.a.offset((p0 + p) as isize * args.cs_a);
            }
            let mut p = 0;
            while p < kc {
                let lanes = V::LANES.min(kc - p);
                let mask = V::mask(lanes);
                let load = |at: *const V::Elem| {
                    if lanes == V::LANES {
                        V::load(at)
                    } else {
                        V::load_masked(at, mask)
                    }
                };
                let a = load(row.add(p));
                for (j, acc) in acc.iter_mut().enumerate() {
                    if j < n {
                        let bj = load(args.b.offset(j as isize * args.cs_b + (p0 + p) as isize));
                        *acc = V::fma(a, bj, *acc);
                    }
                }
                p += V::LANES;
            }
            p0 += kc;
        }
        for (j, acc) in acc.iter().enumerate() {
            if j < n {
                let x = args.alpha * V::sum_lanes(*acc);
                let c = args.c.offset(j as isize * args.cs_c);
                *c = if args.beta.is_zero() {
                    x
                } else {
                    x + args.beta * *c
                };
            }
        }
    }
}

/// The body for a tile of full rows: exactly 2·LANES rows, up to NR columns, with C's rows
/// adjacent (`rs_c == 1`; a kernel shell sends tiles of any other C to [`sup_real`]). A
/// kernel shell calls it from a function of its own (`#[inline(never)]`); each of these
/// choices was measured on 32³…96³ (dgemm, skx, docs/Performance.md, session 17):
/// * the second row vector of A is loaded without a mask, which `sup_real` cannot know is
///   all ones: a few percent per k step;
/// * alone in its function it gets its own register allocation. Inlined next to the edge
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
///   packed-A path then beats the loop nest there too (dgemm 512³…2048³ +1.4…3.1 %);
/// * but a tile of at most ONE_PASS columns (from k = ONE_PASS_MIN_K) goes in one pass: 7 or
///   8 columns as 6 + 1 or 6 + 2 read A twice, the second time for one or two FMAs per load
///   (session 31, one pass of up to 8 against the halves: dgemm 256×8×256 48.9 → 55.6 GFLOPS,
///   256×7×256 48.5 → 57.5, sgemm 500×8×200 98.7 → 112.8, 256×7×256 101.3 → 116.1; sgemm
///   below k = 128 with one or two tiles lost 3–7 %, hence its ONE_PASS_MIN_K of 128).
///
/// # Safety
/// As [`sup_real`], with `args.m == 2·LANES`, `args.rs_c == 1` and `1 <= GROUP <= ONE_PASS
/// <= NR`.
#[inline(always)]
pub(crate) unsafe fn sup_real_full<
    V: ColumnsToRows,
    const NR: usize,
    const GROUP: usize,
    const ONE_PASS: usize,
    const ONE_PASS_MIN_K: usize,
>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    debug_assert!(NR <= MAX_NR && args.n <= NR && args.m == 2 * V::LANES && args.rs_c == 1);
    debug_assert!(GROUP >= 1 && GROUP <= ONE_PASS && ONE_PASS <= NR);
    // SAFETY: passed on.
    unsafe {
        if args.k >= FULL_TILE_K_UNROLL_MIN_K {
            full_tile::<V, NR, GROUP, ONE_PASS, ONE_PASS_MIN_K, 4>(args);
        } else {
            full_tile::<V, NR, GROUP, ONE_PASS, ONE_PASS_MIN_K, 1>(args);
        }
    }
}

/// From this k, full tiles computed a group of columns at a time take four k steps per
/// trip of the k loop (where B's rows are adjacent). Measured on a Zen 4 (session 41, skx,
/// one thread, against one step for all k, alternated call by call; docs/Performance.md,
/// "Four k steps per trip on skx"): NN and TN, sgemm and dgemm, 256³–768³ 0.98–1.12 (most
/// +1–6 %), 1024³–2048³ 0.98–1.02; with four steps for every k, 16³–64³ lost 1–5 % and
/// 128³ read 0.98–1.03, hence one step below 256.
const FULL_TILE_K_UNROLL_MIN_K: usize = 256;

/// The body of [`sup_real_full`] with `K_UNROLL` k steps per trip.
///
/// # Safety
/// As [`sup_real_full`].
#[inline(always)]
unsafe fn full_tile<
    V: ColumnsToRows,
    const NR: usize,
    const GROUP: usize,
    const ONE_PASS: usize,
    const ONE_PASS_MIN_K: usize,
    const K_UNROLL: usize,
>(
    args: &SupUkrArgs<V::Elem, V::Elem>,
) where
    V::Elem: Scalar,
{
    // SAFETY: passed on; each call covers two vectors of rows by its own columns of the tile.
    unsafe {
        // Up to ONE_PASS columns in one pass over the k loop, from ONE_PASS_MIN_K.
        // One step per trip here: with four, dgemm and sgemm 384³ ran 0.65–0.85 (likely
        // registers: up to 24 accumulators leave 8 for four steps' loads).
        if args.n <= ONE_PASS && args.k >= ONE_PASS_MIN_K {
            by_columns::<V, V, 2, ONE_PASS, true, 1>(args);
            return;
        }
        // GROUP columns at a time, then the rest (fewer than GROUP) by its column count.
        let mut part = *args;
        while part.n >= GROUP {
            body::<V, V, 2, GROUP, true, K_UNROLL>(&SupUkrArgs { n: GROUP, ..part });
            part.n -= GROUP;
            part.b = part.b.offset(GROUP as isize * part.cs_b);
            part.c = part.c.offset(GROUP as isize * part.cs_c);
        }
        if part.n > 0 {
            by_columns::<V, V, 2, GROUP, true, K_UNROLL>(&part);
        }
    }
}

/// Whether a kernel shell should send a full tile to [`sup_real_full`] with ONE_PASS = NR
/// rather than its halves: k of at least 384, column-stored B, and B's columns spread over
/// the L1's sets, their stride (`cs_b` elements of T) modulo 2 KiB at least a line, so that
/// 12 columns fall into at least four sets, three lines a set at most. Strides of whole 2 KiB
/// (dgemm 1536³, 2048³, 3072³: 12, 16 and 24 KiB; sgemm 1024³, 2048³) put them in one or two
/// sets; there the halves keep six columns' lines per set. One pass loads A's two vectors
/// once per k step for all columns, where the halves load them twice. Measured on skx
/// (one thread, the packed-A path, against the halves, alternated; `docs/Performance.md`):
/// * dgemm (session 32, three runs): NN 1000³ +0.4 / +1.6 / +3.5 %, 2000³ +1.8 / +4.4 %,
///   3000³ +2.7 / +2.2 / +4.1 %, 500³ +2.8 / +0.5 / +3.1 %, TN 1000³ and 3000³ +1.5–1.9 %;
///   with B's columns 12 or 16 KiB apart (1536³, 2048³) one pass lost 12 %;
/// * sgemm (session 33, three runs): NN 1000³ +2.7 / +3.0 / +3.0 %, 1500³ +0.7 / +5.6 %,
///   2000³ +2.3 / +0.9 / +2.0 %, 3000³ +2.8 / +4.7 / −1.2 %, TN +0.8–8.6 %; from k = 128
///   instead of 384 it was level at k = 128…300.
#[inline(always)]
pub(crate) fn full_tile_in_one_pass<T: Element>(args: &SupUkrArgs<T, T>) -> bool {
    const MIN_K: usize = 384;
    args.k >= MIN_K && args.rs_b == 1 && (args.cs_b.unsigned_abs() * size_of::<T>()) % 2048 >= 64
}

/// Dispatches on the column count, at most NR (the guards are constant per kernel, so the
/// compiler drops the arms a narrow kernel can never take; the last arm is n = NR), to
/// [`body`] with the vectors and FULL as given.
///
/// # Safety
/// As [`body`], with `args.n <= NR`.
#[inline(always)]
unsafe fn by_columns<
    V0: ColumnsToRows,
    V1: ColumnsToRows<Elem = V0::Elem>,
    const VECS: usize,
    const NR: usize,
    const FULL: bool,
    const K_UNROLL: usize,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
) where
    V0::Elem: Scalar,
{
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            1 if NR > 1 => body::<V0, V1, VECS, 1, FULL, K_UNROLL>(args),
            2 if NR > 2 => body::<V0, V1, VECS, 2, FULL, K_UNROLL>(args),
            3 if NR > 3 => body::<V0, V1, VECS, 3, FULL, K_UNROLL>(args),
            4 if NR > 4 => body::<V0, V1, VECS, 4, FULL, K_UNROLL>(args),
            5 if NR > 5 => body::<V0, V1, VECS, 5, FULL, K_UNROLL>(args),
            6 if NR > 6 => body::<V0, V1, VECS, 6, FULL, K_UNROLL>(args),
            7 if NR > 7 => body::<V0, V1, VECS, 7, FULL, K_UNROLL>(args),
            8 if NR > 8 => body::<V0, V1, VECS, 8, FULL, K_UNROLL>(args),
            9 if NR > 9 => body::<V0, V1, VECS, 9, FULL, K_UNROLL>(args),
            10 if NR > 10 => body::<V0, V1, VECS, 10, FULL, K_UNROLL>(args),
            11 if NR > 11 => body::<V0, V1, VECS, 11, FULL, K_UNROLL>(args),
            _ => body::<V0, V1, VECS, NR, FULL, K_UNROLL>(args),
        }
    }
}

/// The kernel for a tile of exactly N columns whose rows are covered by VECS vectors: with
/// VECS = 2, a full V0 (its rows all in the tile) and then a V1 for the rest; with VECS = 1,
/// one V1 (V0 unused). The last vector's rows are masked unless FULL: exactly
/// `(VECS − 1)·V0::LANES + V1::LANES` rows and C's rows adjacent.
///
/// # Safety
/// As [`sup_real`], with `args.n == N`, `(VECS − 1)·V0::LANES < args.m <= (VECS −
/// 1)·V0::LANES + V1::LANES` (`==` and `args.rs_c == 1` when FULL), and the CPU features of
/// both vector types.
// Its own function when unoptimized (build.rs: the dispatchers' frames stay small).
#[cfg_attr(not(oxblis_unoptimized), inline(always))]
#[cfg_attr(oxblis_unoptimized, inline(never))]
unsafe fn body<
    V0: ColumnsToRows,
    V1: ColumnsToRows<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
    const FULL: bool,
    const K_UNROLL: usize,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
) where
    V0::Elem: Scalar,
{
    // Where the last vector starts, and (a constant for full tiles, so that its mask folds
    // away: plain loads and stores) how many rows it holds.
    let last = (VECS - 1) * V0::LANES;
    let m = if FULL { last + V1::LANES } else { args.m };
    // SAFETY: the first vector's loads and stores stay in rows below `last` < m, the last
    // vector's masked ones in rows `last..m`, of A's columns p < k and C's columns j < n; B
    // reads stay in columns below N = n and rows below k. That is all memory the contract
    // makes valid; the caller provides the vectors' target features.
    unsafe {
        let mask = V1::mask(m - last);
        let mut b_offsets = [0isize; N];
        for (j, off) in b_offsets.iter_mut().enumerate() {
            *off = j as isize * args.cs_b;
        }
        // Which epilogue. Taken here, apart from the match below: written in the match, the
        // two tests became one vector compare of (alpha, beta) through a 64-byte stack store
        // and reload, and a hot 32×12 tile took about 10 ns longer (25 instead of 16 ns over
        // its FMA time, measured); here they stay two scalar compares.
        let scalars = (args.alpha.is_one(), args.beta.is_zero());
        let (acc0, acc1) = if args.rs_b == 1 {
            // The same loop with the row stride a constant (why: `sup_real_full`; with the
            // half-width vectors, whose FMAs take half the time, the chained addresses cost
            // more: an sgemm tile of 7 rows, 12 columns, k = 64 took 200 instead of 152 ns).
            k_loop::<V0, V1, VECS, N, FULL, K_UNROLL>(args, 1, mask, &b_offsets)
        } else if args.cs_b == 1 && args.rs_b == N as isize {
            // B's rows adjacent, as the sup path copies a panel of B (`sup_tiles_copying_b`):
            // both strides constants, and four k steps per trip as for column-stored B.
            // Session 47 (a Zen 3, the copies read with one step against four): sgemm NT
            // 64×64×4096 45.9 → 53.8 GFLOPS, 128×128×1024 51.6 → 54.5.
            let unit_offsets: [isize; N] = core::array::from_fn(|j| j as isize);
            k_loop::<V0, V1, VECS, N, FULL, K_UNROLL>(args, N as isize, mask, &unit_offsets)
        } else if args.cs_b == 1 {
            // B's rows contiguous (op(B) = Bᵀ of a column-major B): the column offsets as
            // constants. Read from an array, they were a load each beside every broadcast, and
            // a tile of up to 8 sgemm rows took 1.5× the time of the same tile with rs_b = 1.
            let unit_offsets: [isize; N] = core::array::from_fn(|j| j as isize);
            k_loop::<V0, V1, VECS, N, FULL, 1>(args, args.rs_b, mask, &unit_offsets)
        } else {
            k_loop::<V0, V1, VECS, N, FULL, 1>(args, args.rs_b, mask, &b_offsets)
        };

        if FULL || args.rs_c == 1 {
            // Columns of C: straight from the accumulators, one store per vector (the last
            // one masked). The four (alpha = 1?, beta = 0?) cases are separate loops with no
            // branch inside, so the compiler unrolls each fully and the accumulators stay in
            // registers (with the branches inside, the loops stayed rolled and they lived in
            // memory: 48 instead of 83 GFLOPS on 32³, measured with perf). alpha = 1, the
            // usual case, saves one multiply per vector, which competes with FMAs for the
            // same pipes.
            let col = |j: usize| args.c.offset(j as isize * args.cs_c);
            let load_last = |p: *mut V0::Elem| {
                if FULL {
                    V1::load(p)
                } else {
                    V1::load_masked(p, mask)
                }
            };
            let store_last = |p: *mut V0::Elem, v: V1| {
                if FULL {
                    V1::store(p, v)
                } else {
                    V1::store_masked(p, mask, v)
                }
            };
            match scalars {
                (true, true) => {
                    for j in 0..N {
                        if VECS == 2 {
                            V0::store(col(j), acc0[j]);
                        }
                        store_last(col(j).add(last), acc1[j]);
                    }
                }
                (false, true) => {
                    let (alpha0, alpha1) = (V0::splat(args.alpha), V1::splat(args.alpha));
                    for j in 0..N {
                        if VECS == 2 {
                            V0::store(col(j), V0::mul(alpha0, acc0[j]));
                        }
                        store_last(col(j).add(last), V1::mul(alpha1, acc1[j]));
                    }
                }
                (true, false) => {
                    let (beta0, beta1) = (V0::splat(args.beta), V1::splat(args.beta));
                    for j in 0..N {
                        if VECS == 2 {
                            let p = col(j);
                            V0::store(p, V0::fma(beta0, V0::load(p), acc0[j]));
                        }
                        let p = col(j).add(last);
                        store_last(p, V1::fma(beta1, load_last(p), acc1[j]));
                    }
                }
                (false, false) => {
                    let (alpha0, alpha1) = (V0::splat(args.alpha), V1::splat(args.alpha));
                    let (beta0, beta1) = (V0::splat(args.beta), V1::splat(args.beta));
                    for j in 0..N {
                        if VECS == 2 {
                            let p = col(j);
                            let ab = V0::mul(alpha0, acc0[j]);
                            V0::store(p, V0::fma(beta0, V0::load(p), ab));
                        }
                        let p = col(j).add(last);
                        let ab = V1::mul(alpha1, acc1[j]);
                        store_last(p, V1::fma(beta1, load_last(p), ab));
                    }
                }
            }
        } else if args.cs_c == 1 {
            write_rows::<V0, V1, VECS, N>(args, m, acc0, acc1, scalars)
        } else {
            // General strides: element by element, through a stack tile (rows < m ≤ 32 of
            // columns < N, each written here before it is read).
            let mut tile = MaybeUninit::<[V0::Elem; 2 * 16 * MAX_NR]>::uninit();
            let tile = tile.as_mut_ptr().cast::<V0::Elem>();
            let ld = last + V1::LANES;
            store_tile::<V0, V1, VECS, N>(tile, ld, &acc0, &acc1, 0);
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

/// The accumulators of columns `first..N` into a column-major stack tile with column stride
/// `ld` (column j at j·ld; the first vector's rows, when VECS = 2, then the last vector's),
/// for the epilogues that cannot store straight to C.
///
/// # Safety
/// `tile` writable for N columns of `ld ≥ (VECS − 1)·V0::LANES + V1::LANES` elements.
#[inline(always)]
unsafe fn store_tile<V0: Simd, V1: Simd<Elem = V0::Elem>, const VECS: usize, const N: usize>(
    tile: *mut V0::Elem,
    ld: usize,
    acc0: &[V0; N],
    acc1: &[V1; N],
    first: usize,
) {
    let last = (VECS - 1) * V0::LANES;
    // SAFETY: each store is inside column j < N of the tile (the caller's).
    unsafe {
        for j in first..N {
            if VECS == 2 {
                V0::store(tile.add(j * ld), acc0[j]);
            }
            V1::store(tile.add(j * ld + last), acc1[j]);
        }
    }
}

/// The epilogue of a tile whose C has contiguous rows (`cs_c == 1`: the transposed problem
/// of a short, wide C, and the sup path's transposed edge tiles). Each whole block of columns
/// (8 f32 or 4 f64) comes back from the accumulators as rows, in registers
/// ([`blocks_to_rows`]), and each row updates its run of C with one 256-bit load and store.
/// The columns past the last whole block go the same way, padded, their rows stored under a
/// mask, where [`masked_rows`] (skx); elsewhere (haswell) through a stack tile, row by row,
/// element by element.
///
/// Measured through CBLAS against the element-by-element row loop alone (docs/Performance.md,
/// session 30, blocks then transposed from a stack tile): sgemm TT 8×64×32 1.23×, 8×64×48
/// 1.17×, 12×48×40 1.11×, dgemm TT 4×64×32 1.08×. Blocks padded with zero columns and stored
/// under a mask from that stack tile lost where N is under a block or just over (sgemm
/// 2×96×96 0.92×, dgemm 5×96×96 0.97×). The blocks in registers rather than through the
/// stack tile (session 34, "Row-stored C transposed in registers"): skx sgemm TT 8×64×32
/// 1.13×, 8×128×64 1.08×, 12×48×40 1.07×, dgemm 1.01–1.02×, haswell level; and then the last
/// columns under a mask on skx: sgemm TT 4×64×48 1.17×, 6×64×64 1.15×, dgemm 1.05–1.07×.
///
/// # Safety
/// As [`body`], with `m` rows, C's rows `args.rs_c` apart and its columns adjacent; AVX and
/// FMA compiled in.
#[inline(always)]
unsafe fn write_rows<
    V0: ColumnsToRows,
    V1: ColumnsToRows<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
    m: usize,
    acc0: [V0; N],
    acc1: [V1; N],
    scalars: (bool, bool),
) where
    V0::Elem: Scalar,
{
    // Both vectors' rows are 256-bit registers of the same element.
    let block = V0::Row::LANES;
    let last = (VECS - 1) * V0::LANES;
    // The columns that `blocks_to_rows` leaves, if any.
    let whole = if masked_rows::<V0, V1>() {
        N
    } else {
        N / block * block
    };
    // SAFETY: `blocks_to_rows` has this function's contract. The stack tile holds ld·N ≤
    // 32·12 elements, and only its columns from `whole` are written and read; C is read and
    // written in rows < m, columns whole..N: memory the contract makes valid.
    unsafe {
        // The four (alpha = 1?, beta = 0?) cases as instances of their own, with no branch
        // per row: 2–4 % faster on sgemm TT 8×64×32 and dgemm TT 4×64×32 (session 34) than
        // with the flags tested at each row.
        match scalars {
            (true, true) => blocks_to_rows::<V0, V1, VECS, N, true, true>(args, m, &acc0, &acc1),
            (true, false) => blocks_to_rows::<V0, V1, VECS, N, true, false>(args, m, &acc0, &acc1),
            (false, true) => blocks_to_rows::<V0, V1, VECS, N, false, true>(args, m, &acc0, &acc1),
            (false, false) => {
                blocks_to_rows::<V0, V1, VECS, N, false, false>(args, m, &acc0, &acc1)
            }
        }
        if whole == N {
            return;
        }
        let row = |i: usize| args.c.offset(i as isize * args.rs_c);
        let (alpha, beta) = (args.alpha, args.beta);
        let ld = last + V1::LANES;
        let mut tile = MaybeUninit::<[V0::Elem; 2 * 16 * MAX_NR]>::uninit();
        let tile = tile.as_mut_ptr().cast::<V0::Elem>();
        store_tile::<V0, V1, VECS, N>(tile, ld, &acc0, &acc1, whole);
        // The alpha/beta cases as loops of their own.
        match scalars {
            (true, true) => {
                for i in 0..m {
                    for j in whole..N {
                        *row(i).add(j) = *tile.add(j * ld + i);
                    }
                }
            }
            (false, true) => {
                for i in 0..m {
                    for j in whole..N {
                        *row(i).add(j) = alpha * *tile.add(j * ld + i);
                    }
                }
            }
            _ => {
                for i in 0..m {
                    for j in whole..N {
                        let p = row(i).add(j);
                        *p = alpha * *tile.add(j * ld + i) + beta * *p;
                    }
                }
            }
        }
    }
}

/// The blocks of columns of [`write_rows`], with alpha = 1 (`ALPHA_ONE`) and beta = 0
/// (`BETA_ZERO`) constants: the whole ones, and the last, partial one too where
/// [`masked_rows`].
///
/// # Safety
/// As [`write_rows`].
#[inline(always)]
unsafe fn blocks_to_rows<
    V0: ColumnsToRows,
    V1: ColumnsToRows<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
    const ALPHA_ONE: bool,
    const BETA_ZERO: bool,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
    m: usize,
    acc0: &[V0; N],
    acc1: &[V1; N],
) where
    V0::Elem: Scalar,
{
    let block = V0::Row::LANES;
    // SAFETY: as in `write_rows`: accumulator columns below N, C's rows below m and columns
    // below N.
    unsafe {
        let whole = N / block * block;
        // The whole blocks (at most 3: MAX_NR = 12 columns, blocks of 4 or 8) written out, not
        // looped: as a loop (`step_by`, or over [0, 1, 2]) it stayed rolled, so the
        // accumulators were indexed at run time and went through the stack after every k
        // loop, whichever epilogue followed (`objdump`: the f64 kernel's frame realigned to
        // 64 bytes, and dgemm 32³ and 48³ 1.2 % slower).
        const { assert!(MAX_NR <= 3 * 4) };
        if block <= N {
            block_to_rows::<V0, V1, VECS, ALPHA_ONE, BETA_ZERO, false>(
                args, m, acc0, acc1, 0, block,
            );
        }
        if 2 * block <= N {
            block_to_rows::<V0, V1, VECS, ALPHA_ONE, BETA_ZERO, false>(
                args,
                m,
                &acc0[block..],
                &acc1[block..],
                block,
                block,
            );
        }
        if 3 * block <= N {
            block_to_rows::<V0, V1, VECS, ALPHA_ONE, BETA_ZERO, false>(
                args,
                m,
                &acc0[2 * block..],
                &acc1[2 * block..],
                2 * block,
                block,
            );
        }
        if whole < N && masked_rows::<V0, V1>() {
            // The last, partial block: `columns_to_rows` repeats column N − 1 past the
            // slices' ends, and the rows are stored under a mask.
            block_to_rows::<V0, V1, VECS, ALPHA_ONE, BETA_ZERO, true>(
                args,
                m,
                &acc0[whole..],
                &acc1[whole..],
                whole,
                N - whole,
            );
        }
    }
}

/// Whether both vector types write a partial block of columns by rows under a mask
/// (`ColumnsToRows::MASKED_ROWS`).
#[inline(always)]
fn masked_rows<V0: ColumnsToRows, V1: ColumnsToRows>() -> bool {
    V0::MASKED_ROWS && V1::MASKED_ROWS
}

/// One block of columns of [`blocks_to_rows`]: `cols0` and `cols1` (a block's worth each),
/// C's columns from `first_col`, the first `width` of them (under a mask when `MASKED`).
///
/// # Safety
/// As [`write_rows`], with `first_col + width ≤ N`.
#[inline(always)]
unsafe fn block_to_rows<
    V0: ColumnsToRows,
    V1: ColumnsToRows<Elem = V0::Elem>,
    const VECS: usize,
    const ALPHA_ONE: bool,
    const BETA_ZERO: bool,
    const MASKED: bool,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
    m: usize,
    cols0: &[V0],
    cols1: &[V1],
    first_col: usize,
    width: usize,
) where
    V0::Elem: Scalar,
{
    let last = (VECS - 1) * V0::LANES;
    // SAFETY: the caller's; rows below m, columns first_col..first_col + width.
    unsafe {
        let row = |i: usize| args.c.offset(i as isize * args.rs_c).add(first_col);
        // Room for the widest vector's rows (16 f32).
        let mut rows = [V0::Row::zero(); 16];
        if VECS == 2 {
            let (alpha, beta) = (V0::Row::splat(args.alpha), V0::Row::splat(args.beta));
            let mask = V0::Row::mask(width);
            V0::columns_to_rows(cols0, &mut rows);
            for (r, &x) in rows.iter().enumerate().take(V0::LANES) {
                update_row::<_, ALPHA_ONE, BETA_ZERO, MASKED>(row(r), x, alpha, beta, mask);
            }
        }
        let mut rows = [V1::Row::zero(); 16];
        let (alpha, beta) = (V1::Row::splat(args.alpha), V1::Row::splat(args.beta));
        let mask = V1::Row::mask(width);
        V1::columns_to_rows(cols1, &mut rows);
        // A loop of constant length, so that it unrolls and the rows stay in registers.
        for (r, &x) in rows.iter().enumerate().take(V1::LANES) {
            if last + r < m {
                update_row::<_, ALPHA_ONE, BETA_ZERO, MASKED>(row(last + r), x, alpha, beta, mask);
            }
        }
    }
}

/// One row of C at `p` := alpha·x + beta·(the row), with alpha = 1 (`ALPHA_ONE`) taken
/// without arithmetic and beta = 0 (`BETA_ZERO`) without reading C; only `mask`'s lanes
/// when `MASKED`.
///
/// # Safety
/// `p` readable and writable for one `R` (its masked lanes when `MASKED`); `R`'s features
/// compiled in.
#[inline(always)]
unsafe fn update_row<R: Simd, const ALPHA_ONE: bool, const BETA_ZERO: bool, const MASKED: bool>(
    p: *mut R::Elem,
    x: R,
    alpha: R,
    beta: R,
    mask: R::Mask,
) {
    // SAFETY: the caller's.
    unsafe {
        let x = if ALPHA_ONE { x } else { R::mul(alpha, x) };
        let y = if BETA_ZERO {
            x
        } else if MASKED {
            R::fma(beta, R::load_masked(p, mask), x)
        } else {
            R::fma(beta, R::load(p), x)
        };
        if MASKED {
            R::store_masked(p, mask, y)
        } else {
            R::store(p, y)
        }
    }
}

/// The k loop of [`body`]: the accumulators of A·B over the tile's N columns (the first
/// vector's, used only when VECS = 2, and the last vector's), B stepping `rs_b` per k (a
/// constant where the caller passes one).
///
/// A tile of fewer than four accumulators (one or two columns of one vector, or one column
/// of two) would wait on the FMA latency every k step: each accumulator is one dependent
/// chain. Such tiles run [`CHAINS`] / (N·VECS) k steps at a time into as many sets of
/// accumulators, added at the end.
///
/// # Safety
/// As [`body`]; `mask` covers the last vector's rows, `b_offsets[j] = j·cs_b`.
#[inline(always)]
unsafe fn k_loop<
    V0: Simd,
    V1: Simd<Elem = V0::Elem>,
    const VECS: usize,
    const N: usize,
    const FULL: bool,
    const K_UNROLL: usize,
>(
    args: &SupUkrArgs<V0::Elem, V0::Elem>,
    rs_b: isize,
    mask: V1::Mask,
    b_offsets: &[isize; N],
) -> ([V0; N], [V1; N])
where
    V0::Elem: Scalar,
{
    const { assert!(K_UNROLL >= 1, "K_UNROLL ≥ 1") };
    // SAFETY: the caller's: the first vector's rows are all in the tile, the last vector's
    // loads are masked to its rows (or exactly its rows when FULL), broadcasts stay in B's N
    // columns and k rows; the caller provides the vectors' target features.
    unsafe {
        let mut acc0 = [V0::zero(); N];
        let mut acc1 = [V1::zero(); N];
        let (mut a, mut b) = (args.a, args.b);
        let sets = CHAINS.div_ceil(N * VECS).min(CHAINS);
        if sets == 1 {
            for _ in 0..args.k / K_UNROLL {
                for _ in 0..K_UNROLL {
                    k_step::<V0, V1, VECS, N, FULL>(a, b, mask, b_offsets, &mut acc0, &mut acc1);
                    a = a.offset(args.cs_a);
                    b = b.offset(rs_b);
                }
            }
            for _ in 0..args.k % K_UNROLL {
                k_step::<V0, V1, VECS, N, FULL>(a, b, mask, b_offsets, &mut acc0, &mut acc1);
                a = a.offset(args.cs_a);
                b = b.offset(rs_b);
            }
            return (acc0, acc1);
        }
        let mut more0 = [[V0::zero(); N]; CHAINS - 1];
        let mut more1 = [[V1::zero(); N]; CHAINS - 1];
        let mut left = args.k;
        while left >= sets {
            k_step::<V0, V1, VECS, N, FULL>(a, b, mask, b_offsets, &mut acc0, &mut acc1);
            for s in 1..sets {
                let (a, b) = (
                    a.offset(s as isize * args.cs_a),
                    b.offset(s as isize * rs_b),
                );
                k_step::<V0, V1, VECS, N, FULL>(
                    a,
                    b,
                    mask,
                    b_offsets,
                    &mut more0[s - 1],
                    &mut more1[s - 1],
                );
            }
            a = a.offset(sets as isize * args.cs_a);
            b = b.offset(sets as isize * rs_b);
            left -= sets;
        }
        for _ in 0..left {
            k_step::<V0, V1, VECS, N, FULL>(a, b, mask, b_offsets, &mut acc0, &mut acc1);
            a = a.offset(args.cs_a);
            b = b.offset(rs_b);
        }
        for s in 1..sets {
            for j in 0..N {
                if VECS == 2 {
                    acc0[j] = V0::add(acc0[j], more0[s - 1][j]);
                }
                acc1[j] = V1::add(acc1[j], more1[s - 1][j]);
            }
        }
        (acc0, acc1)
    }
}
