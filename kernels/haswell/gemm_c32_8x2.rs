//! cgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on an 8×2 tile of
//! single-precision complex numbers.
//!
//! * dtype: c32 (interleaved re, im); MR×NR = 8×2 complex.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 8 accumulators (A·b_re and A·b_im, 2 ymm × 2 columns each), 2 A vectors,
//!   2 broadcasts; per k step 2 loads, 4 broadcasts, 8 FMAs. NR is 2, not 3: with 3, the 12
//!   accumulators, 2 A vectors and 2 broadcasts need all 16 ymm registers, the compiler
//!   spilled an accumulator through the stack inside the k loop, and cgemm ran at 27 GFLOPS
//!   (24 % of peak).
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_complex.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_complex::gemm_complex;
use crate::kernels::x86::simd::Ymm32;
use crate::types::c32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 8×2 tiles, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_c32_8x2(args: &GemmUkrArgs<c32, c32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_complex::<Ymm32, 2, 2>(args) }
}
