//! sgemm sup microkernel for AVX2 + FMA (haswell): one m×n tile (m ≤ 16, n ≤ 6) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f32; MR×NR = 16×6; edges handled by the body (masked rows, one instance per
//!   column count and number of row vectors).
//! * CPU features: AVX2, FMA.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast). C:
//!   prefers columns (unit row stride: masked vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * k unrolled 4× where B's rows are adjacent (one step otherwise).
//! * The body and its reasoning: `kernels/x86/sup_real.rs`.

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::Ymm32;
use crate::kernels::x86::sup_real::sup_real;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 16×6, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn sup_f32_16x6(args: &SupUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real::<Ymm32, Ymm32, 6, 4>(args) }
}
