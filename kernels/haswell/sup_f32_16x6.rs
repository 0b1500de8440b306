//! sgemm sup microkernel for AVX2 + FMA (haswell): one m×n tile (m ≤ 16, n ≤ 6) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f32; MR×NR = 16×6; edges handled here: rows by `vmaskmov` loads/stores
//!   (masked-off lanes are neither read nor written, and do not fault), columns past n by
//!   reading column n−1 of B again and not storing the result.
//! * CPU features: AVX2, FMA.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast).
//! * C storage: prefers columns (unit row stride: masked vector loads/stores); other
//!   strides go through a stack tile.
//! * beta == 0: C is written without being read.
//! * Register map: as `gemm_f32_16x6` (12 accumulators, 2 A vectors, broadcasts from B).

use std::arch::x86_64::*;

use crate::kernels::SupUkrArgs;

const MR: usize = 16;
const NR: usize = 6;
const LANES: usize = 8;

/// Lane mask (all ones = active) for rows `first..first+8` of a tile with `m` rows.
#[target_feature(enable = "avx2")]
fn row_mask(m: usize, first: usize) -> __m256i {
    let rows = m.saturating_sub(first).min(LANES) as i32;
    _mm256_cmpgt_epi32(
        _mm256_set1_epi32(rows),
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
    )
}

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with MR×NR = 16×6, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn sup_f32_16x6(args: &SupUkrArgs<f32, f32>) {
    let (m, n) = (args.m, args.n);
    let masks = [row_mask(m, 0), row_mask(m, LANES)];
    // Column j of B, clamped to the last real column so nothing past n is read.
    let b_offsets: [isize; NR] = std::array::from_fn(|j| j.min(n - 1) as isize * args.cs_b);
    let mut acc = [[_mm256_setzero_ps(); 2]; NR];
    // SAFETY: masked loads touch only rows below m of A's columns p < k; B reads stay in
    // columns below n and rows below k; C is touched only at rows below m (masks or the
    // scalar loop) and columns below n. That is all memory the contract makes valid.
    unsafe {
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let a0 = _mm256_maskload_ps(a, masks[0]);
            let a1 = _mm256_maskload_ps(a.add(LANES), masks[1]);
            for (acc_j, &off) in acc.iter_mut().zip(&b_offsets) {
                let bj = _mm256_set1_ps(*b.offset(off));
                acc_j[0] = _mm256_fmadd_ps(a0, bj, acc_j[0]);
                acc_j[1] = _mm256_fmadd_ps(a1, bj, acc_j[1]);
            }
            a = a.offset(args.cs_a);
            b = b.offset(args.rs_b);
        }

        let alpha = _mm256_set1_ps(args.alpha);
        let beta = _mm256_set1_ps(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate().take(n) {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(LANES * h);
                    let ab = _mm256_mul_ps(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm256_fmadd_ps(beta, _mm256_maskload_ps(p, masks[h]), ab)
                    };
                    _mm256_maskstore_ps(p, masks[h], out);
                }
            }
        } else {
            let mut tile = [0.0f32; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    _mm256_storeu_ps(
                        tile.as_mut_ptr().add(j * MR + LANES * h),
                        _mm256_mul_ps(alpha, v),
                    );
                }
            }
            for j in 0..n {
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
