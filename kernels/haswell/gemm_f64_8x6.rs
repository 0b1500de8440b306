//! dgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on an 8×6 tile.
//!
//! * dtype: f64; MR×NR = 8×6.
//! * CPU features: AVX2, FMA (the `haswell` configuration requires AVX, AVX2, FMA).
//! * Packed layouts: the contract in `kernels/mod.rs` (A: 8-row column panels, B: 6-column
//!   row panels).
//! * C storage: prefers columns (unit row stride): each tile column is two 4-lane vector
//!   loads/stores. Any other strides go through a stack tile and scalar writes.
//! * beta == 0: C is written without being read.
//! * Register map: 12 accumulators ymm(j, h) = C[4h..4h+4, j] for j < 6, h < 2; two ymm for
//!   the A column; one for the broadcast B element. Per k step: 2 loads, 6 broadcasts,
//!   12 FMAs (6 cycles on two FMA ports).
//! * Prefetch: the C tile (one line per column, start and end) before the k loop; A and B
//!   are streamed sequentially and left to the hardware prefetcher.

use std::arch::x86_64::*;

use crate::kernels::GemmUkrArgs;

const MR: usize = 8;
const NR: usize = 6;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 8×6 tiles, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_f64_8x6(args: &GemmUkrArgs<f64, f64>) {
    // SAFETY: the contract gives 8·k readable doubles at `a`, k·6 at `b`, and a writable
    // 8×6 tile at `c` with strides rs_c, cs_c; every access below stays inside those.
    unsafe {
        if args.rs_c == 1 {
            for j in 0..NR {
                let col = args.c.offset(j as isize * args.cs_c);
                _mm_prefetch::<_MM_HINT_T0>(col.cast());
                _mm_prefetch::<_MM_HINT_T0>(col.add(MR - 1).cast());
            }
        }
        let mut acc = [[_mm256_setzero_pd(); 2]; NR];
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let a0 = _mm256_loadu_pd(a);
            let a1 = _mm256_loadu_pd(a.add(4));
            for (j, acc_j) in acc.iter_mut().enumerate() {
                let bj = _mm256_set1_pd(*b.add(j));
                acc_j[0] = _mm256_fmadd_pd(a0, bj, acc_j[0]);
                acc_j[1] = _mm256_fmadd_pd(a1, bj, acc_j[1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }

        let alpha = _mm256_set1_pd(args.alpha);
        let beta = _mm256_set1_pd(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(4 * h);
                    let ab = _mm256_mul_pd(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm256_fmadd_pd(beta, _mm256_loadu_pd(p), ab)
                    };
                    _mm256_storeu_pd(p, out);
                }
            }
        } else {
            let mut tile = [0.0f64; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    _mm256_storeu_pd(
                        tile.as_mut_ptr().add(j * MR + 4 * h),
                        _mm256_mul_pd(alpha, v),
                    );
                }
            }
            for j in 0..NR {
                for i in 0..MR {
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
