//! sgemv-style kernel for AVX-512 (skx): y := alpha·op(A)·x + beta·y, the degenerate gemm
//! shapes (C with one column or one row).
//!
//! * dtype: f32; CPU features: AVX-512 F.
//! * A column-stored: axpy form by blocks of 8 columns; A row-stored: dot form, 8 rows at a
//!   time; otherwise the reference kernel. beta == 0: y is not read.
//! * The body and its reasoning: `kernels/x86/gemv_real.rs`.

use crate::kernels::GemvUkrArgs;
use crate::kernels::x86::gemv_real::{gemv_columns_real, gemv_real};
use crate::kernels::x86::simd::Zmm32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemvUkr`] contract, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemv_f32(args: &GemvUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemv_real::<Zmm32>(args) }
}

/// The columns kernel: up to [`crate::kernels::GEMV_COLUMNS_MAX`] columns of y at once, each
/// vector of a column-stored A used for all of them (`gemv_real.rs`, `gemv_columns_real`).
///
/// # Safety
/// The [`crate::kernels::GemvColumnsUkr`] contract, on a CPU with this kernel's features.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemv_columns_f32(args: &GemvUkrArgs<f32, f32>, n: usize, cs_x: isize, cs_y: isize) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemv_columns_real::<Zmm32>(args, n, cs_x, cs_y) }
}
