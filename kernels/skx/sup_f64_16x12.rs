//! dgemm sup microkernel for AVX-512 (skx): one m×n tile (m ≤ 16, n ≤ 12) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f64; MR×NR = 16×12; edges handled here: rows by AVX-512 masks (masked-off
//!   lanes are neither read nor written), columns past n by reading column n−1 of B again
//!   and not storing the result.
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
    let (m, n) = (args.m, args.n);
    let masks = [row_mask(m, 0), row_mask(m, LANES)];
    // Column j of B, clamped to the last real column so nothing past n is read.
    let b_offsets: [isize; NR] = std::array::from_fn(|j| j.min(n - 1) as isize * args.cs_b);
    let mut acc = [[_mm512_setzero_pd(); 2]; NR];
    // SAFETY: masked loads touch only rows below m of A's columns p < k; B reads stay in
    // columns below n and rows below k; C is touched only at rows below m (masks or the
    // scalar loop) and columns below n. That is all memory the contract makes valid.
    unsafe {
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let a0 = _mm512_maskz_loadu_pd(masks[0], a);
            let a1 = _mm512_maskz_loadu_pd(masks[1], a.add(LANES));
            for (acc_j, &off) in acc.iter_mut().zip(&b_offsets) {
                let bj = _mm512_set1_pd(*b.offset(off));
                acc_j[0] = _mm512_fmadd_pd(a0, bj, acc_j[0]);
                acc_j[1] = _mm512_fmadd_pd(a1, bj, acc_j[1]);
            }
            a = a.offset(args.cs_a);
            b = b.offset(args.rs_b);
        }

        let alpha = _mm512_set1_pd(args.alpha);
        let beta = _mm512_set1_pd(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate().take(n) {
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
