//! cgemm microkernel for AVX-512 (skx): C := alpha·Ap·Bp + beta·C on a 16×6 tile of
//! single-precision complex numbers.
//!
//! * dtype: c32 (interleaved re, im); MR×NR = 16×6 complex.
//! * CPU features: AVX-512 F.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 24 accumulators (A·b_re and A·b_im, 2 zmm × 6 columns each), 2 A
//!   vectors; per k step 2 loads, 12 broadcasts, 24 FMAs.
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_complex.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_complex::gemm_complex;
use crate::kernels::x86::simd::Zmm32;
use crate::types::c32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 16×6 tiles, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_c32_16x6(args: &GemmUkrArgs<c32, c32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_complex::<Zmm32, 2, 6, 1>(args) }
}
