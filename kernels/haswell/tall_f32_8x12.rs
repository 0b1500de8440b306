//! sgemm tall-A microkernel for AVX2 (haswell): one m×n tile (m ≤ 8, n ≤ 12) of one k block
//! of C := alpha·A·B + beta·C, A read in place, B packed k×W, W = 2, 4, 8 or 12 by n
//! (`frame/l3/tall.rs`).
//!
//! * dtype: f32; MR×NT = 8×12 (one ymm of rows: each A column step is half a 64-byte
//!   line; the driver's prefetch aims at the next tile's last row, the next line).
//! * CPU features: AVX2 and FMA.
//! * A: unit row stride, column stride cs_a, prefetched at `a_prefetch` column by column.
//!   C: prefers columns (masked vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: W ≤ 12 accumulators, 1 A vector and the broadcast (AVX2 FMAs take no
//!   memory broadcast) in the 16 ymm; per k step 1 load, W broadcasts, W FMAs, 1 prefetch.
//! * The body and its reasoning: `kernels/x86/tall_real.rs`.

use crate::kernels::TallUkrArgs;
use crate::kernels::x86::simd::Ymm32;
use crate::kernels::x86::tall_real::tall_real_up_to;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TallUkr`] contract for tiles up to 8×12, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn tall_f32_8x12(args: &TallUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { tall_real_up_to::<Ymm32, 12>(args) }
}
