//! bf16 × bf16 → f32 microkernel with AVX512_BF16 (`vdpbf16ps`; Cooper Lake, Sapphire Rapids,
//! Zen 4): C := alpha·Ap·Bp + beta·C on a 32×12 f32 tile. `skx` registers it instead of
//! `gemm_b16_32x12` when the CPU has the BF16 extension.
//!
//! * dtypes: A and B bf16; C, alpha, beta f32. MR×NR = 32×12.
//! * CPU features: AVX-512 F and BF16.
//! * Packed layout: **k groups of 2** (`GemmKernel::with_k_group(2)`): per pair of k values,
//!   A holds 32 rows × 2 bf16 (`a[q·64 + i·2 + r]`), B 12 columns × 2 bf16 (`b[q·24 + j·2 +
//!   r]`); k padded with zeros to even.
//! * `vdpbf16ps` adds, in each f32 lane, the two products of a pair of bf16 (exact in f32) to
//!   the accumulator: twice the multiply-adds of an f32 FMA per instruction. Rounding: each
//!   pair's sum is rounded once to f32 (round to nearest even) before it is added, and the
//!   instruction treats bf16 denormals as zero; both are within f32's error bound for gemm.
//! * Per pair of k: 2 loads of A, 12 four-byte broadcasts of B, 24 `vdpbf16ps`.
//! * C: columns are vector loads/stores when C's row stride is 1, elements otherwise.
//!   beta == 0: C is not read.

use std::arch::x86_64::*;
use std::mem::transmute;

use crate::kernels::GemmUkrArgs;
use crate::types::bf16;

const MR: usize = 32;
const NR: usize = 12;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×12 tiles in the pair-grouped layout above
/// (`args.k` even), on a CPU with AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub unsafe fn gemm_b16dp_32x12(args: &GemmUkrArgs<bf16, bf16>) {
    debug_assert!(args.k.is_multiple_of(2));
    // SAFETY: the contract gives 32·k bf16 at `a`, k·12 at `b` (k even) and a writable 32×12
    // f32 tile at `c` with strides rs_c, cs_c; every access below is inside them. The
    // transmutes reinterpret 512-bit integer vectors as the bf16 vector type of the same size
    // (bit patterns only). The target features are enabled above and present by the
    // caller's promise.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); 2]; NR];
        let (mut a, mut b) = (args.a.cast::<u8>(), args.b.cast::<u8>());
        for _ in 0..args.k / 2 {
            let a0: __m512bh = transmute(_mm512_loadu_si512(a.cast()));
            let a1: __m512bh = transmute(_mm512_loadu_si512(a.add(64).cast()));
            for (j, acc_j) in acc.iter_mut().enumerate() {
                let pair = b.add(4 * j).cast::<i32>().read_unaligned();
                let bj: __m512bh = transmute(_mm512_set1_epi32(pair));
                acc_j[0] = _mm512_dpbf16_ps(acc_j[0], a0, bj);
                acc_j[1] = _mm512_dpbf16_ps(acc_j[1], a1, bj);
            }
            a = a.add(4 * MR);
            b = b.add(4 * NR);
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
            // General strides: through a column-major stack tile, then element by element.
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
