//! cgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on an 8×3 tile of
//! single-precision complex numbers.
//!
//! * dtype: c32 (interleaved re, im); MR×NR = 8×3 complex.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 12 accumulators (A·b_re and A·b_im, 2 ymm × 3 columns each), 2 A vectors,
//!   1 broadcast register (each broadcast's FMAs follow it); per k step 2 loads, 6
//!   broadcasts, 12 FMAs, the real 8×6 dgemm tile's shape. k unrolled 4×. Until session 45
//!   the tile was 8×2 with one k step per trip: 8 accumulators are just enough to cover the
//!   FMA latency of two pipes, with no slack, and cgemm ran 0.88–0.90 of OpenBLAS on a Zen 3
//!   (`docs/Performance.md`, "Complex tiles of three columns").
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_complex.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_complex::gemm_complex;
use crate::kernels::x86::simd::Ymm32;
use crate::types::c32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 8×3 tiles, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_c32_8x3(args: &GemmUkrArgs<c32, c32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_complex::<Ymm32, 2, 3, 4>(args) }
}
