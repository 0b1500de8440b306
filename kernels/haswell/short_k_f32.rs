//! sgemm short-k kernel for AVX2 + FMA (haswell): C (m×n, column-stored) := alpha·A·B + beta·C for
//! k ≤ 8 (`MAX_SHORT_K`). For products a few k steps deep (`frame/l3/short_k.rs`).
//!
//! * dtype: f32; CPU features: AVX2 and FMA.
//! * A strip of 16 rows (two vectors) for k ≤ 4, 8 rows (one) for k = 5–8, held in
//!   registers (2·k or k ≤ 8 of 16), B's columns streaming past it 4 at a time; the strip's
//!   last vector masked.
//! * A's columns read in place where contiguous, its strip gathered onto the stack where not.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/short_k_real.rs`.

use crate::kernels::ShortKUkrArgs;
use crate::kernels::x86::short_k_real::short_k_real;
use crate::kernels::x86::simd::Ymm32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::ShortKUkr`] contract, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn short_k_f32(args: &ShortKUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { short_k_real::<Ymm32, 8>(args) }
}
