//! sgemm tall-A microkernel for AVX-512 (skx): one m×n tile (m ≤ 16, n ≤ 24) of one k block of
//! C := alpha·A·B + beta·C, A read in place, B packed k×W, W = 2, 4, 8, 16 or 24 by n
//! (`frame/l3/tall.rs`).
//!
//! * dtype: f32; MR×NT = 16×24 (one zmm of rows: each A column step is one 64-byte line).
//! * CPU features: AVX-512 F.
//! * A: unit row stride, column stride cs_a, prefetched at `a_prefetch` column by column.
//!   C: prefers columns (masked vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: W ≤ 24 accumulators, 1 A vector (25 of the 32 zmm); per k step 1 load,
//!   W broadcasts folded into W FMAs, 1 prefetch.
//! * The body and its reasoning: `kernels/x86/tall_real.rs`.

use crate::kernels::TallUkrArgs;
use crate::kernels::x86::simd::Zmm32;
use crate::kernels::x86::tall_real::tall_real_up_to;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TallUkr`] contract for tiles up to 16×24, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn tall_f32_16x24(args: &TallUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { tall_real_up_to::<Zmm32, 24>(args) }
}
