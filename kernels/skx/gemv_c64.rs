//! zgemv-style kernel for AVX-512 (skx): y := alpha·op(A)·x + beta·y, the degenerate gemm
//! shapes (C with one column or one row).
//!
//! * dtype: c64; CPU features: AVX-512 F.
//! * A column-stored: axpy form by blocks of 4 columns; A row-stored: dot form, 4 rows at a
//!   time, with conjugation by sign; otherwise the reference kernel. beta == 0: y is not
//!   read.
//! * The body and its reasoning: `kernels/x86/gemv_complex.rs`.

use crate::kernels::GemvUkrArgs;
use crate::kernels::x86::gemv_complex::gemv_complex;
use crate::kernels::x86::simd::Zmm64;
use crate::types::c64;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemvUkr`] contract, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemv_c64(args: &GemvUkrArgs<c64, c64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemv_complex::<Zmm64>(args) }
}
