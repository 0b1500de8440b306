//! dgemm sup microkernel for AVX-512 (skx): one m×n tile (m ≤ 16, n ≤ 12) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f64; MR×NR = 16×12; edges handled here: rows by AVX-512 masks (masked-off
//!   lanes are neither read nor written), and one instance of the body per column count
//!   1..=12 and per number of 8-row vectors (1 or 2), so an edge tile computes only its own
//!   columns and vectors.
//! * CPU features: AVX-512 F.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast).
//! * C storage: prefers columns (unit row stride: masked vector loads/stores); other
//!   strides go through a stack tile.
//! * beta == 0: C is written without being read.
//! * Register map: as `gemm_f64_16x12` (24 accumulators, 2 A vectors, broadcasts from B).

use std::arch::x86_64::*;

use crate::kernels::SupUkrArgs;

const MR: usize = 16;
const NR: usize = 12;
const LANES: usize = 8;

/// Lane mask for rows `first..first+8` of a tile with `m` rows.
fn row_mask(m: usize, first: usize) -> __mmask8 {
    let rows = m.saturating_sub(first).min(LANES);
    ((1u32 << rows) - 1) as __mmask8
}

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with MR×NR = 16×12, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn sup_f64_16x12(args: &SupUkrArgs<f64, f64>) {
    // One instance per column count and per number of row vectors (one when m <= 8): an
    // edge tile computes only its own columns and rows.
    // SAFETY: passed on; each instance computes exactly n = N columns and m <= 8·V rows.
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
/// As [`sup_f64_16x12`], with `args.m <= 8·V`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn by_columns<const V: usize>(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: passed on, with N = args.n.
    unsafe {
        match args.n {
            12 => body::<12, V>(args),
            11 => body::<11, V>(args),
            10 => body::<10, V>(args),
            9 => body::<9, V>(args),
            8 => body::<8, V>(args),
            7 => body::<7, V>(args),
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
/// As [`sup_f64_16x12`], with `args.n == N` and `args.m <= 8·V`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn body<const N: usize, const V: usize>(args: &SupUkrArgs<f64, f64>) {
    debug_assert!(args.n == N && N <= NR && args.m <= LANES * V && V <= 2);
    let m = args.m;
    let masks: [__mmask8; V] = std::array::from_fn(|h| row_mask(m, LANES * h));
    let b_offsets: [isize; N] = std::array::from_fn(|j| j as isize * args.cs_b);
    let mut acc = [[_mm512_setzero_pd(); V]; N];
    // SAFETY: masked loads touch only rows below m of A's columns p < k; B reads stay in
    // columns below N = n and rows below k; C is touched only at rows below m (masks or the
    // scalar loop) and columns below n. That is all memory the contract makes valid.
    unsafe {
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let av: [__m512d; V] =
                std::array::from_fn(|h| _mm512_maskz_loadu_pd(masks[h], a.add(LANES * h)));
            for (acc_j, &off) in acc.iter_mut().zip(&b_offsets) {
                let bj = _mm512_set1_pd(*b.offset(off));
                for (acc_jh, &ah) in acc_j.iter_mut().zip(&av) {
                    *acc_jh = _mm512_fmadd_pd(ah, bj, *acc_jh);
                }
            }
            a = a.offset(args.cs_a);
            b = b.offset(args.rs_b);
        }

        let alpha = _mm512_set1_pd(args.alpha);
        let beta = _mm512_set1_pd(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(LANES * h);
                    let ab = _mm512_mul_pd(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm512_fmadd_pd(beta, _mm512_maskz_loadu_pd(masks[h], p), ab)
                    };
                    _mm512_mask_storeu_pd(p, masks[h], out);
                }
            }
        } else {
            let mut tile = [0.0f64; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    _mm512_storeu_pd(
                        tile.as_mut_ptr().add(j * MR + LANES * h),
                        _mm512_mul_pd(alpha, v),
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
