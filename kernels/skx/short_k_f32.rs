//! sgemm short-k kernel for AVX-512 (skx): C (m×n, column-stored) := alpha·A·B + beta·C for
//! k ≤ 16 (`MAX_SHORT_K`). For products a few k steps deep (`frame/l3/short_k.rs`).
//!
//! * dtype: f32; CPU features: AVX-512 F and VL.
//! * A strip of 32 rows (two vectors, 2·k registers) for k ≤ 8, 16 rows (one vector, k
//!   registers) for k = 9–16, held in registers, B's columns streaming past it 4 at a time;
//!   the strip's last vector masked.
//! * C of up to 8 rows in 256-bit vectors (masked by AVX-512 VL): on Zen 4 they take
//!   half the time of a 512-bit FMA or store.
//! * A's columns read in place where contiguous, its strip gathered onto the stack where not.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/short_k_real.rs`.

use crate::kernels::ShortKUkrArgs;
use crate::kernels::x86::short_k_real::short_k_real;
use crate::kernels::x86::simd::{Vl, Ymm32, Zmm32};

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::ShortKUkr`] contract, on a CPU with AVX-512 F and VL.
#[target_feature(enable = "avx512f,avx512vl")]
pub unsafe fn short_k_f32(args: &ShortKUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the bodies' target features.
    unsafe {
        if args.m <= 8 {
            short_k_real::<Vl<Ymm32>, 16>(args)
        } else {
            short_k_real::<Zmm32, 16>(args)
        }
    }
}
