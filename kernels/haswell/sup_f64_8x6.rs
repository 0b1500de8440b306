//! dgemm sup microkernel for AVX2 + FMA (haswell): one m×n tile (m ≤ 8, n ≤ 6) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f64; MR×NR = 8×6; edges handled here: rows by `vmaskmov` loads/stores
//!   (masked-off lanes are neither read nor written, and do not fault), and one instance of
//!   the body per column count 1..=6 and per number of 4-row vectors (1 or 2), so an edge
//!   tile computes only its own columns and vectors.
//! * CPU features: AVX2, FMA.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast).
//! * C storage: prefers columns (unit row stride: masked vector loads/stores); other
//!   strides go through a stack tile.
//! * beta == 0: C is written without being read.
//! * Register map: as `gemm_f64_8x6` (12 accumulators, 2 A vectors, broadcasts from B).

use std::arch::x86_64::*;

use crate::kernels::SupUkrArgs;

const MR: usize = 8;
const NR: usize = 6;
const LANES: usize = 4;

/// Lane mask (all ones = active) for rows `first..first+4` of a tile with `m` rows.
#[target_feature(enable = "avx2")]
fn row_mask(m: usize, first: usize) -> __m256i {
    let rows = m.saturating_sub(first).min(LANES) as i64;
    _mm256_cmpgt_epi64(_mm256_set1_epi64x(rows), _mm256_setr_epi64x(0, 1, 2, 3))
}

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with MR×NR = 8×6, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn sup_f64_8x6(args: &SupUkrArgs<f64, f64>) {
    // One instance per column count and per number of row vectors (one when m <= 4): an
    // edge tile computes only its own columns and rows.
    // SAFETY: passed on; each instance computes exactly n = N columns and m <= 4·V rows.
    unsafe {
        if args.m <= LANES {
            by_columns::<1>(args)
        } else {
            by_columns::<2>(args)
        }
    }
}

/// Dispatches on the column count for `V` row vectors.
///
/// # Safety
/// As [`sup_f64_8x6`], with `args.m <= 4·V`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn by_columns<const V: usize>(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            6 => body::<6, V>(args),
            5 => body::<5, V>(args),
            4 => body::<4, V>(args),
            3 => body::<3, V>(args),
            2 => body::<2, V>(args),
            _ => body::<1, V>(args),
        }
    }
}

/// The kernel for tiles of exactly `N` columns and at most `V` vectors of rows.
///
/// # Safety
/// As [`sup_f64_8x6`], with `args.n == N` and `args.m <= 4·V`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn body<const N: usize, const V: usize>(args: &SupUkrArgs<f64, f64>) {
    debug_assert!(args.n == N && N <= NR && args.m <= LANES * V && V <= 2);
    let m = args.m;
    let masks: [__m256i; V] = std::array::from_fn(|h| row_mask(m, LANES * h));
    let b_offsets: [isize; N] = std::array::from_fn(|j| j as isize * args.cs_b);
    let mut acc = [[_mm256_setzero_pd(); V]; N];
    // SAFETY: masked loads touch only rows below m of A's columns p < k; B reads stay in
    // columns below N = n and rows below k; C is touched only at rows below m (masks or the
    // scalar loop) and columns below n. That is all memory the contract makes valid.
    unsafe {
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let av: [__m256d; V] =
                std::array::from_fn(|h| _mm256_maskload_pd(a.add(LANES * h), masks[h]));
            for (acc_j, &off) in acc.iter_mut().zip(&b_offsets) {
                let bj = _mm256_set1_pd(*b.offset(off));
                for (acc_jh, &ah) in acc_j.iter_mut().zip(&av) {
                    *acc_jh = _mm256_fmadd_pd(ah, bj, *acc_jh);
                }
            }
            a = a.offset(args.cs_a);
            b = b.offset(args.rs_b);
        }

        let alpha = _mm256_set1_pd(args.alpha);
        let beta = _mm256_set1_pd(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(LANES * h);
                    let ab = _mm256_mul_pd(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm256_fmadd_pd(beta, _mm256_maskload_pd(p, masks[h]), ab)
                    };
                    _mm256_maskstore_pd(p, masks[h], out);
                }
            }
        } else {
            let mut tile = [0.0f64; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    _mm256_storeu_pd(
                        tile.as_mut_ptr().add(j * MR + LANES * h),
                        _mm256_mul_pd(alpha, v),
                    );
                }
            }
            for j in 0..N {
                for i in 0..m {
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    let ab = tile[j * MR + i];
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
