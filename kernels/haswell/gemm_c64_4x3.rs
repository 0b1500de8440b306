//! zgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on a 4×3 tile of
//! double-precision complex numbers.
//!
//! * dtype: c64 (interleaved re, im); MR×NR = 4×3 complex.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 12 accumulators (A·b_re and A·b_im, 2 ymm × 3 columns each), 2 A vectors,
//!   1 broadcast register; per k step 2 loads, 6 broadcasts, 12 FMAs; k unrolled 4×. Three
//!   columns, not two, for the reason `gemm_c32_8x3.rs` gives.
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_complex.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_complex::gemm_complex;
use crate::kernels::x86::simd::Ymm64;
use crate::types::c64;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 4×3 tiles, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_c64_4x3(args: &GemmUkrArgs<c64, c64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_complex::<Ymm64, 2, 3, 4>(args) }
}
