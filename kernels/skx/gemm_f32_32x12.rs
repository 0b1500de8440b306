//! sgemm microkernel for AVX-512 (skx): C := alpha·Ap·Bp + beta·C on a 32×12 tile.
//!
//! * dtype: f32; MR×NR = 32×12.
//! * CPU features: AVX-512 F (the `skx` configuration requires F, DQ, BW, VL).
//! * Packed layouts: the contract in `kernels/mod.rs` (A: 32-row column panels, B: 12-column
//!   row panels).
//! * C storage: prefers columns (unit row stride): each tile column is two 16-lane vector
//!   loads/stores. Any other strides go through a stack tile and scalar writes.
//! * beta == 0: C is written without being read.
//! * Register map: 24 accumulators zmm(j, h) = C[16h..16h+16, j] for j < 12, h < 2; two zmm
//!   for the A column; B elements are broadcast from memory straight into the FMAs.
//!   Per k step: 2 loads, 12 broadcasts, 24 FMAs (12 cycles on two FMA ports).
//! * Prefetch: the C tile (one line per column, start and end) before the k loop; A and B
//!   are streamed sequentially and left to the hardware prefetcher.

use std::arch::x86_64::*;

use crate::kernels::GemmUkrArgs;

const MR: usize = 32;
const NR: usize = 12;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×12 tiles, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_f32_32x12(args: &GemmUkrArgs<f32, f32>) {
    // SAFETY: the contract gives 32·k readable floats at `a`, k·12 at `b`, and a writable
    // 32×12 tile at `c` with strides rs_c, cs_c; every access below stays inside those.
    unsafe {
        if args.rs_c == 1 {
            for j in 0..NR {
                let col = args.c.offset(j as isize * args.cs_c);
                _mm_prefetch::<_MM_HINT_T0>(col.cast());
                _mm_prefetch::<_MM_HINT_T0>(col.add(MR - 1).cast());
            }
        }
        let mut acc = [[_mm512_setzero_ps(); 2]; NR];
        let (mut a, mut b) = (args.a, args.b);
        for _ in 0..args.k {
            let a0 = _mm512_loadu_ps(a);
            let a1 = _mm512_loadu_ps(a.add(16));
            for (j, acc_j) in acc.iter_mut().enumerate() {
                let bj = _mm512_set1_ps(*b.add(j));
                acc_j[0] = _mm512_fmadd_ps(a0, bj, acc_j[0]);
                acc_j[1] = _mm512_fmadd_ps(a1, bj, acc_j[1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }

        let alpha = _mm512_set1_ps(args.alpha);
        let beta = _mm512_set1_ps(args.beta);
        let beta_is_zero = args.beta == 0.0;
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = args.c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(16 * h);
                    let ab = _mm512_mul_ps(alpha, v);
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm512_fmadd_ps(beta, _mm512_loadu_ps(p), ab)
                    };
                    _mm512_storeu_ps(p, out);
                }
            }
        } else {
            let mut tile = [0.0f32; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    _mm512_storeu_ps(
                        tile.as_mut_ptr().add(j * MR + 16 * h),
                        _mm512_mul_ps(alpha, v),
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
