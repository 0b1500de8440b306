//! sgemm microkernel for AVX-512 (skx): C := alpha·Ap·Bp + beta·C on a 32×12 tile.
//!
//! * dtype: f32; MR×NR = 32×12.
//! * CPU features: AVX-512 F.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 24 accumulators (2 zmm × 12 columns), 2 A vectors, B broadcast from
//!   memory into the FMAs; per k step 2 loads, 12 broadcasts, 24 FMAs; one k step per trip
//!   (unrolling is measured only on AVX2: `kernels/x86/gemm_real.rs`).
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_real.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_real::gemm_real;
use crate::kernels::x86::simd::Zmm32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×12 tiles, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_f32_32x12(args: &GemmUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_real::<Zmm32, f32, 2, 12, 1>(args) }
}
