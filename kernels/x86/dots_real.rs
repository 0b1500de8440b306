//! The dots kernel body for real dtypes, written once over [`DotSimd`] and instantiated by the
//! kernel files (`kernels/skx/dots_f32.rs`, …) inside their `#[target_feature]` shells. The
//! contract is `DotsUkr` in `kernels/mod.rs`: C (m×n, m ≤ 8) := alpha·A·B + beta·C with B's
//! columns contiguous along k.
//!
//! Every element of C is the dot product of a row of A and a column of B, so the vectors run
//! along k: a k step loads LANES values of k from each of the R rows of A and from each of G
//! columns of B, and adds their R·G products into R·G accumulators, one per element of that
//! R×G block of C. Every lane of every FMA is useful, where a tile kernel's column vectors of
//! a short C are mostly masked off. A's rows are loaded again for each block of G columns,
//! from L1. The block is as large as the register file allows: R·G accumulators, the shorter
//! side's registers held and one register of the longer side streaming past them
//! ([`k_step`]). 32 registers: 1×8, 2×8, 3×8, 4×4, 5×4, 6×4, 7×3, 8×2 (4×6 was 8–20 % slower
//! than 4×4; dgemm 8×3 ran at under half the speed of 8×2). 16 registers: 1×8, 2×6, 3×3, 4×2,
//! and more than four rows in two passes over B (rows split evenly), by chunks of
//! [`TWO_PASS_CHUNK_BYTES`] of B's columns so the second pass reads them from L2. The columns left over
//! (fewer than G) are one block of their own width.
//!
//! **The epilogue** weighs as much as the k loop when k is short (k = 32 f32 is four 256-bit
//! steps). The accumulators are summed LANES at a time into one register of sums
//! ([`DotSimd::lane_sums`], horizontal adds: 8 f32 sums in 9 instructions, against 6 for each
//! on its own), scaled as one vector, and written to a column-stored C as runs of four rows
//! ([`DotSimd::store_fours`]; against four sums at a time written element by element: sgemm
//! 4×32×32 +23 %, 4×96×96 +4–13 %, docs/Performance.md, session 26), and to a row-stored one
//! (the transposed shape's) as runs of four or two columns where the block allows
//! ([`write_block`]).
//!
//! **A's rows not contiguous** (NN, A column-stored): [`dots_gathered`] gathers them into a
//! stack buffer first, four rows at a time by transposing loads ([`DotSimd::rows_of_four`]).
//! The buffer is aligned to a cache line: on the stack's 8-byte alignment the kernel ran
//! 6–18 % slower on the gathered rows than on the same rows in place (dgemm 4–8×256×256).

use std::mem::MaybeUninit;

use crate::kernels::x86::simd::DotSimd;
use crate::kernels::{DotsUkrArgs, MAX_DOT_GATHER_K, MAX_DOT_ROWS};
use crate::types::{Element, Scalar};

/// The most lanes of a [`DotSimd`] register (its contract), the length of the bodies' arrays
/// of lanes and registers.
const MAX_LANES: usize = 16;

/// The body for A's rows contiguous (`args.cs_a == 1`), dispatching on the row count and
/// the register file. See the module docs.
///
/// # Safety
/// The `DotsUkr` contract with `args.cs_a == 1`, called from a function compiled with `V`'s
/// target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn dots_in_place<V: DotSimd>(args: &DotsUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    debug_assert!(args.m >= 1 && args.m <= MAX_DOT_ROWS && args.cs_a == 1);
    debug_assert!(args.n >= 1 && args.k >= 1);
    if V::REGISTERS < 32 {
        // SAFETY: passed on: each k block is the contract on A's columns and B's rows
        // p0..p0 + kb (p0 < k, kb ≤ k − p0).
        unsafe {
            let block_len = args.k.div_ceil(args.k.div_ceil(SMALL_FILE_K_BLOCK));
            let mut block = DotsUkrArgs { k: 0, ..*args };
            let mut p0 = 0;
            while p0 < args.k {
                block.k = block_len.min(args.k - p0);
                block.a = args.a.add(p0);
                block.b = args.b.add(p0);
                on_small_file::<V>(&block);
                block.beta = V::Elem::one();
                p0 += block.k;
            }
        }
        return;
    }
    // SAFETY: passed on, with R = m.
    unsafe {
        match args.m {
            1 => blocks::<V, 1, 8>(args),
            2 => blocks::<V, 2, 8>(args),
            3 => blocks::<V, 3, 8>(args),
            4 => blocks::<V, 4, 4>(args),
            5 => blocks::<V, 5, 4>(args),
            6 => blocks::<V, 6, 4>(args),
            7 => blocks::<V, 7, 3>(args),
            _ => blocks::<V, 8, 2>(args),
        }
    }
}

/// The longest k block of [`dots_in_place`] on a register file of 16: its blocks of 4×2 at
/// most load A's rows again for every two columns of B, so the rows (at most four, 8 KiB of
/// f32 or 16 KiB of f64) are kept to a share of L1 while B's columns stream past them. The
/// 32-register bodies take k whole (their blocks load A once per four columns or more):
/// against blocks of 512 on a Zen 4 (skx, session 54) sgemm TN 4×4096×4096 1.75×, 16×16×1000
/// 1.11×, dgemm 3×3000×3000 1.34×, 16×16×2048 1.18×. With haswell's kernels forced on the
/// same machine k whole was mixed (dgemm TN 4×200×1000 0.83, 4×16×4000 0.96, sgemm
/// 4×4096×4096 1.55): kept in blocks until measured on its own hardware.
const SMALL_FILE_K_BLOCK: usize = MAX_DOT_GATHER_K;

/// [`dots_in_place`] on a register file of 16, for one k block.
///
/// # Safety
/// As [`dots_in_place`].
#[inline(always)]
unsafe fn on_small_file<V: DotSimd>(args: &DotsUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    // SAFETY: passed on; past four rows, each pass is the contract on its rows of A and
    // C (row `upper` lies inside both, as upper < m) and on a chunk of B's and C's
    // columns j..j + part.n (j < n, part.n ≤ n − j).
    unsafe {
        if args.m <= 4 {
            up_to_four_rows::<V>(args);
        } else {
            // No block of more than four rows fits in 16 registers: two passes over B,
            // a chunk of its columns at a time, so the second pass finds them in L2.
            let upper = args.m.div_ceil(2);
            let column_bytes = args.k * size_of::<V::Elem>();
            let chunk = (TWO_PASS_CHUNK_BYTES / column_bytes).max(1);
            let mut j = 0;
            while j < args.n {
                let part = DotsUkrArgs {
                    n: chunk.min(args.n - j),
                    b: args.b.offset(j as isize * args.cs_b),
                    c: args.c.offset(j as isize * args.cs_c),
                    ..*args
                };
                up_to_four_rows::<V>(&DotsUkrArgs { m: upper, ..part });
                up_to_four_rows::<V>(&DotsUkrArgs {
                    m: args.m - upper,
                    a: args.a.offset(upper as isize * args.rs_a),
                    c: part.c.offset(upper as isize * args.rs_c),
                    ..part
                });
                j += part.n;
            }
        }
    }
}

/// How much of B (bytes of its columns) the two passes of [`dots_in_place`] on 16 registers
/// take at a time: half of a 256 KiB L2. Each pass over all of B let the second read a large
/// B from memory again (sgemm NN 8×4096×4096 on a Zen 3: 1.44–1.50× slower than OpenBLAS,
/// `docs/Performance.md`, "Two passes over B by chunks").
const TWO_PASS_CHUNK_BYTES: usize = 128 << 10;

/// [`dots_in_place`] on a register file of 16, for at most four rows.
///
/// # Safety
/// As [`dots_in_place`], with `args.m <= 4`.
#[inline(always)]
unsafe fn up_to_four_rows<V: DotSimd>(args: &DotsUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    debug_assert!(args.m >= 1 && args.m <= 4);
    // SAFETY: passed on, with R = m.
    unsafe {
        match args.m {
            1 => blocks::<V, 1, 8>(args),
            2 => blocks::<V, 2, 6>(args),
            3 => blocks::<V, 3, 3>(args),
            _ => blocks::<V, 4, 2>(args),
        }
    }
}

/// The row length of the buffer [`dots_gathered`] fills: the longest k and 16 elements more,
/// at least a cache line (the most [`gather_pitch`] asks for).
const GATHER_PITCH: usize = MAX_DOT_GATHER_K + 16;

/// The body for A's rows not contiguous (NN: A column-stored): gathers them into a buffer on
/// the stack, then [`dots_in_place`]. Four rows of a column-stored A go a register of each
/// at a time ([`DotSimd::rows_of_four`]: LANES columns of four elements loaded and transposed);
/// any other A element by element, column after column.
///
/// A kernel shell calls it from a function of its own (`#[inline(never)]`), so that the
/// buffer weighs only on the calls that use it.
///
/// # Safety
/// The `DotsUkr` contract (so `args.k <= MAX_DOT_GATHER_K`), called from a function compiled
/// with `V`'s target features on a CPU that has them.
#[inline(always)]
pub(crate) unsafe fn dots_gathered<V: DotSimd>(args: &DotsUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    let (m, k) = (args.m, args.k);
    debug_assert!((1..=MAX_DOT_ROWS).contains(&m) && (1..=MAX_DOT_GATHER_K).contains(&k));
    let mut rows = MaybeUninit::<Aligned<[[V::Elem; GATHER_PITCH]; MAX_DOT_ROWS]>>::uninit();
    let rows = rows.as_mut_ptr().cast::<V::Elem>();
    let pitch = gather_pitch::<V::Elem>(k);
    debug_assert!(pitch <= GATHER_PITCH);
    // SAFETY: A's reads are its m×k elements; the buffer's writes stay in its m rows' first
    // k elements, all of which are written before `dots_in_place` reads them.
    unsafe {
        let column = |p: usize| args.a.offset(p as isize * args.cs_a);
        // Rows 0..fours by fours, k in registers' widths; what is left element by element.
        let fours = if args.rs_a == 1 { m / 4 * 4 } else { 0 };
        let mut columns = [std::ptr::null(); MAX_LANES];
        for i0 in (0..fours).step_by(4) {
            let mut p = 0;
            while p + V::LANES <= k {
                for (q, at) in columns.iter_mut().enumerate().take(V::LANES) {
                    *at = column(p + q).add(i0);
                }
                let four = V::rows_of_four(&columns[..V::LANES]);
                for (i, row) in four.into_iter().enumerate() {
                    V::store(rows.add((i0 + i) * pitch + p), row);
                }
                p += V::LANES;
            }
            gather_rows::<V::Elem, 4>(args, i0, p, rows, pitch);
        }
        match m - fours {
            0 => {}
            1 => gather_rows::<V::Elem, 1>(args, fours, 0, rows, pitch),
            2 => gather_rows::<V::Elem, 2>(args, fours, 0, rows, pitch),
            3 => gather_rows::<V::Elem, 3>(args, fours, 0, rows, pitch),
            4 => gather_rows::<V::Elem, 4>(args, fours, 0, rows, pitch),
            5 => gather_rows::<V::Elem, 5>(args, fours, 0, rows, pitch),
            6 => gather_rows::<V::Elem, 6>(args, fours, 0, rows, pitch),
            7 => gather_rows::<V::Elem, 7>(args, fours, 0, rows, pitch),
            _ => gather_rows::<V::Elem, 8>(args, fours, 0, rows, pitch),
        }
        dots_in_place::<V>(&DotsUkrArgs {
            a: rows,
            rs_a: pitch as isize,
            cs_a: 1,
            ..*args
        })
    }
}

/// The distance, in elements, between the gathered rows of a k-long A: k rounded up to whole
/// cache lines, and one line more where that would put the rows a multiple of 4 KiB apart.
/// Against the fixed distance of the longest k (528 elements) it had: dgemm TT 128×8×384
/// +7.5 %, 256×8×256 +3 %, 96×8×96 +1.4 % (the rows now lie together in L1).
fn gather_pitch<T>(k: usize) -> usize {
    let line = 64 / size_of::<T>();
    let pitch = k.next_multiple_of(line);
    if (pitch * size_of::<T>()).is_multiple_of(4096) {
        pitch + line
    } else {
        pitch
    }
}

/// A cache-line-aligned buffer (`repr(C)`: the array at offset 0, where the kernel casts to).
#[repr(C, align(64))]
struct Aligned<T>(T);

/// Columns `p0..k` of A's rows `i0..i0 + R` into `rows` (row i at `rows + i·pitch`),
/// element by element, column after column (the elements of a column-stored A's column are
/// adjacent).
///
/// # Safety
/// As [`dots_gathered`], with `i0 + R <= args.m`.
#[inline(always)]
unsafe fn gather_rows<T: Element, const R: usize>(
    args: &DotsUkrArgs<T, T>,
    i0: usize,
    p0: usize,
    rows: *mut T,
    pitch: usize,
) {
    // SAFETY: the caller's: A's m×k elements are readable, the buffer writable.
    unsafe {
        for p in p0..args.k {
            let from = args
                .a
                .offset(i0 as isize * args.rs_a + p as isize * args.cs_a);
            for i in 0..R {
                *rows.add((i0 + i) * pitch + p) = *from.offset(i as isize * args.rs_a);
            }
        }
    }
}

/// All n columns of C's R rows, G columns at a time, then the rest (fewer than G) as one
/// block of its own width.
///
/// # Safety
/// As [`dots_in_place`], with `args.m == R` and `G <= 8`.
#[inline(always)]
unsafe fn blocks<V: DotSimd, const R: usize, const G: usize>(args: &DotsUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    let n = args.n;
    let mut j = 0;
    // SAFETY: each block's columns j..j + N lie below n.
    unsafe {
        while j + G <= n {
            block::<V, R, G>(args, j);
            j += G;
        }
        // The guards are constant: only the widths below G are compiled.
        match n - j {
            1 if G > 1 => block::<V, R, 1>(args, j),
            2 if G > 2 => block::<V, R, 2>(args, j),
            3 if G > 3 => block::<V, R, 3>(args, j),
            4 if G > 4 => block::<V, R, 4>(args, j),
            5 if G > 5 => block::<V, R, 5>(args, j),
            6 if G > 6 => block::<V, R, 6>(args, j),
            7 if G > 7 => block::<V, R, 7>(args, j),
            _ => debug_assert_eq!(n, j),
        }
    }
}

/// C[0..R, j..j + N] from R rows of A and N columns of B. See the module docs.
///
/// # Safety
/// As [`dots_in_place`], with `args.m == R` and `j + N <= args.n`.
// Its own function when unoptimized (build.rs: the dispatchers' frames stay small).
#[cfg_attr(not(oxblis_unoptimized), inline(always))]
#[cfg_attr(oxblis_unoptimized, inline(never))]
unsafe fn block<V: DotSimd, const R: usize, const N: usize>(
    args: &DotsUkrArgs<V::Elem, V::Elem>,
    j: usize,
) where
    V::Elem: Scalar,
{
    let k = args.k;
    // SAFETY: A's loads stay in its R rows' first k elements and B's in its columns j..j + N
    // (masked past k); C's writes are the block's elements; the caller provides the target
    // features.
    unsafe {
        let a: [*const V::Elem; R] = std::array::from_fn(|r| args.a.offset(r as isize * args.rs_a));
        let b: [*const V::Elem; N] =
            std::array::from_fn(|c| args.b.offset((j + c) as isize * args.cs_b));
        let mut acc = [[V::zero(); N]; R];
        let mut p = 0;
        while p + V::LANES <= k {
            k_step(&mut acc, &a, &b, |x| V::load(x.add(p)));
            p += V::LANES;
        }
        if p < k {
            let mask = V::mask(k - p);
            k_step(&mut acc, &a, &b, |x| V::load_masked(x.add(p), mask));
        }
        write_block::<V, R, N>(args, j, &acc);
    }
}

/// One step along k: the R·N products of a register of each of A's R rows and B's N
/// columns, `load` reading the register from where a row or column starts. The shorter side
/// is held in registers while the longer one streams past it, one register at a time, so
/// that a block needs R·N + min(R, N) + 1 registers (6×4: 29).
///
/// # Safety
/// `load` must be sound on each of `a` and `b`, and the caller provide `V`'s target features.
#[inline(always)]
unsafe fn k_step<V: DotSimd, const R: usize, const N: usize>(
    acc: &mut [[V; N]; R],
    a: &[*const V::Elem; R],
    b: &[*const V::Elem; N],
    load: impl Fn(*const V::Elem) -> V,
) {
    // SAFETY: the caller's.
    unsafe {
        if R <= N {
            let rows: [V; R] = std::array::from_fn(|r| load(a[r]));
            for (c, &b) in b.iter().enumerate() {
                let column = load(b);
                for (acc, &row) in acc.iter_mut().zip(&rows) {
                    acc[c] = V::fma(row, column, acc[c]);
                }
            }
        } else {
            let columns: [V; N] = std::array::from_fn(|c| load(b[c]));
            for (acc, &a) in acc.iter_mut().zip(a) {
                let row = load(a);
                for (acc, &column) in acc.iter_mut().zip(&columns) {
                    *acc = V::fma(row, column, *acc);
                }
            }
        }
    }
}

/// C[0..R, j..j + N] := alpha·(the accumulators' lane sums) + beta·C. The accumulators are
/// summed LANES at a time ([`DotSimd::lane_sums`]) into runs of C's elements, scaled as
/// vectors, and written as whole groups where C's storage allows:
/// * column-stored C: lane q of a run is row q % R of column q / R, and R a multiple of four
///   writes four rows of a column at a time ([`DotSimd::store_fours`]);
/// * row-stored C (the transposed shape: a tall C of a few columns, solved as Cᵀ), for blocks
///   of an even width N and at most 16 elements: lane q is column q % N of row q / N, and
///   four or two columns of a row are written at a time ([`DotSimd::store_pairs`]). With
///   the gather pitch change, against element by element (the 8×2 block): sgemm TN/TT
///   96×8×96 +6–7 %, 256×8×256 +2–3 %, dgemm TN 0–2 %, TT 96×8×96 +3 %, 256×8×256 +11 %
///   (docs/Performance.md, session 29).
///
/// A run short of LANES (the block's last), and any other C, goes element by element.
///
/// # Safety
/// As [`block`].
#[inline(always)]
unsafe fn write_block<V: DotSimd, const R: usize, const N: usize>(
    args: &DotsUkrArgs<V::Elem, V::Elem>,
    j: usize,
    acc: &[[V; N]; R],
) where
    V::Elem: Scalar,
{
    // The lane order is a compile-time constant in each instantiation, so that the runs
    // are gathered from the accumulators' registers: decided at run time, it kept them in
    // memory and cost the whole kernel up to 2.3× (dgemm TN 256×6×256). The second
    // instantiation is only for blocks of an even width (whole pairs or fours) and at most 16
    // elements: for larger ones it took kernels past what LLVM unrolls, the same fall
    // (dgemm TT 200×7×200 53.6 → 22.3 GFLOPS with the 7×3 block, sgemm TN 200×5×200 102 →
    // 44 with 5×4).
    // SAFETY: passed on.
    unsafe {
        if N.is_multiple_of(2) && R * N <= 16 && args.cs_c == 1 && args.rs_c != 1 {
            write_runs::<V, R, N, true>(args, j, acc);
        } else {
            write_runs::<V, R, N, false>(args, j, acc);
        }
    }
}

/// [`write_block`] with lanes along C's rows (`ALONG_ROWS`, for a row-stored C) or down its
/// columns.
///
/// # Safety
/// As [`block`].
#[inline(always)]
unsafe fn write_runs<V: DotSimd, const R: usize, const N: usize, const ALONG_ROWS: bool>(
    args: &DotsUkrArgs<V::Elem, V::Elem>,
    j: usize,
    acc: &[[V; N]; R],
) where
    V::Elem: Scalar,
{
    let beta_is_zero = args.beta.is_zero();
    // The element (r, c) of the block that lane q of the runs holds.
    let element = |q: usize| {
        if ALONG_ROWS {
            (q / N, q % N)
        } else {
            (q % R, q / R)
        }
    };
    // Consecutive lanes that are consecutive elements of C, written as one group.
    let group = if ALONG_ROWS {
        if N.is_multiple_of(4) { 4 } else { 2 }
    } else if R.is_multiple_of(4) && args.rs_c == 1 {
        4
    } else {
        1
    };
    let at = |(r, c): (usize, usize)| {
        args.c
            .wrapping_offset(r as isize * args.rs_c + (j + c) as isize * args.cs_c)
    };
    let mut sums = [V::Elem::zero(); MAX_LANES];
    let mut q0 = 0;
    // SAFETY: the caller's; C's elements are the block's, (r, c) with r < R, c < N. A group
    // starts at a lane that is a multiple of its size, so its elements are one column's
    // consecutive rows (column-stored C, R a multiple of 4) or one row's consecutive columns
    // (row-stored C, N a multiple of the group): contiguous in C.
    unsafe {
        let (alpha, beta) = (V::splat(args.alpha), V::splat(args.beta));
        let mut run = [V::zero(); MAX_LANES];
        while q0 < R * N {
            let lanes = V::LANES.min(R * N - q0);
            for (q, x) in run.iter_mut().enumerate().take(V::LANES) {
                *x = if q < lanes {
                    let (r, c) = element(q0 + q);
                    acc[r][c]
                } else {
                    V::zero()
                };
            }
            let scaled = V::mul(alpha, V::lane_sums(&run[..V::LANES]));
            if group > 1 && lanes == V::LANES {
                let groups = V::LANES / group;
                let mut to = [std::ptr::null_mut(); MAX_LANES / 2];
                let mut from = [std::ptr::null(); MAX_LANES / 2];
                for g in 0..groups {
                    to[g] = at(element(q0 + group * g));
                    from[g] = to[g].cast_const();
                }
                let (to, from) = (&to[..groups], &from[..groups]);
                if group == 4 {
                    let x = if beta_is_zero {
                        scaled
                    } else {
                        V::fma(beta, V::load_fours(from), scaled)
                    };
                    V::store_fours(x, to);
                } else {
                    let x = if beta_is_zero {
                        scaled
                    } else {
                        V::fma(beta, V::load_pairs(from), scaled)
                    };
                    V::store_pairs(x, to);
                }
            } else {
                V::store(sums.as_mut_ptr(), scaled);
                for (q, &x) in sums.iter().enumerate().take(lanes) {
                    let cij = at(element(q0 + q));
                    *cij = if beta_is_zero {
                        x
                    } else {
                        x + args.beta * *cij
                    };
                }
            }
            q0 += V::LANES;
        }
    }
}
