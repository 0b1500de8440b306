//! zgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on a 4×2 tile of
//! double-precision complex numbers.
//!
//! * dtype: c64 (interleaved re, im); MR×NR = 4×2 complex.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 8 accumulators (A·b_re and A·b_im, 2 ymm × 2 columns each), 2 A vectors,
//!   2 broadcasts; per k step 2 loads, 4 broadcasts, 8 FMAs. NR is 2 for the register
//!   budget, as in `gemm_c32_8x2`.
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_complex.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_complex::gemm_complex;
use crate::kernels::x86::simd::Ymm64;
use crate::types::c64;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 4×2 tiles, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_c64_4x2(args: &GemmUkrArgs<c64, c64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_complex::<Ymm64, 2, 2>(args) }
}
